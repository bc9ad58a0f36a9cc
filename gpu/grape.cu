// The GRAPE engine's kernels and launcher; see grape_gpu.h.
#include "gpu/grape_gpu.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/grape_engine.hpp"
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
using D4 = Vec4<double>;

// An int64 carried in a double's bits through an upload (the kernels read it back with
// __double_as_longlong).
inline double bits_as_double(std::int64_t v)
{
    double d;
    std::memcpy(&d, &v, sizeof d);
    return d;
}
inline std::int64_t double_bits(double d)
{
    std::int64_t v;
    std::memcpy(&v, &d, sizeof v);
    return v;
}
constexpr int kThreads = 128;

// The device j-memory: position and mass, velocity and time, a/2, j/6, s/18 (w unused), names.
struct JMemory {
    D4* xm;
    D4* vt;
    D4* a2;
    D4* j6;
    D4* k18;
    long long* name;
};

// An upload of k j-particles in one buffer of 5 D4 each: x and mass, v and time, a/2, j/6, s/18;
// the unused fourth words of a/2 and j/6 carry the slot and the name (bits of an int64).
__global__ void scatter_kernel(int k, const D4* packed, JMemory m)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= k) return;
    const D4* p = packed + 5 * static_cast<std::size_t>(u);
    const auto s = static_cast<std::size_t>(__double_as_longlong(p[2].w));
    m.xm[s] = p[0];
    m.vt[s] = p[1];
    m.a2[s] = p[2];
    m.j6[s] = p[3];
    m.k18[s] = p[4];
    m.name[s] = __double_as_longlong(p[3].w);
}

// Where the mixed kernels see an empty slot: far from every particle, so that its r^2 (about
// 3e36, still finite in float) never makes it the nearest neighbour while any particle is there.
constexpr float kFarAway = 1e18f;
// The fast mixed kernel reads a j-particle's name as 32 bits from the fourth word of its low
// position float (the host checks that the names fit); kEmptyName marks an empty slot.
constexpr unsigned kEmptyName = 0xffffffffu;

// GRAPE-6's predictor (core/grape_engine.hpp: grape6_predict), in double; mixed precision keeps
// the position as a float pair hi + lo, and puts empty slots at kFarAway.
__global__ void predict_kernel(int n, double t, JMemory m, D4* xp, D4* vp, float4* hi, float4* lo, float4* vel)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const D4 x = m.xm[i], v = m.vt[i], a2 = m.a2[i], j6 = m.j6[i], k18 = m.k18[i];
    const bool empty = m.name[i] < 0;
    const double mass = empty ? 0.0 : x.w;
    const double xs[3] = {x.x, x.y, x.z}, vs[3] = {v.x, v.y, v.z}, as[3] = {a2.x, a2.y, a2.z},
                 js[3] = {j6.x, j6.y, j6.z}, ks[3] = {k18.x, k18.y, k18.z};
    double p[3], q[3];
    grape6_predict(t - v.w, xs, vs, as, js, ks, p, q);
    const double px = p[0], py = p[1], pz = p[2], qx = q[0], qy = q[1], qz = q[2];
    if (xp) {
        xp[i] = D4{px, py, pz, mass};
        vp[i] = D4{qx, qy, qz, 0.0};
    } else if (empty) {
        hi[i] = make_float4(kFarAway, kFarAway, kFarAway, 0.f);
        lo[i] = make_float4(0.f, 0.f, 0.f, __uint_as_float(kEmptyName));
        vel[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    } else {
        const gpu::FloatPair sx = gpu::split_double(px), sy = gpu::split_double(py), sz = gpu::split_double(pz);
        hi[i] = make_float4(sx.hi, sy.hi, sz.hi, static_cast<float>(mass));
        lo[i] = make_float4(sx.lo, sy.lo, sz.lo, __uint_as_float(static_cast<unsigned>(m.name[i])));
        vel[i] = make_float4(static_cast<float>(qx), static_cast<float>(qy), static_cast<float>(qz), 0.f);
    }
}

