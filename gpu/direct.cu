// Direct-summation kernels and their launcher. See direct_gpu.h for the scheme.
//
// Inner loop cost (float, eps > 0): 3 FADD for d, 3 FFMA for r^2, MUFU.RSQ, 3 FMUL, 3 FFMA for
// a, 1 FADD for phi: about 13 FP32 instructions and one rsqrt per pair, the figure DESIGN.md
// section 4 counts. Four i-particles per thread share each shared-memory load of a j-particle.
// With eps > 0 the r^2 > 0 guard is compiled out. The self pair is excluded by index: only the
// few tiles that hold one of the block's own targets (found with __syncthreads_or) run a loop
// that masks the pair's mass, so no -m/eps ever enters a sum (subtracting it afterwards would
// cost float digits when m/eps dominates the potential).
// Sums are flushed from the precision's type into double after every tile, so accuracy does not
// decay with N (a tile holds 128 sources).
#include "gpu/direct_gpu.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "core/softening.hpp"
#include "gpu/block_sums.cuh"
#include "gpu/coincident_pair.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/device_info.h"
#include "gpu/float_pair.hpp"
#include "gpu/j_split.hpp"
#include "gpu/occupancy.cuh"
#include "gpu/split_reduce.cuh"
#include "tree/gravity.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

