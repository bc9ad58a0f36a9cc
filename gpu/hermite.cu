// Hermite kernels and their launcher; see hermite_gpu.h.
#include "gpu/hermite_gpu.h"

#include <algorithm>
#include <stdexcept>

#include "core/hermite_predict.hpp"
#include "core/softening.hpp"
#include "gpu/block_sums.cuh"
#include "gpu/coincident_pair.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/device_info.h"
#include "gpu/float_pair.hpp"
#include "gpu/j_split.hpp"
#include "gpu/jerk_pair.cuh"
#include "gpu/occupancy.cuh"
#include "gpu/split_reduce.cuh"
#include "tree/gravity.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

namespace {

using gpu::ceil_div;
using D4 = Vec4<double>;
constexpr int kThreads = 128;
constexpr int kTargetsDouble = 2; // per thread; the mixed kernel's: mixed_targets_per_thread

// The device copy of a particle's state: position and mass, velocity and time, a, j.
struct DeviceState {
    D4* xm;
    D4* vt;
    D4* a;
    D4* j;
};

// Particle i of the device state predicted to time t.
__device__ void predict_particle(const DeviceState& s, int i, double t, double xp[3], double vp[3])
{
    const D4 x = s.xm[i], v = s.vt[i], a = s.a[i], j = s.j[i];
    const double xs[3] = {x.x, x.y, x.z}, vs[3] = {v.x, v.y, v.z}, as[3] = {a.x, a.y, a.z}, js[3] = {j.x, j.y, j.z};
    hermite_predict(t - v.w, xs, vs, as, js, xp, vp);
}

// half: each particle's eps^2 / 2 where the softening is per type, kept in the velocity's w
// (gpu/jerk_pair.cuh); null for one softening.
__global__ void predict_kernel(int n, double t, DeviceState s, const double* half, D4* xp, D4* vp)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x[3], v[3];
    predict_particle(s, i, t, x, v);
    xp[i] = D4{x[0], x[1], x[2], s.xm[i].w};
    vp[i] = D4{v[0], v[1], v[2], half ? half[i] : 0.0};
}

// The same prediction stored for the mixed kernel as float pairs (gpu/float_pair.hpp).
__global__ void predict_split_kernel(int n, double t, DeviceState s, const double* half, float4* hi, float4* lo,
                                     float4* vel)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double p[3], v[3];
    predict_particle(s, i, t, p, v);
    const double px = p[0], py = p[1], pz = p[2];
    const gpu::FloatPair x = gpu::split_double(px), y = gpu::split_double(py), z = gpu::split_double(pz);
    hi[i] = make_float4(x.hi, y.hi, z.hi, static_cast<float>(s.xm[i].w));
    lo[i] = make_float4(x.lo, y.lo, z.lo, 0.f);
    vel[i] = make_float4(static_cast<float>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2]),
                         half ? static_cast<float>(half[i]) : 0.f);
}

// Packed updates (k of them) scattered into the state.
__global__ void scatter_state_kernel(int k, const std::int32_t* index, const D4* packed, DeviceState s)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= k) return;
    const int i = index[u];
    s.xm[i] = packed[4 * u + 0];
    s.vt[i] = packed[4 * u + 1];
    s.a[i] = packed[4 * u + 2];
    s.j[i] = packed[4 * u + 3];
}

struct Partial {
    double ax, ay, az, jx, jy, jz, pot, pad;
};

using gpu::DoubleJerkPolicy;
using gpu::jerk_pair;
using gpu::MixedJerkPolicy;