struct Partial {
    double ax, ay, az, jx, jy, jz, pot, nearest_r2;
    long long nearest;
};

struct NeighbourLists {
    int capacity;       // 0: no lists
    int* count;         // [ni]
    long long* entries; // [ni * capacity]
};

__device__ inline void note_pair(double r2, long long name, double h2, int i, double& best, long long& best_name,
                                 const NeighbourLists& lists)
{
    if (r2 < best || (r2 == best && name < best_name)) {
        best = r2;
        best_name = name;
    }
    if (lists.capacity > 0 && r2 < h2) {
        const int at = atomicAdd(&lists.count[i], 1);
        if (at < lists.capacity) lists.entries[static_cast<std::size_t>(i) * lists.capacity + at] = name;
    }
}

// One thread per i-particle; blockIdx.y is the j-split. kMixed: positions as float pairs.
template <bool kMixed>
__global__ void __launch_bounds__(kThreads)
    grape_kernel(int nj, const D4* xp, const D4* vp, const float4* hi, const float4* lo, const float4* vel,
                 const long long* jname, int ni, const D4* ip, int chunk, double eps2, NeighbourLists lists,
                 Partial* partial, int* coincident)
{
    __shared__ D4 sx[kThreads], sv[kThreads];
    __shared__ float4 sh[kThreads], sl[kThreads], sw[kThreads];
    __shared__ long long sn[kThreads];
    const int i = blockIdx.x * kThreads + threadIdx.x;
    const int ic = i < ni ? i : ni - 1;
    const D4 x = ip[ic], v = ip[ni + ic]; // (x, name's bits), then (v, h2): see evaluate()
    const long long self = __double_as_longlong(x.w);
    const double radius2 = v.w;
    // The i-particle as a float pair too (mixed).
    const gpu::FloatPair px = gpu::split_double(x.x), py = gpu::split_double(x.y), pz = gpu::split_double(x.z);
    const float hx = px.hi, hy = py.hi, hz = pz.hi, lx = px.lo, ly = py.lo, lz = pz.lo;
    const float vx = static_cast<float>(v.x), vy = static_cast<float>(v.y), vz = static_cast<float>(v.z);
    AccumJerk<double> sum;
    double best = INFINITY;
    long long best_name = -1;
    // A warp whose i-particles are all past the end only helps load the tiles.
    const bool warp_busy = (blockIdx.x * kThreads + (threadIdx.x & ~31)) < ni;
    const int j_begin = blockIdx.y * chunk, j_end = min(nj, j_begin + chunk);
    for (int base = j_begin; base < j_end; base += kThreads) {
        const int jl = base + threadIdx.x;
        if (jl < j_end) {
            if (kMixed) {
                sh[threadIdx.x] = hi[jl];
                sl[threadIdx.x] = lo[jl];
                sw[threadIdx.x] = vel[jl];
            } else {
                sx[threadIdx.x] = xp[jl];
                sv[threadIdx.x] = vp[jl];
            }
            sn[threadIdx.x] = jname[jl];
        }
        __syncthreads();
        const int count = warp_busy ? min(kThreads, j_end - base) : 0;
        AccumJerk<float> part;
        for (int s = 0; s < count; ++s) {
            const long long name = sn[s];
            if (name < 0 || name == self || i >= ni) continue;
            if (kMixed) {
                const float4 h = sh[s], l = sl[s], w = sw[s];
                const float dx = gpu::pair_difference(h.x, l.x, hx, lx), dy = gpu::pair_difference(h.y, l.y, hy, ly),
                            dz = gpu::pair_difference(h.z, l.z, hz, lz);
                const float r2 = dx * dx + dy * dy + dz * dz;
                if (r2 == 0.f && eps2 == 0.0) {
                    atomicExch(coincident, 1);
                    continue;
                }
                part = p2p_jerk(part, dx, dy, dz, w.x - vx, w.y - vy, w.z - vz, h.w, static_cast<float>(eps2));
                note_pair(r2, name, radius2, i, best, best_name, lists);
            } else {
                const D4 xj = sx[s], vj = sv[s];
                const double dx = xj.x - x.x, dy = xj.y - x.y, dz = xj.z - x.z;
                const double r2 = dx * dx + dy * dy + dz * dz;
                if (r2 == 0.0 && eps2 == 0.0) {
                    atomicExch(coincident, 1);
                    continue;
                }
                sum = p2p_jerk(sum, dx, dy, dz, vj.x - v.x, vj.y - v.y, vj.z - v.z, xj.w, eps2);
                note_pair(r2, name, radius2, i, best, best_name, lists);
            }
        }
        if (kMixed) flush(sum, part);
        __syncthreads();
    }
    if (i < ni)
        partial[static_cast<std::size_t>(blockIdx.y) * ni + i] =
            Partial{sum.ax, sum.ay, sum.az, sum.jx, sum.jy, sum.jz, sum.pot, best, best_name};
}