namespace {

using gpu::ceil_div;
using gpu::JSplit;
using gpu::pair_key;
using gpu::plan_j_split;
using Double4 = Vec4<double>; // 32-byte aligned (CUDA 13 deprecates the unaligned Double4)

struct DirectConfig {
    static constexpr int threads = 128; // j-particles per tile, threads per block
    static_assert(threads % 32 == 0, "whole warps");
};

// Mixed precision: a source's position as a float pair hi + lo (about 48 bits) and its mass in
// hi.w. The difference of two positions is (hi - hi') + (lo - lo'), exact in its leading part, so
// close pairs keep their digits; the rest is float arithmetic. No 64-bit arithmetic or
// conversions in the inner loop (the double-position form was bound by its three conversions).
struct MixedSource {
    float4 hi, lo;
};
static_assert(sizeof(MixedSource) == 32, "two 16-byte loads per source");

// With eps = 0, p2p drops a pair at zero distance; for a pair of distinct particles with mass
// that is an infinite force, which the guarded kernel reports instead of leaving out.
template <class T> __device__ inline bool zero_distance(T dx, T dy, T dz)
{
    return dx * dx + dy * dy + dz * dz == T(0); // as p2p's r^2 with eps2 = 0
}

struct FloatPolicy {
    using Global = float4;
    using Shared = float4;
    using Real = float;
    struct Target {
        float x, y, z;
    };
    static constexpr int targets_per_thread = 4;
    template <int kTargets, int kThreads> using Sums = gpu::BlockSums<kTargets, 4, kThreads>;
    __device__ static Shared to_shared(Global g) { return g; }
    __device__ static Shared zero_shared() { return make_float4(0.f, 0.f, 0.f, 0.f); }
    __device__ static Shared massless(Shared s) { return make_float4(s.x, s.y, s.z, 0.f); }
    __device__ static Target target(Global g) { return {g.x, g.y, g.z}; }
    template <bool kGuard>
    __device__ static Accum<float> interact(Accum<float> a, const Target& t, const Shared& s, float eps2)
    {
        return p2p<kGuard>(a, s.x - t.x, s.y - t.y, s.z - t.z, s.w, eps2);
    }
    __device__ static bool dropped(const Target& t, const Shared& s)
    {
        return s.w != 0.f && zero_distance(s.x - t.x, s.y - t.y, s.z - t.z);
    }
};

struct MixedPolicy {
    using Global = MixedSource;
    using Shared = MixedSource;
    using Real = float;
    struct Target {
        float hx, hy, hz, lx, ly, lz;
    };
    static constexpr int targets_per_thread = 4;
    template <int kTargets, int> using Sums = gpu::RegisterSums<kTargets, 4>;
    __device__ static Shared to_shared(Global g) { return g; }
    __device__ static Shared zero_shared()
    {
        return {make_float4(0.f, 0.f, 0.f, 0.f), make_float4(0.f, 0.f, 0.f, 0.f)};
    }
    __device__ static Shared massless(Shared s) { return {make_float4(s.hi.x, s.hi.y, s.hi.z, 0.f), s.lo}; }
    __device__ static Target target(Global g) { return {g.hi.x, g.hi.y, g.hi.z, g.lo.x, g.lo.y, g.lo.z}; }
    __device__ static float dx(const Target& t, const Shared& s)
    {
        return gpu::pair_difference(s.hi.x, s.lo.x, t.hx, t.lx);
    }
    __device__ static float dy(const Target& t, const Shared& s)
    {
        return gpu::pair_difference(s.hi.y, s.lo.y, t.hy, t.ly);
    }
    __device__ static float dz(const Target& t, const Shared& s)
    {
        return gpu::pair_difference(s.hi.z, s.lo.z, t.hz, t.lz);
    }
    template <bool kGuard>
    __device__ static Accum<float> interact(Accum<float> a, const Target& t, const Shared& s, float eps2)
    {
        return p2p<kGuard>(a, dx(t, s), dy(t, s), dz(t, s), s.hi.w, eps2);
    }
    __device__ static bool dropped(const Target& t, const Shared& s)
    {
        return s.hi.w != 0.f && zero_distance(dx(t, s), dy(t, s), dz(t, s));
    }
};

struct DoublePolicy {
    using Global = Double4;
    using Shared = Double4;
    using Real = double;
    struct Target {
        double x, y, z;
    };
    static constexpr int targets_per_thread = 2;
    template <int kTargets, int> using Sums = gpu::RegisterSums<kTargets, 4>;
    __device__ static Shared to_shared(Global g) { return g; }
    __device__ static Shared zero_shared() { return Double4{0.0, 0.0, 0.0, 0.0}; }
    __device__ static Shared massless(Shared s) { return Double4{s.x, s.y, s.z, 0.0}; }
    __device__ static Target target(Global g) { return {g.x, g.y, g.z}; }
    template <bool kGuard>
    __device__ static Accum<double> interact(Accum<double> a, const Target& t, const Shared& s, double eps2)
    {
        return p2p<kGuard>(a, s.x - t.x, s.y - t.y, s.z - t.z, s.w, eps2);
    }
    __device__ static bool dropped(const Target& t, const Shared& s)
    {
        return s.w != 0.0 && zero_distance(s.x - t.x, s.y - t.y, s.z - t.z);
    }
};

// Block (x, split): targets_per_thread * threads consecutive targets against the sources
// [split * j_chunk, min(num_sources, (split + 1) * j_chunk)). Writes unscaled sums to
// partial[split * num_targets + i]. Tails are padded with zero-mass sources, so every thread
// reaches every barrier. targets == nullptr means target i is source i. With kGuard (eps = 0), a
// target at zero distance from another source with mass (and, by type, a pair softening of 0) stores
// the smallest such (target's source index << 32 | source index) in *coincident (initially all ones).
// kByType: each pair is softened with half_eps2[i] + half_eps2[j] (core/softening.hpp), eps2 unused.
template <class P, bool kGuard, bool kByType>
__global__ void __launch_bounds__(DirectConfig::threads)
    direct_acc_pot_kernel(const typename P::Global* __restrict__ sources, int num_sources,
                          const std::int32_t* __restrict__ targets, int num_targets, typename P::Real eps2,
                          const typename P::Real* __restrict__ half_eps2, int j_chunk, Double4* __restrict__ partial,
                          unsigned long long* __restrict__ coincident)
{
    using Real = typename P::Real;
    constexpr int kThreads = DirectConfig::threads;
    unsigned long long first_coincident = gpu::kNoCoincidentPair;
    constexpr int kPer = P::targets_per_thread;
    __shared__ typename P::Shared tile[kThreads];
    __shared__ Real tile_h[kByType ? kThreads : 1];
    typename P::template Sums<kPer, kThreads> sums;

    typename P::Target xi[kPer];
    Real hi[kPer];
    int self[kPer]; // source index of each target (-1 past the end)
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        const int i = (blockIdx.x * kPer + k) * kThreads + threadIdx.x;
        self[k] = i < num_targets ? (targets ? targets[i] : i) : -1;
        xi[k] = P::target(sources[self[k] < 0 ? 0 : self[k]]);
        hi[k] = kByType ? half_eps2[self[k] < 0 ? 0 : self[k]] : Real(0);
    }
    // The pair's softening: the one eps2, or the sum of the two halves.
    const auto pair_eps2 = [&](int k, int s) { return kByType ? hi[k] + tile_h[s] : eps2; };
    const int j_begin = blockIdx.y * j_chunk;
    const int j_end = min(num_sources, j_begin + j_chunk);
    for (int base = j_begin; base < j_end; base += kThreads) {
        const int j = base + threadIdx.x;
        tile[threadIdx.x] = j < j_end ? P::to_shared(sources[j]) : P::zero_shared();
        if constexpr (kByType) tile_h[threadIdx.x] = j < j_end ? half_eps2[j] : Real(0);
        bool mine = false;
#pragma unroll
        for (int k = 0; k < kPer; ++k) mine |= static_cast<unsigned>(self[k] - base) < static_cast<unsigned>(kThreads);
        const bool tile_has_self = __syncthreads_or(mine); // also the barrier after the tile load
        Accum<typename P::Real> acc[kPer];
        if (tile_has_self) {
            for (int s = 0; s < kThreads; ++s) {
                const typename P::Shared source = tile[s];
#pragma unroll
                for (int k = 0; k < kPer; ++k) {
                    const typename P::Shared other = base + s == self[k] ? P::massless(source) : source;
                    const Real e2 = pair_eps2(k, s);
                    acc[k] = P::template interact<kGuard>(acc[k], xi[k], other, e2);
                    if (kGuard && self[k] >= 0 && e2 == Real(0) && P::dropped(xi[k], other))
                        first_coincident = min(first_coincident, pair_key(self[k], base + s));
                }
            }
        } else {
#pragma unroll 8
            for (int s = 0; s < kThreads; ++s) {
                const typename P::Shared source = tile[s];
#pragma unroll
                for (int k = 0; k < kPer; ++k) {
                    const Real e2 = pair_eps2(k, s);
                    acc[k] = P::template interact<kGuard>(acc[k], xi[k], source, e2);
                    if (kGuard && self[k] >= 0 && e2 == Real(0) && P::dropped(xi[k], source))
                        first_coincident = min(first_coincident, pair_key(self[k], base + s));
                }
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kPer; ++k) sums.add(k, {acc[k].ax, acc[k].ay, acc[k].az, acc[k].pot});
    }
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
        const int i = (blockIdx.x * kPer + k) * kThreads + threadIdx.x;
        if (i < num_targets)
            partial[static_cast<std::size_t>(blockIdx.y) * num_targets + i] =
                Double4{sums.get(k, 0), sums.get(k, 1), sums.get(k, 2), sums.get(k, 3)};
    }
    if (kGuard && first_coincident != gpu::kNoCoincidentPair) atomicMin(coincident, first_coincident);
}