// kTargets active particles per thread share every shared-memory load of a j-particle (with one
// per thread the kernel is bound by shared-memory bandwidth). As in the direct kernels
// (gpu/direct.cu): tiles are padded with massless sources, so every tile runs the same unrolled
// loop; only a tile that holds one of the block's own targets (__syncthreads_or) runs the rolled
// loop that gives the target's own pair no mass; without softening (kGuard) every pair is tested
// for zero distance. Sums are kept per tile in the policy's type and added into double. kByType:
// each pair's eps^2 is the target's h plus the source's (gpu/jerk_pair.cuh), eps2 unused.
template <class P, int kTargets, bool kGuard, bool kByType>
__global__ void __launch_bounds__(kThreads)
    hermite_kernel(typename P::Inputs in, int n, const std::int32_t* active, int num_active, int chunk,
                   typename P::Real eps2, Partial* partial, unsigned long long* coincident)
{
    using Real = typename P::Real;
    __shared__ typename P::Source tile[kThreads];
    gpu::BlockSums<kTargets, 7, kThreads> sums; // a, j, pot: Partial's order
    int idx[kTargets];
    typename P::Target ti[kTargets];
    unsigned long long first_coincident = gpu::kNoCoincidentPair;
#pragma unroll
    for (int u = 0; u < kTargets; ++u) {
        const int k = (blockIdx.x * kTargets + u) * kThreads + threadIdx.x;
        idx[u] = k < num_active ? active[k] : -1;
        ti[u] = P::target(in, idx[u] < 0 ? 0 : idx[u]);
    }
    const int j_begin = blockIdx.y * chunk, j_end = min(n, j_begin + chunk);
    for (int base = j_begin; base < j_end; base += kThreads) {
        const int jl = base + threadIdx.x;
        tile[threadIdx.x] = jl < j_end ? P::load(in, jl) : typename P::Source{};
        bool mine = false;
#pragma unroll
        for (int u = 0; u < kTargets; ++u)
            mine |= static_cast<unsigned>(idx[u] - base) < static_cast<unsigned>(kThreads);
        const bool tile_has_self = __syncthreads_or(mine); // also the barrier after the tile load
        AccumJerk<Real> part[kTargets];
        if (tile_has_self) {
            for (int s = 0; s < kThreads; ++s) {
                const typename P::Source src = tile[s];
#pragma unroll
                for (int u = 0; u < kTargets; ++u)
                    jerk_pair<P, kGuard>(part[u], ti[u], src, base + s == idx[u] ? Real(0) : P::mass(src),
                                         kByType ? ti[u].h + P::half(src) : eps2, idx[u], base + s, first_coincident);
            }
        } else {
#pragma unroll 4
            for (int s = 0; s < kThreads; ++s) {
                const typename P::Source src = tile[s];
#pragma unroll
                for (int u = 0; u < kTargets; ++u)
                    jerk_pair<P, kGuard>(part[u], ti[u], src, P::mass(src), kByType ? ti[u].h + P::half(src) : eps2,
                                         idx[u], base + s, first_coincident);
            }
        }
        __syncthreads();
#pragma unroll
        for (int u = 0; u < kTargets; ++u)
            sums.add(u, {part[u].ax, part[u].ay, part[u].az, part[u].jx, part[u].jy, part[u].jz, part[u].pot});
    }
#pragma unroll
    for (int u = 0; u < kTargets; ++u) {
        const int k = (blockIdx.x * kTargets + u) * kThreads + threadIdx.x;
        if (k < num_active)
            partial[static_cast<std::size_t>(blockIdx.y) * num_active + k] =
                Partial{sums.get(u, 0), sums.get(u, 1), sums.get(u, 2), sums.get(u, 3),
                        sums.get(u, 4), sums.get(u, 5), sums.get(u, 6), 0.0};
    }
    if (kGuard && first_coincident != gpu::kNoCoincidentPair) atomicMin(coincident, first_coincident);
}

// Targets per thread of the mixed kernel for m active particles. Four share each tile's loads and
// so run faster than two with many particles active (bench/results/direct-hermite.md), but a
// block then holds 512 targets: four unless they pad the targets to more thread slots than two
// do (m = 200: 512 against 256).
int mixed_targets_per_thread(std::size_t m)
{
    const std::size_t two = ceil_div(m, 2 * kThreads) * 2 * kThreads, four = ceil_div(m, 4 * kThreads) * 4 * kThreads;
    return 100 * four <= 106 * two ? 4 : 2;
}

__global__ void reduce_kernel(int num_active, int splits, double G, const Partial* partial, double* out)
{
    const int k = gpu::warp_target();
    if (k >= num_active) return; // whole warps
    double t[7];
    gpu::warp_sum_splits(partial, splits, num_active, k, t);
    if (threadIdx.x % 32 == 0)
        for (int w = 0; w < 7; ++w) out[7 * static_cast<std::size_t>(k) + w] = G * t[w];
}