// The mixed kernel for calls without neighbour lists (a Hermite client's every step). kT
// i-particles per thread can share each shared-memory load of a j-particle; one per thread, with
// the j-loop unrolled 8 times, ran fastest on the H100 at N = 64k (bench/results/grape.md).
// The nearest neighbour costs one 64-bit minimum per pair of a key (the unsoftened r^2's float
// bits, the name): a non-negative float's bits order as the float does, so the key orders by
// distance and then by name. The pair with the i-particle's own name gets an infinite r^2 and
// empty slots sit at kFarAway, so neither needs a test of its own; a key that ends as either
// means no neighbour. The name rides in the low position's fourth word (kEmptyName above). With
// eps = 0 p2p_jerk_r2 drops a pair at zero distance, which then shows as a nearest r^2 of 0 and
// is reported by the host.
constexpr int kTargetsPerThread = 1;
constexpr unsigned kInfiniteBits = 0x7f800000u; // +inf as a float's bits

template <int kT, bool kSoftened>
__global__ void __launch_bounds__(kThreads)
    grape_mixed_kernel(int nj, const float4* __restrict__ hi, const float4* __restrict__ lo,
                       const float4* __restrict__ vel, int ni, const D4* __restrict__ ip, int chunk, float eps2,
                       Partial* __restrict__ partial)
{
    __shared__ float4 sh[kThreads], sl[kThreads], sw[kThreads];
    float3 xh[kT], xl[kT], v[kT];
    unsigned self[kT];
    AccumJerk<double> sum[kT];
    unsigned long long best[kT];
#pragma unroll
    for (int u = 0; u < kT; ++u) {
        const int i = (blockIdx.x * kT + u) * kThreads + threadIdx.x;
        const int ic = i < ni ? i : ni - 1;
        const D4 x = ip[ic], w = ip[ni + ic];
        const gpu::FloatPair px = gpu::split_double(x.x), py = gpu::split_double(x.y), pz = gpu::split_double(x.z);
        xh[u] = make_float3(px.hi, py.hi, pz.hi);
        xl[u] = make_float3(px.lo, py.lo, pz.lo);
        v[u] = make_float3(static_cast<float>(w.x), static_cast<float>(w.y), static_cast<float>(w.z));
        self[u] = static_cast<unsigned>(__double_as_longlong(x.w));
        best[u] = ~0ull;
    }
    // A warp whose i-particles are all past the end (a block step of a few particles) only helps
    // load the tiles.
    const bool warp_busy = (blockIdx.x * kT * kThreads + (threadIdx.x & ~31)) < ni;
    const int j_begin = blockIdx.y * chunk, j_end = min(nj, j_begin + chunk);
    for (int base = j_begin; base < j_end; base += kThreads) {
        const int jl = base + threadIdx.x;
        if (jl < j_end) {
            sh[threadIdx.x] = hi[jl];
            sl[threadIdx.x] = lo[jl];
            sw[threadIdx.x] = vel[jl];
        }
        __syncthreads();
        const int count = warp_busy ? min(kThreads, j_end - base) : 0;
        AccumJerk<float> part[kT];
#pragma unroll 8
        for (int s = 0; s < count; ++s) {
            const float4 h = sh[s], l = sl[s], w = sw[s];
            const unsigned name = __float_as_uint(l.w);
#pragma unroll
            for (int u = 0; u < kT; ++u) {
                const float dx = (h.x - xh[u].x) + (l.x - xl[u].x), dy = (h.y - xh[u].y) + (l.y - xl[u].y),
                            dz = (h.z - xh[u].z) + (l.z - xl[u].z);
                const bool self_pair = name == self[u];
                const float r2 = dx * dx + dy * dy + dz * dz;
                part[u] = p2p_jerk_r2<!kSoftened>(part[u], dx, dy, dz, w.x - v[u].x, w.y - v[u].y, w.z - v[u].z,
                                                  self_pair ? 0.f : h.w, r2 + eps2);
                const unsigned bits = self_pair ? kInfiniteBits : __float_as_uint(r2);
                best[u] = min(best[u], (static_cast<unsigned long long>(bits) << 32) | name);
            }
        }
#pragma unroll
        for (int u = 0; u < kT; ++u) flush(sum[u], part[u]);
        __syncthreads();
    }
#pragma unroll
    for (int u = 0; u < kT; ++u) {
        const int i = (blockIdx.x * kT + u) * kThreads + threadIdx.x;
        if (i >= ni) continue;
        const bool found = (best[u] >> 32) < kInfiniteBits && (best[u] & 0xffffffffull) != kEmptyName;
        const double r2 = found ? static_cast<double>(__uint_as_float(static_cast<unsigned>(best[u] >> 32))) : INFINITY;
        const long long name = found ? static_cast<long long>(best[u] & 0xffffffffull) : -1;
        partial[static_cast<std::size_t>(blockIdx.y) * ni + i] =
            Partial{sum[u].ax, sum[u].ay, sum[u].az, sum[u].jx, sum[u].jy, sum[u].jz, sum[u].pot, r2, name};
    }
}