// Sums the splits (gpu/split_reduce.cuh: one warp per target, deterministic) and applies G.
// out_acc is 3 x num_targets (x, y, z per target), out_pot num_targets.
__global__ void reduce_splits_kernel(const Double4* __restrict__ partial, int num_splits, int num_targets, double G,
                                     double* __restrict__ out_acc, double* __restrict__ out_pot)
{
    const int i = gpu::warp_target();
    if (i >= num_targets) return; // whole warps
    double t[4];
    gpu::warp_sum_splits(partial, num_splits, num_targets, i, t);
    if (threadIdx.x % 32 != 0) return;
    for (int c = 0; c < 3; ++c) out_acc[3 * static_cast<std::size_t>(i) + c] = G * t[c];
    out_pot[i] = G * t[3];
}

} // namespace

Precision precision_by_name(const std::string& name)
{
    if (name == "float") return Precision::Float;
    if (name == "mixed") return Precision::Mixed;
    if (name == "double") return Precision::Double;
    throw std::runtime_error("unknown precision '" + name + "' (use float, mixed or double)");
}

const char* precision_name(Precision p)
{
    switch (p) {
    case Precision::Float:
        return "float";
    case Precision::Mixed:
        return "mixed";
    default:
        return "double";
    }
}

struct DirectGpuEngine::Impl {
    DeviceToRestore caller_device; // first: made current again after the buffers below are freed
    GravityParams gravity;
    Precision precision;
    int device = -1;
    int forced_splits = 0;
    int splits = 1;
    int sm_count = 0;
    double kernel_seconds = 0;
    PhaseTimes times;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    gpu::DeviceBuffer<float4> d_sources_f;
    gpu::DeviceBuffer<Double4> d_sources_d;
    gpu::DeviceBuffer<MixedSource> d_sources_m;
    gpu::DeviceBuffer<std::int32_t> d_targets;
    gpu::DeviceBuffer<Double4> d_partial;
    gpu::DeviceBuffer<double> d_acc, d_pot;
    gpu::DeviceBuffer<unsigned long long> d_coincident; // first pair at zero distance with eps = 0
    gpu::PinnedBuffer<unsigned long long> h_coincident;
    gpu::PinnedBuffer<float4> h_sources_f;
    gpu::PinnedBuffer<Double4> h_sources_d;
    gpu::PinnedBuffer<MixedSource> h_sources_m;
    gpu::PinnedBuffer<std::int32_t> h_targets;
    gpu::PinnedBuffer<double> h_acc, h_pot;
    std::vector<double> half;  // softening by type: each source's eps^2 / 2, else empty
    std::vector<float> half_f; // in float, for the float and mixed kernels
    double smallest_half = 0;
    gpu::DeviceBuffer<float> d_half_f;
    gpu::DeviceBuffer<double> d_half_d;