// The 6th-order state's extra coefficients (snap, crackle) and its prediction: position to 5th
// order, velocity to 4th, acceleration to 3rd (core/hermite_predict.hpp), all in double.
__global__ void predict6_kernel(int n, double t, DeviceState s, const D4* snap, const D4* crackle, const double* half,
                                D4* xp, D4* vp, D4* ap)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const D4 x = s.xm[i], v = s.vt[i], a = s.a[i], j = s.j[i], sn = snap[i], c = crackle[i];
    const double xs[3] = {x.x, x.y, x.z}, vs[3] = {v.x, v.y, v.z}, as[3] = {a.x, a.y, a.z}, js[3] = {j.x, j.y, j.z};
    const double ss[3] = {sn.x, sn.y, sn.z}, cs[3] = {c.x, c.y, c.z};
    double px[3], pv[3], pa[3];
    hermite6_predict(t - v.w, xs, vs, as, js, ss, cs, px, pv, pa);
    xp[i] = D4{px[0], px[1], px[2], x.w};
    vp[i] = D4{pv[0], pv[1], pv[2], half ? half[i] : 0.0};
    ap[i] = D4{pa[0], pa[1], pa[2], 0.0};
}

__global__ void scatter_snap_kernel(int k, const std::int32_t* index, const D4* packed, D4* snap, D4* crackle)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= k) return;
    snap[index[u]] = packed[2 * u];
    crackle[index[u]] = packed[2 * u + 1];
}

struct Partial6 {
    double a[3], j[3], s[3], pot;
};

// Acceleration, jerk and snap (Nitadori & Makino 2008) in double, one active particle per thread,
// j-particles staged through shared memory and split over blocks along y. kGuard (eps = 0): a
// source with mass at zero distance is reported as hermite_kernel reports it. kByType: eps^2 of a
// pair is the two velocities' w (their h).
template <bool kGuard, bool kByType>
__global__ void __launch_bounds__(kThreads)
    snap_kernel(int n, const D4* xp, const D4* vp, const D4* ap, const std::int32_t* active, int num_active, int chunk,
                double eps2, Partial6* partial, unsigned long long* coincident)
{
    unsigned long long first_coincident = gpu::kNoCoincidentPair;
    __shared__ D4 sx[kThreads], sv[kThreads], sa[kThreads];
    const int k = blockIdx.x * kThreads + threadIdx.x;
    const int i = k < num_active ? active[k] : -1;
    const D4 xi = xp[i < 0 ? 0 : i], vi = vp[i < 0 ? 0 : i], ai = ap[i < 0 ? 0 : i];
    AccumSnap<double> sum;
    const int j_begin = blockIdx.y * chunk, j_end = min(n, j_begin + chunk);
    for (int base = j_begin; base < j_end; base += kThreads) {
        const int jl = base + threadIdx.x;
        if (jl < j_end) {
            sx[threadIdx.x] = xp[jl];
            sv[threadIdx.x] = vp[jl];
            sa[threadIdx.x] = ap[jl];
        }
        __syncthreads();
        const int count = min(kThreads, j_end - base);
        for (int q = 0; q < count; ++q) {
            const D4 xj = sx[q], vj = sv[q], aj = sa[q];
            const double d[3] = {xj.x - xi.x, xj.y - xi.y, xj.z - xi.z};
            const double dv[3] = {vj.x - vi.x, vj.y - vi.y, vj.z - vi.z};
            const double da[3] = {aj.x - ai.x, aj.y - ai.y, aj.z - ai.z};
            const double m = base + q == i ? 0.0 : xj.w;
            const double e2 = kByType ? vi.w + vj.w : eps2;
            if (kGuard && m != 0.0 && i >= 0 && e2 == 0.0 && d[0] == 0.0 && d[1] == 0.0 && d[2] == 0.0)
                first_coincident = min(first_coincident, gpu::pair_key(i, base + q));
            sum = p2p_snap(sum, d, dv, da, m, e2);
        }
        __syncthreads();
    }
    if (k < num_active)
        partial[static_cast<std::size_t>(blockIdx.y) * num_active + k] =
            Partial6{{sum.ax, sum.ay, sum.az}, {sum.jx, sum.jy, sum.jz}, {sum.sx, sum.sy, sum.sz}, sum.pot};
    if (kGuard && first_coincident != gpu::kNoCoincidentPair) atomicMin(coincident, first_coincident);
}

__global__ void reduce6_kernel(int num_active, int splits, double G, const Partial6* partial, double* out)
{
    const int k = gpu::warp_target();
    if (k >= num_active) return; // whole warps
    double t[10];                // a, j, s, pot: Partial6's order and out's
    gpu::warp_sum_splits(partial, splits, num_active, k, t);
    if (threadIdx.x % 32 == 0)
        for (int w = 0; w < 10; ++w) out[10 * static_cast<std::size_t>(k) + w] = G * t[w];
}

} // namespace