// Keeps the nearer of two candidates: smaller r^2, then the smaller name; -1 is no candidate.
__device__ inline void keep_nearer(double& r2, long long& name, double other_r2, long long other_name)
{
    if (other_name >= 0 && (name < 0 || other_r2 < r2 || (other_r2 == r2 && other_name < name))) {
        r2 = other_r2;
        name = other_name;
    }
}

// One warp per i-particle (gpu/split_reduce.cuh); the nearest neighbour is the nearest of the
// splits', which does not depend on the order of comparison.
__global__ void reduce_kernel(int ni, int splits, const Partial* partial, Partial* out)
{
    const int i = gpu::warp_target();
    if (i >= ni) return; // whole warps
    double t[7];
    gpu::warp_sum_splits(partial, splits, ni, i, t);
    double r2 = INFINITY;
    long long name = -1;
    for (int y = static_cast<int>(threadIdx.x % 32); y < splits; y += 32) {
        const Partial& p = partial[static_cast<std::size_t>(y) * ni + i];
        keep_nearer(r2, name, p.nearest_r2, p.nearest);
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        const double other_r2 = __shfl_down_sync(~0u, r2, offset);
        const long long other_name = __shfl_down_sync(~0u, name, offset);
        keep_nearer(r2, name, other_r2, other_name);
    }
    if (threadIdx.x % 32 == 0) out[i] = Partial{t[0], t[1], t[2], t[3], t[4], t[5], t[6], r2, name};
}

} // namespace