    Impl(GravityParams g, Precision p, int d) : gravity(g), precision(p), device(d)
    {
        if (cuda_device_count() == 0) throw std::runtime_error("direct-gpu: no CUDA device is visible");
        const DeviceScope on(device); // checks it is visible
        sm_count = describe_device(device >= 0 ? device : current_cuda_device()).sm_count;
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
        d_coincident.reserve(1, "direct-gpu coincidence flag");
        h_coincident.reserve(1, "direct-gpu coincidence flag");
        h_coincident[0] = gpu::kNoCoincidentPair;
    }
    ~Impl()
    {
        if (device >= 0) {
            caller_device.device = current_cuda_device();
            cudaSetDevice(device);
        }
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        cudaStreamDestroy(stream);
    }

    // The kernel for the softening (guarded where a pair may be unsoftened; by type where the
    // sources carry halves), then the reduction.
    template <class P>
    void launch(const typename P::Global* d_sources, int num_sources, const std::int32_t* d_target_index,
                int num_targets)
    {
        const bool guard = !softened();
        if (half_eps2<typename P::Real>())
            guard ? launch_kernel<P, true, true>(d_sources, num_sources, d_target_index, num_targets)
                  : launch_kernel<P, false, true>(d_sources, num_sources, d_target_index, num_targets);
        else
            guard ? launch_kernel<P, true, false>(d_sources, num_sources, d_target_index, num_targets)
                  : launch_kernel<P, false, false>(d_sources, num_sources, d_target_index, num_targets);
    }

    template <class P, bool kGuard, bool kByType>
    void launch_kernel(const typename P::Global* d_sources, int num_sources, const std::int32_t* d_target_index,
                       int num_targets)
    {
        using Real = typename P::Real;
        constexpr int kThreads = DirectConfig::threads;
        const JSplit plan = plan_j_split(
            static_cast<std::size_t>(num_targets), static_cast<std::size_t>(kThreads) * P::targets_per_thread,
            static_cast<std::size_t>(num_sources), kThreads, sm_count,
            gpu::resident_blocks_per_sm<direct_acc_pot_kernel<P, kGuard, kByType>, kThreads>(), forced_splits);
        splits = plan.splits;
        d_partial.reserve(static_cast<std::size_t>(splits) * num_targets, "direct-gpu partial sums");
        if (kGuard) CUDA_CHECK(cudaMemsetAsync(d_coincident.data(), 0xff, sizeof(unsigned long long), stream));
        const Real eps2 = kGuard || kByType ? Real(0) : static_cast<Real>(gravity.eps * gravity.eps);
        const dim3 grid(static_cast<unsigned>(plan.i_blocks), static_cast<unsigned>(splits));
        direct_acc_pot_kernel<P, kGuard, kByType><<<grid, kThreads, 0, stream>>>(
            d_sources, num_sources, d_target_index, num_targets, eps2, half_eps2<Real>(), plan.chunk, d_partial.data(),
            kGuard ? d_coincident.data() : nullptr);
        gpu::check_launch("direct_acc_pot_kernel", stream);
        reduce_splits_kernel<<<gpu::warp_reduce_blocks(static_cast<std::size_t>(num_targets)), gpu::kReduceThreads, 0,
                               stream>>>(d_partial.data(), splits, num_targets, gravity.G, d_acc.data(), d_pot.data());
        gpu::check_launch("reduce_splits_kernel", stream);
    }