struct HermiteGpuEngine::Impl {
    GravityParams gravity;
    Precision precision;
    int n = 0, sm_count = 0, forced_splits = 0, splits = 1;
    double kernel_seconds = 0;
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    gpu::DeviceBuffer<D4> d_xm, d_vt, d_a, d_j, d_xp, d_vp, d_packed;
    bool sixth = false;                                       // the state has snap and crackle (hermite6)
    gpu::DeviceBuffer<D4> d_snap, d_crackle, d_ap, d_packed6; // 6th order only
    gpu::DeviceBuffer<Partial6> d_partial6;
    gpu::PinnedBuffer<D4> h_packed6;
    gpu::DeviceBuffer<float4> d_hi, d_lo, d_vel; // mixed precision's predicted state
    gpu::DeviceBuffer<std::int32_t> d_index, d_active;
    gpu::DeviceBuffer<Partial> d_partial;
    gpu::DeviceBuffer<double> d_out;
    gpu::PinnedBuffer<D4> h_packed;
    gpu::PinnedBuffer<std::int32_t> h_index, h_active;
    gpu::PinnedBuffer<double> h_out;
    gpu::DeviceBuffer<unsigned long long> d_coincident; // first pair at zero distance with eps = 0
    // Softening by type: each particle's eps^2 / 2 (in the state's order), the smallest of them.
    gpu::DeviceBuffer<double> d_half;
    bool by_type = false;
    double smallest_half = 0;
    const double* half() const { return by_type ? d_half.data() : nullptr; }
    gpu::PinnedBuffer<unsigned long long> h_coincident;

    Impl(GravityParams g, Precision p) : gravity(g), precision(p)
    {
        if (p == Precision::Float) throw std::invalid_argument("hermite on the GPU: precision mixed or double");
        if (cuda_device_count() == 0) throw std::runtime_error("direct-gpu: no CUDA device is visible");
        sm_count = describe_device().sm_count;
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
        d_coincident.reserve(1, "hermite coincidence flag");
        h_coincident.reserve(1, "hermite coincidence flag");
    }
    ~Impl()
    {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        cudaStreamDestroy(stream);
    }
    DeviceState state() const { return {d_xm.data(), d_vt.data(), d_a.data(), d_j.data()}; }

    // Packs particles `index` of s into the pinned buffer and scatters them on the device.
    void upload(const HermiteState& s, const std::int32_t* index, std::size_t k)
    {
        if (k == 0) return;
        h_packed.reserve(4 * k, "hermite state upload");
        h_index.reserve(k, "hermite state upload");
        d_packed.reserve(4 * k, "hermite state upload");
        d_index.reserve(k, "hermite state upload");
        // A block step's corrected particles (1810 on average in a Plummer 64k): the packing was a
        // serial part of every block step.
#pragma omp parallel for schedule(static) if (k > 512)
        for (std::size_t u = 0; u < k; ++u) {
            const Eigen::Index i = index[u];
            h_index[u] = index[u];
            h_packed[4 * u + 0] = D4{s.x(0, i), s.x(1, i), s.x(2, i), s.mass[i]};
            h_packed[4 * u + 1] = D4{s.v(0, i), s.v(1, i), s.v(2, i), s.t[i]};
            h_packed[4 * u + 2] = D4{s.a(0, i), s.a(1, i), s.a(2, i), 0.0};
            h_packed[4 * u + 3] = D4{s.j(0, i), s.j(1, i), s.j(2, i), 0.0};
        }
        CUDA_CHECK(
            cudaMemcpyAsync(d_packed.data(), h_packed.data(), 4 * k * sizeof(D4), cudaMemcpyHostToDevice, stream));
        CUDA_CHECK(
            cudaMemcpyAsync(d_index.data(), h_index.data(), k * sizeof(std::int32_t), cudaMemcpyHostToDevice, stream));
        scatter_state_kernel<<<static_cast<unsigned>(ceil_div(k, 256)), 256, 0, stream>>>(
            static_cast<int>(k), d_index.data(), d_packed.data(), state());
        gpu::check_launch("scatter_state_kernel", stream);
        if (!sixth) return;
        h_packed6.reserve(2 * k, "hermite6 state upload");
        d_packed6.reserve(2 * k, "hermite6 state upload");
#pragma omp parallel for schedule(static) if (k > 512)
        for (std::size_t u = 0; u < k; ++u) {
            const Eigen::Index i = index[u];
            h_packed6[2 * u] = D4{s.s(0, i), s.s(1, i), s.s(2, i), 0.0};
            h_packed6[2 * u + 1] = D4{s.c(0, i), s.c(1, i), s.c(2, i), 0.0};
        }
        CUDA_CHECK(
            cudaMemcpyAsync(d_packed6.data(), h_packed6.data(), 2 * k * sizeof(D4), cudaMemcpyHostToDevice, stream));
        scatter_snap_kernel<<<static_cast<unsigned>(ceil_div(k, 256)), 256, 0, stream>>>(
            static_cast<int>(k), d_index.data(), d_packed6.data(), d_snap.data(), d_crackle.data());
        gpu::check_launch("scatter_snap_kernel", stream);
    }