struct GrapeGpuEngine::Impl {
    Precision precision;
    int device = -1; // -1: whichever is current
    int sm_count = 0;
    cudaStream_t stream = nullptr;
    // j-particles set since the last upload are staged in h_packed, 5 D4 each (see scatter_kernel),
    // straight from set(): the device holds the only whole copy of the j-memory.
    std::size_t slots = 0;
    std::size_t staged = 0;
    std::vector<std::int32_t> staged_at; // per slot: its place in h_packed, -1 if not staged
    std::int64_t max_j_name = -1;        // the largest name ever stored (the fast kernel takes 31 bits)
    bool upload_in_flight = false;       // h_packed may still be read by the device
    double predicted_t = 0;
    std::size_t predicted_n = 0;
    bool predicted = false;
    gpu::DeviceBuffer<D4> d_xm, d_vt, d_a2, d_j6, d_k18, d_xp, d_vp, d_packed, d_i;
    gpu::DeviceBuffer<long long> d_name, d_entries;
    gpu::DeviceBuffer<float4> d_hi, d_lo, d_vel;
    gpu::DeviceBuffer<int> d_count, d_coincident;
    gpu::DeviceBuffer<Partial> d_partial, d_out;
    gpu::PinnedBuffer<D4> h_packed, h_i;
    gpu::PinnedBuffer<long long> h_entries;
    gpu::PinnedBuffer<int> h_count, h_coincident;
    gpu::PinnedBuffer<Partial> h_out;

    Impl(Precision p, int device) : precision(p)
    {
        if (p == Precision::Float)
            throw std::invalid_argument("the GRAPE engine on the GPU: precision mixed or double");
        if (cuda_device_count() == 0) throw std::runtime_error("direct-gpu: no CUDA device is visible");
        this->device = device;
        if (device >= 0) select_cuda_device(device); // checks it is visible
        sm_count = describe_device().sm_count;
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    }
    ~Impl()
    {
        if (device >= 0) cudaSetDevice(device);
        cudaStreamDestroy(stream);
    }

    // Several engines of one thread may live on different devices (libg5's boards): each call
    // makes its own current first.
    void use_device() const
    {
        if (device >= 0) CUDA_CHECK(cudaSetDevice(device));
    }

    JMemory device_memory()
    {
        return {d_xm.data(), d_vt.data(), d_a2.data(), d_j6.data(), d_k18.data(), d_name.data()};
    }

    // Grows or shrinks the j-memory to n slots, keeping the first min(n, slots) (a client may add
    // particles between force calls); new slots are empty (name -1, mass 0).
    void resize_memory(std::size_t n)
    {
        upload_staged();
        synchronize();
        const std::size_t room = std::max<std::size_t>(n, 1), keep = std::min(n, slots);
        for (auto* b : {&d_xm, &d_vt, &d_a2, &d_j6, &d_k18}) b->reserve_keeping(room, keep, "GRAPE j-memory");
        d_name.reserve_keeping(room, keep, "GRAPE j-memory");
        for (auto* b : {&d_xp, &d_vp}) b->reserve(room, "GRAPE predicted j-particles");
        for (auto* b : {&d_hi, &d_lo, &d_vel}) b->reserve(room, "GRAPE predicted j-particles");
        if (n > slots) {
            const std::size_t added = n - slots;
            for (auto* b : {&d_xm, &d_vt, &d_a2, &d_j6, &d_k18})
                CUDA_CHECK(cudaMemsetAsync(b->data() + slots, 0, added * sizeof(D4), stream));
            CUDA_CHECK(cudaMemsetAsync(d_name.data() + slots, 0xff, added * sizeof(long long), stream)); // -1
        }
        h_packed.reserve(5 * room, "GRAPE upload"); // nothing staged now: set() never needs to grow it
        staged_at.assign(n, -1);
        slots = n;
        predicted = false;
    }

    // The stream is idle again: h_packed may be written.
    void synchronize()
    {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        upload_in_flight = false;
    }

    void stage(std::size_t slot, const GrapeJParticle& p)
    {
        // Normally evaluate() has waited for its upload; after an evaluation that failed midway it
        // may still be in flight.
        if (upload_in_flight) synchronize();
        std::int32_t& at = staged_at[slot];
        if (at < 0) at = static_cast<std::int32_t>(staged++);
        D4* q = h_packed.data() + 5 * static_cast<std::size_t>(at);
        q[0] = D4{p.x[0], p.x[1], p.x[2], p.mass};
        q[1] = D4{p.v[0], p.v[1], p.v[2], p.t};
        q[2] = D4{p.a2[0], p.a2[1], p.a2[2], bits_as_double(static_cast<std::int64_t>(slot))};
        q[3] = D4{p.j6[0], p.j6[1], p.j6[2], bits_as_double(p.name)};
        q[4] = D4{p.k18[0], p.k18[1], p.k18[2], 0.0};
        max_j_name = std::max(max_j_name, p.name);
        predicted = false;
    }

