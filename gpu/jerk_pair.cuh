// The Hermite kernels' pair (gpu/hermite.cu), for each precision: how a tile keeps its sources,
// how a thread keeps its targets, and one source-target pair's acceleration, jerk and potential.
// In a header so that the loop-ceiling kernel (gpu/loop_ceiling.cu) runs exactly this pair.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "gpu/coincident_pair.cuh"
#include "gpu/float_pair.hpp"
#include "tree/gravity.hpp"
#include "tree/tree_arrays.hpp"

namespace grove::gpu {

// The j-particles of a tile as each precision keeps them in shared memory, and the targets as
// each thread keeps them in registers. Mixed: the predicted position as a float pair hi + lo
// (mass in hi.w) and the velocity in float, 48 bytes; double: position and mass, velocity, 64.
// The velocity's w holds the particle's h = eps^2 / 2 where the softening is per type
// (core/softening.hpp; 0 otherwise), and a target keeps it as h: a pair's eps^2 is t.h + half(s).
struct MixedJerkPolicy {
    using Real = float;
    struct Inputs {
        const float4 *hi, *lo, *vel;
    };
    struct Source {
        float4 hi, lo, v;
    };
    struct Target {
        float hx, hy, hz, lx, ly, lz, vx, vy, vz, h;
    };
    __device__ static Source load(const Inputs& in, int j) { return {in.hi[j], in.lo[j], in.vel[j]}; }
    __device__ static Target target(const Source& s)
    {
        return {s.hi.x, s.hi.y, s.hi.z, s.lo.x, s.lo.y, s.lo.z, s.v.x, s.v.y, s.v.z, s.v.w};
    }
    __device__ static Target target(const Inputs& in, int i) { return target(load(in, i)); }
    __device__ static float mass(const Source& s) { return s.hi.w; }
    __device__ static float half(const Source& s) { return s.v.w; }
    // Source minus target, exact in its leading part (Sapporo's double-single difference).
    __device__ static void differences(const Source& s, const Target& t, float d[3], float dv[3])
    {
        d[0] = gpu::pair_difference(s.hi.x, s.lo.x, t.hx, t.lx);
        d[1] = gpu::pair_difference(s.hi.y, s.lo.y, t.hy, t.ly);
        d[2] = gpu::pair_difference(s.hi.z, s.lo.z, t.hz, t.lz);
        dv[0] = s.v.x - t.vx;
        dv[1] = s.v.y - t.vy;
        dv[2] = s.v.z - t.vz;
    }
};

struct DoubleJerkPolicy {
    using Real = double;
    struct Inputs {
        const Vec4<double>*x, *v;
    };
    struct Source {
        Vec4<double> x, v;
    };
    struct Target {
        double x, y, z, vx, vy, vz, h;
    };
    __device__ static Source load(const Inputs& in, int j) { return {in.x[j], in.v[j]}; }
    __device__ static Target target(const Source& s) { return {s.x.x, s.x.y, s.x.z, s.v.x, s.v.y, s.v.z, s.v.w}; }
    __device__ static Target target(const Inputs& in, int i) { return target(load(in, i)); }
    __device__ static double mass(const Source& s) { return s.x.w; }
    __device__ static double half(const Source& s) { return s.v.w; }
    __device__ static void differences(const Source& s, const Target& t, double d[3], double dv[3])
    {
        d[0] = s.x.x - t.x;
        d[1] = s.x.y - t.y;
        d[2] = s.x.z - t.z;
        dv[0] = s.v.x - t.vx;
        dv[1] = s.v.y - t.vy;
        dv[2] = s.v.z - t.vz;
    }
};

// One pair: source s of mass m (0 for the target itself) on target i. kGuard (eps = 0): a pair at
// zero distance is dropped, and if its source has mass it is the first coincident pair seen.
template <class P, bool kGuard>
__device__ inline void jerk_pair(AccumJerk<typename P::Real>& acc, const typename P::Target& t,
                                 const typename P::Source& s, typename P::Real m, typename P::Real eps2, int i, int j,
                                 unsigned long long& first_coincident)
{
    using Real = typename P::Real;
    Real d[3], dv[3];
    P::differences(s, t, d, dv);
    const Real r2 = eps2 + d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    if (kGuard && r2 == Real(0) && m != Real(0) && i >= 0) first_coincident = min(first_coincident, pair_key(i, j));
    acc = p2p_jerk_r2<kGuard>(acc, d[0], d[1], d[2], dv[0], dv[1], dv[2], m, r2);
}

} // namespace grove::gpu
