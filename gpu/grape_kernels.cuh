// The GRAPE engine's kernels (grape.cu launches them): the j-particles' memory and its scatter,
// GRAPE-6's predictor, the force and jerk kernels with neighbour lists (double and float pairs),
// the fast mixed kernel without them, and the reduction of the j-splits. Private to grape.cu.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>

#include "core/grape_engine.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/float_pair.hpp"
#include "gpu/split_reduce.cuh"
#include "tree/gravity.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

namespace {

using gpu::ceil_div;
using D4 = Vec4<double>;

// An int64 rides in a double's bits through an upload (core/host_device.hpp: bits_as_double; the
// kernels read it back with __double_as_longlong).
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

} // namespace grove