    void upload_staged()
    {
        const std::size_t k = staged;
        if (k == 0) return;
        d_packed.reserve(5 * k, "GRAPE upload");
        CUDA_CHECK(
            cudaMemcpyAsync(d_packed.data(), h_packed.data(), 5 * k * sizeof(D4), cudaMemcpyHostToDevice, stream));
        scatter_kernel<<<static_cast<unsigned>(ceil_div(k, 256)), 256, 0, stream>>>(static_cast<int>(k),
                                                                                    d_packed.data(), device_memory());
        gpu::check_launch("GRAPE scatter_kernel", stream);
        upload_in_flight = true; // until synchronize(): stage() waits for it
        for (std::size_t u = 0; u < k; ++u)
            staged_at[static_cast<std::size_t>(double_bits(h_packed[5 * u + 2].w))] = -1;
        staged = 0;
        predicted = false;
    }
};

GrapeGpuEngine::GrapeGpuEngine(Precision precision, int device) : impl_(std::make_unique<Impl>(precision, device)) {}
GrapeGpuEngine::~GrapeGpuEngine() = default;

std::string GrapeGpuEngine::name() const
{
    return std::string("direct-gpu (") + precision_name(impl_->precision) + ")";
}

void GrapeGpuEngine::resize(std::size_t slots)
{
    impl_->use_device();
    impl_->resize_memory(slots);
}

std::size_t GrapeGpuEngine::size() const
{
    return impl_->slots;
}

void GrapeGpuEngine::set(std::size_t slot, const GrapeJParticle& p)
{
    Impl& d = *impl_;
    if (slot >= d.slots)
        throw std::out_of_range("j-particle address " + std::to_string(slot) + " beyond the memory of " +
                                std::to_string(d.slots));
    d.stage(slot, p);
}