    // Without softening the kernels test every pair for zero distance: resets the device's flag
    // (queued on the stream) and says whether to launch the guarded kernels.
    bool begin_coincidence_check()
    {
        if (by_type ? 2 * smallest_half > 0 : gravity.eps * gravity.eps > 0) return false;
        CUDA_CHECK(cudaMemsetAsync(d_coincident.data(), 0xff, sizeof(unsigned long long), stream));
        return true;
    }
    // Waits for the stream (the results' copy is queued before) and throws if two particles with
    // mass met at zero distance.
    void end_coincidence_check(bool guard)
    {
        if (guard)
            CUDA_CHECK(cudaMemcpyAsync(h_coincident.data(), d_coincident.data(), sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (guard && h_coincident[0] != gpu::kNoCoincidentPair)
            throw std::runtime_error("direct-gpu: " + gpu::coincident_pair_text(h_coincident[0]) +
                                     " are at the same position and the softening is 0: their force is infinite "
                                     "(give --eps > 0 or separate them)");
    }

    // Plans the j-splits for hermite_kernel<P, T, kGuard> and launches it on the stream after
    // what is queued there (the prediction).
    template <class P, int T, bool kGuard> void launch_jerk(const typename P::Inputs& in, int m, typename P::Real eps2)
    {
        if (by_type)
            launch_jerk_kernel<P, T, kGuard, true>(in, m, eps2);
        else
            launch_jerk_kernel<P, T, kGuard, false>(in, m, eps2);
    }
    template <class P, int T, bool kGuard, bool kByType>
    void launch_jerk_kernel(const typename P::Inputs& in, int m, typename P::Real eps2)
    {
        const auto mm = static_cast<std::size_t>(m);
        const gpu::JSplit plan = gpu::plan_j_split(
            mm, static_cast<std::size_t>(kThreads) * T, static_cast<std::size_t>(n), kThreads, sm_count,
            gpu::resident_blocks_per_sm<hermite_kernel<P, T, kGuard, kByType>, kThreads>(), forced_splits);
        splits = plan.splits;
        d_partial.reserve(mm * static_cast<std::size_t>(splits), "hermite partial sums");
        const dim3 grid(static_cast<unsigned>(plan.i_blocks), static_cast<unsigned>(splits));
        hermite_kernel<P, T, kGuard, kByType><<<grid, kThreads, 0, stream>>>(
            in, n, d_active.data(), m, plan.chunk, eps2, d_partial.data(), d_coincident.data());
        gpu::check_launch("hermite_kernel", stream);
    }

    // The 6th-order evaluation (double precision): prediction, snap kernel, reduction.
    void evaluate6(double t, int m, HermiteForces& out);
};

HermiteGpuEngine::HermiteGpuEngine(GravityParams gravity, Precision precision)
    : impl_(std::make_unique<Impl>(gravity, precision))
{
}
HermiteGpuEngine::~HermiteGpuEngine() = default;

std::string HermiteGpuEngine::name() const
{
    return std::string("direct-gpu (") + precision_name(impl_->precision) + ")";
}

void HermiteGpuEngine::set_state(const HermiteState& s)
{
    Impl& d = *impl_;
    d.sixth = s.sixth_order();
    if (d.sixth && d.precision != Precision::Double)
        throw std::runtime_error("direct-gpu: hermite6 runs in double precision (--precision double)");
    d.n = static_cast<int>(s.size());
    const auto n = static_cast<std::size_t>(d.n);
    for (auto* b : {&d.d_hi, &d.d_lo, &d.d_vel}) b->reserve(std::max<std::size_t>(n, 1), "hermite predicted state");
    for (auto* b : {&d.d_xm, &d.d_vt, &d.d_a, &d.d_j, &d.d_xp, &d.d_vp})
        b->reserve(std::max<std::size_t>(n, 1), "hermite particle state");
    if (d.sixth)
        for (auto* b : {&d.d_snap, &d.d_crackle, &d.d_ap}) b->reserve(std::max<std::size_t>(n, 1), "hermite6 state");
    const std::vector<double> half = half_squared_softening(d.gravity, s.type, n, "Hermite on direct-gpu");
    d.by_type = !half.empty();
    if (d.by_type) {
        d.smallest_half = *std::min_element(half.begin(), half.end());
        d.d_half.reserve(n, "hermite softening by type");
        CUDA_CHECK(cudaMemcpyAsync(d.d_half.data(), half.data(), n * sizeof(double), cudaMemcpyHostToDevice, d.stream));
        CUDA_CHECK(cudaStreamSynchronize(d.stream)); // half goes out of scope
    }
    std::vector<std::int32_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::int32_t>(i);
    d.upload(s, all.data(), n);
}

void HermiteGpuEngine::update(const HermiteState& s, const std::vector<std::int32_t>& changed)
{
    impl_->upload(s, changed.data(), changed.size());
}

void HermiteGpuEngine::evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out)
{
    Impl& d = *impl_;
    const auto m = static_cast<int>(active.size());
    out.acc.resize(3, m);
    out.jerk.resize(3, m);
    out.pot.resize(m);
    if (m == 0 || d.n == 0) return;
    const auto mm = static_cast<std::size_t>(m);
    d.h_active.reserve(mm, "active list");
    d.d_active.reserve(mm, "active list");
    std::copy(active.begin(), active.end(), d.h_active.data());
    if (d.sixth) {
        CUDA_CHECK(cudaMemcpyAsync(d.d_active.data(), d.h_active.data(), mm * sizeof(std::int32_t),
                                   cudaMemcpyHostToDevice, d.stream));
        d.evaluate6(t, m, out);
        return;
    }
    d.d_out.reserve(7 * mm, "hermite results");
    d.h_out.reserve(7 * mm, "hermite results");
    CUDA_CHECK(cudaMemcpyAsync(d.d_active.data(), d.h_active.data(), mm * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                               d.stream));
    CUDA_CHECK(cudaEventRecord(d.start, d.stream));
    const unsigned predict_blocks = static_cast<unsigned>(ceil_div(d.n, 256));
    const double eps2 = d.gravity.eps * d.gravity.eps;
    const bool guard = d.begin_coincidence_check();
    if (d.precision == Precision::Mixed) {
        predict_split_kernel<<<predict_blocks, 256, 0, d.stream>>>(d.n, t, d.state(), d.half(), d.d_hi.data(),
                                                                   d.d_lo.data(), d.d_vel.data());
        gpu::check_launch("predict_split_kernel", d.stream);
        const MixedJerkPolicy::Inputs in{d.d_hi.data(), d.d_lo.data(), d.d_vel.data()};
        const float e = guard ? 0.f : static_cast<float>(eps2);
        if (mixed_targets_per_thread(mm) == 4)
            guard ? d.launch_jerk<MixedJerkPolicy, 4, true>(in, m, e)
                  : d.launch_jerk<MixedJerkPolicy, 4, false>(in, m, e);
        else
            guard ? d.launch_jerk<MixedJerkPolicy, 2, true>(in, m, e)
                  : d.launch_jerk<MixedJerkPolicy, 2, false>(in, m, e);
    } else {
        predict_kernel<<<predict_blocks, 256, 0, d.stream>>>(d.n, t, d.state(), d.half(), d.d_xp.data(), d.d_vp.data());
        gpu::check_launch("predict_kernel", d.stream);
        const DoubleJerkPolicy::Inputs in{d.d_xp.data(), d.d_vp.data()};
        const double e = guard ? 0.0 : eps2;
        guard ? d.launch_jerk<DoubleJerkPolicy, kTargetsDouble, true>(in, m, e)
              : d.launch_jerk<DoubleJerkPolicy, kTargetsDouble, false>(in, m, e);
    }
    reduce_kernel<<<gpu::warp_reduce_blocks(mm), gpu::kReduceThreads, 0, d.stream>>>(
        m, d.splits, d.gravity.G, d.d_partial.data(), d.d_out.data());
    gpu::check_launch("reduce_kernel", d.stream);
    CUDA_CHECK(cudaEventRecord(d.stop, d.stream));
    CUDA_CHECK(
        cudaMemcpyAsync(d.h_out.data(), d.d_out.data(), 7 * mm * sizeof(double), cudaMemcpyDeviceToHost, d.stream));
    d.end_coincidence_check(guard);
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, d.start, d.stop));
    d.kernel_seconds = ms * 1e-3;
    for (int k = 0; k < m; ++k) {
        const double* o = d.h_out.data() + 7 * static_cast<std::size_t>(k);
        out.acc.col(k) << o[0], o[1], o[2];
        out.jerk.col(k) << o[3], o[4], o[5];
        out.pot[k] = o[6];
    }
}