    // Every pair softened (no zero-distance guard needed): eps > 0, or by type the two smallest
    // halves of the particles' types sum to more than 0.
    bool softened() const { return half.empty() ? gravity.eps * gravity.eps > 0 : 2 * smallest_half > 0; }
    // The sources' halves on the device in the kernel's precision, or null for one softening.
    template <class Real> const Real* half_eps2() const
    {
        if (half.empty()) return nullptr;
        if constexpr (std::is_same_v<Real, double>)
            return d_half_d.data();
        else
            return d_half_f.data();
    }

    // Each source's eps^2 / 2 (core/softening.hpp), empty for one softening, to the device.
    void upload_softening(TypesRef type, std::size_t n)
    {
        half = half_squared_softening(gravity, type, n, "direct-gpu");
        if (half.empty()) return;
        smallest_half = *std::min_element(half.begin(), half.end());
        if (precision == Precision::Double) {
            d_half_d.reserve(n, "direct-gpu softening");
            CUDA_CHECK(
                cudaMemcpyAsync(d_half_d.data(), half.data(), n * sizeof(double), cudaMemcpyHostToDevice, stream));
        } else {
            half_f.assign(half.begin(), half.end());
            d_half_f.reserve(n, "direct-gpu softening");
            CUDA_CHECK(
                cudaMemcpyAsync(d_half_f.data(), half_f.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
        }
    }

    // The sources in the precision's layout, on the device when this returns.
    void upload_sources(PositionsRef pos, MassesRef mass)
    {
        const auto n = static_cast<std::size_t>(pos.cols());
        if (precision == Precision::Float) {
            d_sources_f.reserve(n, "direct-gpu sources");
            h_sources_f.reserve(n, "direct-gpu sources");
            for (std::size_t j = 0; j < n; ++j) {
                const auto c = static_cast<Eigen::Index>(j);
                h_sources_f[j] = make_float4(static_cast<float>(pos(0, c)), static_cast<float>(pos(1, c)),
                                             static_cast<float>(pos(2, c)), static_cast<float>(mass[c]));
            }
            CUDA_CHECK(cudaMemcpyAsync(d_sources_f.data(), h_sources_f.data(), n * sizeof(float4),
                                       cudaMemcpyHostToDevice, stream));
        } else if (precision == Precision::Mixed) {
            d_sources_m.reserve(n, "direct-gpu sources");
            h_sources_m.reserve(n, "direct-gpu sources");
            for (std::size_t j = 0; j < n; ++j) {
                const auto c = static_cast<Eigen::Index>(j);
                const gpu::FloatPair x = gpu::split_double(pos(0, c)), y = gpu::split_double(pos(1, c)),
                                     z = gpu::split_double(pos(2, c));
                h_sources_m[j] = {make_float4(x.hi, y.hi, z.hi, static_cast<float>(mass[c])),
                                  make_float4(x.lo, y.lo, z.lo, 0.f)};
            }
            CUDA_CHECK(cudaMemcpyAsync(d_sources_m.data(), h_sources_m.data(), n * sizeof(MixedSource),
                                       cudaMemcpyHostToDevice, stream));
        } else {
            d_sources_d.reserve(n, "direct-gpu sources");
            h_sources_d.reserve(n, "direct-gpu sources");
            for (std::size_t j = 0; j < n; ++j) {
                const auto c = static_cast<Eigen::Index>(j);
                h_sources_d[j] = Double4{pos(0, c), pos(1, c), pos(2, c), mass[c]};
            }
            CUDA_CHECK(cudaMemcpyAsync(d_sources_d.data(), h_sources_d.data(), n * sizeof(Double4),
                                       cudaMemcpyHostToDevice, stream));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }

    void run(PositionsRef pos, MassesRef mass, TypesRef type, const std::vector<std::int32_t>* targets, Forces& out)
    {
        const auto wall_start = std::chrono::steady_clock::now();
        // Engines on several devices may share a thread: each call makes its own device current,
        // and the caller's again after it.
        const DeviceScope on(device);
        const auto n = static_cast<std::size_t>(pos.cols());
        const std::size_t m = targets ? targets->size() : n;
        if (n >= static_cast<std::size_t>(INT32_MAX))
            throw std::runtime_error("direct-gpu: at most 2^31 - 1 particles");
        out.acc.resize(3, static_cast<Eigen::Index>(m));
        out.pot.resize(static_cast<Eigen::Index>(m));
        if (m == 0 || n == 0) {
            out.acc.setZero();
            out.pot.setZero();
            return;
        }
        if (targets)
            for (auto t : *targets)
                if (t < 0 || static_cast<std::size_t>(t) >= n)
                    throw std::out_of_range("direct-gpu: target index out of range");

        d_acc.reserve(3 * m, "direct-gpu accelerations");
        d_pot.reserve(m, "direct-gpu potentials");
        h_acc.reserve(3 * m, "direct-gpu accelerations");
        h_pot.reserve(m, "direct-gpu potentials");
        const std::int32_t* d_target_index = nullptr;
        if (targets) {
            d_targets.reserve(m, "direct-gpu target indices");
            h_targets.reserve(m, "direct-gpu target indices");
            std::copy(targets->begin(), targets->end(), h_targets.data());
            CUDA_CHECK(cudaMemcpyAsync(d_targets.data(), h_targets.data(), m * sizeof(std::int32_t),
                                       cudaMemcpyHostToDevice, stream));
            d_target_index = d_targets.data();
        }
        const auto upload_start = std::chrono::steady_clock::now();
        upload_softening(type, n);
        upload_sources(pos, mass);
        const double upload_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - upload_start).count();

        CUDA_CHECK(cudaEventRecord(start, stream));
        const int ni = static_cast<int>(m), nj = static_cast<int>(n);
        switch (precision) {
        case Precision::Float:
            launch<FloatPolicy>(d_sources_f.data(), nj, d_target_index, ni);
            break;
        case Precision::Mixed:
            launch<MixedPolicy>(d_sources_m.data(), nj, d_target_index, ni);
            break;
        case Precision::Double:
            launch<DoublePolicy>(d_sources_d.data(), nj, d_target_index, ni);
            break;
        }
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaMemcpyAsync(h_acc.data(), d_acc.data(), 3 * m * sizeof(double), cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaMemcpyAsync(h_pot.data(), d_pot.data(), m * sizeof(double), cudaMemcpyDeviceToHost, stream));
        const bool unsoftened = !softened(); // as launch() picks the guarded kernel
        if (unsoftened)
            CUDA_CHECK(cudaMemcpyAsync(h_coincident.data(), d_coincident.data(), sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (unsoftened && h_coincident[0] != gpu::kNoCoincidentPair)
            throw std::runtime_error(
                "direct-gpu: " + gpu::coincident_pair_text(h_coincident[0]) + " are at the same position" +
                (precision == Precision::Float ? " in float precision" : "") +
                " and the softening is 0: their force is infinite (give --eps > 0 or separate them)");
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        kernel_seconds = ms * 1e-3;
        std::copy(h_acc.data(), h_acc.data() + 3 * m, out.acc.data());
        std::copy(h_pot.data(), h_pot.data() + m, out.pot.data());
        const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
        times = {{"upload", upload_seconds},
                 {"kernels", kernel_seconds},
                 {"other", std::max(0.0, total - upload_seconds - kernel_seconds)}};
    }
};

DirectGpuEngine::DirectGpuEngine(GravityParams gravity, Precision precision, int device)
    : ForceEngine(std::string("direct-gpu/") + precision_name(precision)),
      impl_(std::make_unique<Impl>(gravity, precision, device))
{
}

DirectGpuEngine::~DirectGpuEngine() = default;

void DirectGpuEngine::compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out)
{
    impl_->run(pos, mass, type, nullptr, out);
}

void DirectGpuEngine::compute_subset(PositionsRef pos, MassesRef mass, TypesRef type,
                                     const std::vector<std::int32_t>& targets, Forces& out)
{
    impl_->run(pos, mass, type, &targets, out);
}

PhaseTimes DirectGpuEngine::last_phase_times() const
{
    return impl_->times;
}
void DirectGpuEngine::set_splits(int splits)
{
    impl_->forced_splits = std::max(0, splits);
}
int DirectGpuEngine::last_splits() const
{
    return impl_->splits;
}
double DirectGpuEngine::last_kernel_seconds() const
{
    return impl_->kernel_seconds;
}

} // namespace grove