void GrapeGpuEngine::evaluate(double t, std::size_t nj, const GrapeIParticles& in, double eps2,
                              std::size_t neighbour_capacity, GrapeResults& out)
{
    Impl& d = *impl_;
    if (nj > d.slots)
        throw std::out_of_range("nj = " + std::to_string(nj) + " beyond the j-memory of " + std::to_string(d.slots));
    const bool mixed = d.precision == Precision::Mixed;
    d.use_device();
    d.upload_staged();
    if (!d.predicted || d.predicted_t != t || d.predicted_n != nj) {
        if (nj > 0)
            predict_kernel<<<static_cast<unsigned>(ceil_div(nj, 256)), 256, 0, d.stream>>>(
                static_cast<int>(nj), t, d.device_memory(), mixed ? nullptr : d.d_xp.data(),
                mixed ? nullptr : d.d_vp.data(), d.d_hi.data(), d.d_lo.data(), d.d_vel.data());
        gpu::check_launch("GRAPE predict_kernel", d.stream);
        d.predicted = true;
        d.predicted_t = t;
        d.predicted_n = nj;
    }
    const std::size_t ni = in.size();
    out.acc.assign(3 * ni, 0.0);
    out.jerk.assign(3 * ni, 0.0);
    out.pot.assign(ni, 0.0);
    out.nearest.assign(ni, -1);
    out.nearest_r2.assign(ni, INFINITY);
    const bool lists = neighbour_capacity > 0;
    out.offset.assign(lists ? ni : 0, 0);
    out.count.assign(lists ? ni : 0, 0);
    out.overflowed.assign(lists ? ni : 0, 0);
    out.neighbours.assign(lists ? ni * neighbour_capacity : 0, -1);
    if (ni == 0) return;

    // The i-particles in one upload: ni of (x, name's bits), then ni of (v, h2).
    d.h_i.reserve(2 * ni, "GRAPE i-particles");
    d.d_i.reserve(2 * ni, "GRAPE i-particles");
    bool narrow_names = d.max_j_name < static_cast<std::int64_t>(kEmptyName / 2); // fit the fast kernel's 32 bits
    for (std::size_t k = 0; k < ni; ++k) {
        d.h_i[k] = D4{in.x[3 * k], in.x[3 * k + 1], in.x[3 * k + 2], bits_as_double(in.name[k])};
        d.h_i[ni + k] = D4{in.v[3 * k], in.v[3 * k + 1], in.v[3 * k + 2], in.h2[k]};
        narrow_names = narrow_names && in.name[k] >= INT32_MIN && in.name[k] <= INT32_MAX;
    }
    const bool fast = mixed && !lists && narrow_names;
    CUDA_CHECK(cudaMemcpyAsync(d.d_i.data(), d.h_i.data(), 2 * ni * sizeof(D4), cudaMemcpyHostToDevice, d.stream));
    NeighbourLists nl{0, nullptr, nullptr};
    if (lists) {
        d.d_count.reserve(ni, "GRAPE neighbour counts");
        d.h_count.reserve(ni, "GRAPE neighbour counts");
        d.d_entries.reserve(ni * neighbour_capacity, "GRAPE neighbour lists");
        d.h_entries.reserve(ni * neighbour_capacity, "GRAPE neighbour lists");
        CUDA_CHECK(cudaMemsetAsync(d.d_count.data(), 0, ni * sizeof(int), d.stream));
        nl = NeighbourLists{static_cast<int>(neighbour_capacity), d.d_count.data(), d.d_entries.data()};
    }
    d.d_coincident.reserve(1, "GRAPE flags");
    d.h_coincident.reserve(1, "GRAPE flags");
    d.h_coincident[0] = 0;
    if (!fast) CUDA_CHECK(cudaMemsetAsync(d.d_coincident.data(), 0, sizeof(int), d.stream));

    const std::size_t per_block = fast ? static_cast<std::size_t>(kThreads) * kTargetsPerThread : kThreads;
    // A softening that is a normal float keeps every r^2 + eps^2 > 0 (even flushed to zero), so the
    // fast kernel then drops its test for a pair at zero distance.
    const float eps2f = static_cast<float>(eps2);
    using gpu::resident_blocks_per_sm;
    const int blocks_per_sm =
        fast ? (eps2f >= FLT_MIN ? resident_blocks_per_sm<grape_mixed_kernel<kTargetsPerThread, true>, kThreads>()
                                 : resident_blocks_per_sm<grape_mixed_kernel<kTargetsPerThread, false>, kThreads>())
             : (mixed ? resident_blocks_per_sm<grape_kernel<true>, kThreads>()
                      : resident_blocks_per_sm<grape_kernel<false>, kThreads>());
    const gpu::JSplit plan =
        gpu::plan_j_split(ni, per_block, std::max<std::size_t>(nj, 1), kThreads, d.sm_count, blocks_per_sm, 0);
    d.d_partial.reserve(static_cast<std::size_t>(plan.splits) * ni, "GRAPE partial sums");
    d.d_out.reserve(ni, "GRAPE results");
    d.h_out.reserve(ni, "GRAPE results");
    const dim3 grid(static_cast<unsigned>(plan.i_blocks), static_cast<unsigned>(plan.splits));
    if (fast && eps2f >= FLT_MIN)
        grape_mixed_kernel<kTargetsPerThread, true><<<grid, kThreads, 0, d.stream>>>(
            static_cast<int>(nj), d.d_hi.data(), d.d_lo.data(), d.d_vel.data(), static_cast<int>(ni), d.d_i.data(),
            plan.chunk, eps2f, d.d_partial.data());
    else if (fast)
        grape_mixed_kernel<kTargetsPerThread, false><<<grid, kThreads, 0, d.stream>>>(
            static_cast<int>(nj), d.d_hi.data(), d.d_lo.data(), d.d_vel.data(), static_cast<int>(ni), d.d_i.data(),
            plan.chunk, eps2f, d.d_partial.data());
    else if (mixed)
        grape_kernel<true><<<grid, kThreads, 0, d.stream>>>(
            static_cast<int>(nj), nullptr, nullptr, d.d_hi.data(), d.d_lo.data(), d.d_vel.data(), d.d_name.data(),
            static_cast<int>(ni), d.d_i.data(), plan.chunk, eps2, nl, d.d_partial.data(), d.d_coincident.data());
    else
        grape_kernel<false><<<grid, kThreads, 0, d.stream>>>(
            static_cast<int>(nj), d.d_xp.data(), d.d_vp.data(), nullptr, nullptr, nullptr, d.d_name.data(),
            static_cast<int>(ni), d.d_i.data(), plan.chunk, eps2, nl, d.d_partial.data(), d.d_coincident.data());
    gpu::check_launch("grape_kernel", d.stream);
    reduce_kernel<<<gpu::warp_reduce_blocks(ni), gpu::kReduceThreads, 0, d.stream>>>(
        static_cast<int>(ni), plan.splits, d.d_partial.data(), d.d_out.data());
    gpu::check_launch("GRAPE reduce_kernel", d.stream);
    CUDA_CHECK(cudaMemcpyAsync(d.h_out.data(), d.d_out.data(), ni * sizeof(Partial), cudaMemcpyDeviceToHost, d.stream));
    if (!fast)
        CUDA_CHECK(cudaMemcpyAsync(d.h_coincident.data(), d.d_coincident.data(), sizeof(int), cudaMemcpyDeviceToHost,
                                   d.stream));
    if (lists) {
        CUDA_CHECK(
            cudaMemcpyAsync(d.h_count.data(), d.d_count.data(), ni * sizeof(int), cudaMemcpyDeviceToHost, d.stream));
        CUDA_CHECK(cudaMemcpyAsync(d.h_entries.data(), d.d_entries.data(), ni * neighbour_capacity * sizeof(long long),
                                   cudaMemcpyDeviceToHost, d.stream));
    }
    d.synchronize();
    // The general kernel flags a pair at zero distance; the fast one leaves it as a nearest r^2 of
    // 0, which also names the pair (a softening below float's normal range counts as 0 there).
    if (fast && eps2f < FLT_MIN)
        for (std::size_t k = 0; k < ni; ++k)
            if (d.h_out[k].nearest_r2 == 0 && d.h_out[k].nearest >= 0)
                throw std::runtime_error("two particles of different names are at the same position and the softening "
                                         "is 0: their force is infinite (names " +
                                         std::to_string(in.name[k]) + " and " + std::to_string(d.h_out[k].nearest) +
                                         ")");
    if (d.h_coincident[0])
        throw std::runtime_error("two particles of different names are at the same position and the softening is 0: "
                                 "their force is infinite");
    for (std::size_t k = 0; k < ni; ++k) {
        const Partial& p = d.h_out[k];
        out.acc[3 * k] = p.ax;
        out.acc[3 * k + 1] = p.ay;
        out.acc[3 * k + 2] = p.az;
        out.jerk[3 * k] = p.jx;
        out.jerk[3 * k + 1] = p.jy;
        out.jerk[3 * k + 2] = p.jz;
        out.pot[k] = p.pot;
        out.nearest[k] = p.nearest;
        out.nearest_r2[k] = p.nearest_r2;
        if (lists) {
            const auto count = static_cast<std::size_t>(d.h_count[k]);
            const std::size_t kept = std::min(count, neighbour_capacity);
            out.offset[k] = static_cast<std::int64_t>(k * neighbour_capacity);
            out.count[k] = static_cast<std::int64_t>(count);
            out.overflowed[k] = count > neighbour_capacity;
            auto first = out.neighbours.begin() + static_cast<std::ptrdiff_t>(k * neighbour_capacity);
            std::copy(d.h_entries.data() + k * neighbour_capacity, d.h_entries.data() + k * neighbour_capacity + kept,
                      first);
            // The device appends in arrival order; a list that overflowed kept whichever came first,
            // so it is reported (overflowed) and the client asks for a smaller radius.
            std::sort(first, first + static_cast<std::ptrdiff_t>(kept));
        }
    }
}

} // namespace grove