void HermiteGpuEngine::Impl::evaluate6(double t, int m, HermiteForces& out)
{
    const auto mm = static_cast<std::size_t>(m);
    out.snap.resize(3, m);
    const bool guard = begin_coincidence_check();
    const int resident = by_type ? (guard ? gpu::resident_blocks_per_sm<snap_kernel<true, true>, kThreads>()
                                          : gpu::resident_blocks_per_sm<snap_kernel<false, true>, kThreads>())
                                 : (guard ? gpu::resident_blocks_per_sm<snap_kernel<true, false>, kThreads>()
                                          : gpu::resident_blocks_per_sm<snap_kernel<false, false>, kThreads>());
    const gpu::JSplit plan =
        gpu::plan_j_split(mm, kThreads, static_cast<std::size_t>(n), kThreads, sm_count, resident, forced_splits);
    splits = plan.splits;
    d_partial6.reserve(mm * static_cast<std::size_t>(plan.splits), "hermite6 partial sums");
    d_out.reserve(10 * mm, "hermite6 results");
    h_out.reserve(10 * mm, "hermite6 results");
    CUDA_CHECK(cudaEventRecord(start, stream));
    predict6_kernel<<<static_cast<unsigned>(ceil_div(n, 256)), 256, 0, stream>>>(
        n, t, state(), d_snap.data(), d_crackle.data(), half(), d_xp.data(), d_vp.data(), d_ap.data());
    gpu::check_launch("predict6_kernel", stream);
    const dim3 grid(static_cast<unsigned>(plan.i_blocks), static_cast<unsigned>(plan.splits));
    const double eps2 = guard ? 0.0 : gravity.eps * gravity.eps;
    const auto launch = [&](auto kernel) {
        kernel<<<grid, kThreads, 0, stream>>>(n, d_xp.data(), d_vp.data(), d_ap.data(), d_active.data(), m, plan.chunk,
                                              eps2, d_partial6.data(), d_coincident.data());
    };
    if (by_type)
        guard ? launch(snap_kernel<true, true>) : launch(snap_kernel<false, true>);
    else
        guard ? launch(snap_kernel<true, false>) : launch(snap_kernel<false, false>);
    gpu::check_launch("snap_kernel", stream);
    reduce6_kernel<<<gpu::warp_reduce_blocks(mm), gpu::kReduceThreads, 0, stream>>>(m, plan.splits, gravity.G,
                                                                                    d_partial6.data(), d_out.data());
    gpu::check_launch("reduce6_kernel", stream);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.data(), 10 * mm * sizeof(double), cudaMemcpyDeviceToHost, stream));
    end_coincidence_check(guard);
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    kernel_seconds = ms * 1e-3;
    for (int k = 0; k < m; ++k) {
        const double* o = h_out.data() + 10 * static_cast<std::size_t>(k);
        out.acc.col(k) << o[0], o[1], o[2];
        out.jerk.col(k) << o[3], o[4], o[5];
        out.snap.col(k) << o[6], o[7], o[8];
        out.pot[k] = o[9];
    }
}

void HermiteGpuEngine::set_splits(int splits)
{
    impl_->forced_splits = std::max(0, splits);
}
int HermiteGpuEngine::last_splits() const
{
    return impl_->splits;
}
double HermiteGpuEngine::last_kernel_seconds() const
{
    return impl_->kernel_seconds;
}

} // namespace grove
