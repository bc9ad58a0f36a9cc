// Interaction formulas shared by every engine: the CPU references, the GPU direct kernels and the
// tree evaluation kernels all call these, so a CPU test of them tests the GPU physics too.
//
// Conventions: d = x_source - x_target (so the acceleration points along +d), Plummer softening
// r^2 -> r^2 + eps^2, and the potential accumulates -m/r without G; engines multiply by G once.
// A pair at zero softened distance (the self pair, or coincident particles with eps = 0)
// contributes nothing: callers rely on this to keep eps = 0 free of NaN.
// Quadrupole expansion of the softened kernel (docs/softened-quadrupole.md): with r = x - R (R the
// source centre of mass), R_e^2 = r^2 + eps^2, Q_ij = sum m (3 d_i d_j - |d|^2 delta_ij) the
// traceless quadrupole and s = tr S = sum m |d|^2 the trace of the second moment about R,
//   phi = -[ M/R_e + 1/2 (r^T Q r - eps^2 s) / R_e^5 ],
//   a   = -M r/R_e^3 + Q r/R_e^5 - 5/2 (r^T Q r - eps^2 s) r / R_e^7.
// The eps^2 s terms are what softening adds at second order; without them (Hernquist 1987's
// form with r -> R_e) a cell within a few eps of the target is no better than its monopole.
#pragma once

#include "core/host_device.hpp"

namespace grove {

// Accumulated acceleration (without G) and potential (without G) of one target.
template <class T> struct Accum {
    T ax = 0, ay = 0, az = 0, pot = 0;
};

// A cell's second moments about its centre of mass: five components of the traceless
// quadrupole Q (zz = -xx - yy is not stored) and the trace s = sum m |d|^2 of the second moment,
// which the softened expansion needs.
template <class T> struct Quadrupole {
    T xx = 0, xy = 0, xz = 0, yy = 0, yz = 0, trace = 0;
    HOST_DEVICE T zz() const { return -(xx + yy); }
};

// Particle-particle: source of mass m at offset (dx,dy,dz) from the target.
// kZeroGuard = false drops the r^2 > 0 test (two instructions of the ~15 in the GPU inner loop);
// only valid when eps2 > 0 (and a self pair must then carry m = 0, as the tree evaluation gives it).
// kPotential = false leaves acc.pot alone: a leapfrog step's kick needs only the accelerations.
template <bool kZeroGuard = true, bool kPotential = true, class T>
HOST_DEVICE inline Accum<T> p2p(Accum<T> acc, T dx, T dy, T dz, T m, T eps2)
{
    const T r2 = eps2 + dx * dx + dy * dy + dz * dz; // eps2 first: three FMAs, no extra add
    const T inv_r = (!kZeroGuard || r2 > T(0)) ? rsqrt_fast(r2) : T(0);
    const T m_inv_r = m * inv_r;
    const T m_inv_r3 = m_inv_r * inv_r * inv_r;
    acc.ax += m_inv_r3 * dx;
    acc.ay += m_inv_r3 * dy;
    acc.az += m_inv_r3 * dz;
    if constexpr (kPotential) acc.pot -= m_inv_r;
    return acc;
}

// Particle-multipole: source cell of mass m and quadrupole q whose centre of mass lies at offset
// (dx,dy,dz) from the target. Monopole plus quadrupole; the dipole vanishes about the centre of mass.
// kZeroGuard = false drops the r^2 > 0 test: a cell the opening criterion accepted lies outside
// its opening sphere, never at zero distance, so the tree evaluation needs no guard.
// What m2p needs of a cell besides its mass, for one softening: the quadrupole with Q_zz spelled
// out and eps^2 s. They depend on the cell only, so a caller that evaluates one cell against
// several targets makes them once (the GPU node kernel, when it stages a tile of cells).
template <class T> struct alignas(8 * sizeof(T)) CellTerms {
    T xx, xy, xz, yy, yz, zz, eps2_trace, unused;
};

template <class T> HOST_DEVICE inline CellTerms<T> cell_terms(const Quadrupole<T>& q, T eps2)
{
    return {q.xx, q.xy, q.xz, q.yy, q.yz, q.zz(), eps2 * q.trace, T(0)};
}

// m2p with the cell's terms made already (kPotential as for p2p).
template <bool kZeroGuard = true, bool kPotential = true, class T>
HOST_DEVICE inline Accum<T> m2p_terms(Accum<T> acc, T dx, T dy, T dz, T m, const CellTerms<T>& q, T eps2)
{
    // In d = -r: Q r = -Q d and r^T Q r = d^T Q d, so
    //   a = (M/R_e^3 + 5/2 (d^T Q d - eps^2 s)/R_e^7) d - Q d/R_e^5
    //     = [(M R_e^2 + 5/2 (d^T Q d - eps^2 s)/R_e^2) d - Q d] / R_e^5,
    // one multiply fewer than the first form: each component of a is two multiply-adds.
    const T r2 = eps2 + dx * dx + dy * dy + dz * dz;
    const T inv_r = (!kZeroGuard || r2 > T(0)) ? rsqrt_fast(r2) : T(0);
    const T inv_r2 = inv_r * inv_r;
    const T inv_r5 = inv_r * inv_r2 * inv_r2;
    const T qdx = q.xx * dx + q.xy * dy + q.xz * dz;
    const T qdy = q.xy * dx + q.yy * dy + q.yz * dz;
    const T qdz = q.xz * dx + q.yz * dy + q.zz * dz;
    const T dqd = dx * qdx + (dy * qdy + (dz * qdz - q.eps2_trace)); // d^T Q d - eps^2 s
    // At r2 = 0 (guarded) inv_r5 = 0 makes the pair's terms exactly 0, as before.
    const T radial = T(2.5) * (dqd * inv_r2) + m * r2;
    acc.ax += inv_r5 * (radial * dx - qdx);
    acc.ay += inv_r5 * (radial * dy - qdy);
    acc.az += inv_r5 * (radial * dz - qdz);
    if constexpr (kPotential) {
        acc.pot -= m * inv_r;
        acc.pot -= T(0.5) * (dqd * inv_r5);
    }
    return acc;
}

template <bool kZeroGuard = true, class T>
HOST_DEVICE inline Accum<T> m2p(Accum<T> acc, T dx, T dy, T dz, T m, const Quadrupole<T>& q, T eps2)
{
    return m2p_terms<kZeroGuard>(acc, dx, dy, dz, m, cell_terms(q, eps2), eps2);
}

// Acceleration, jerk and potential of a softened pair for the Hermite scheme (kirin, Sapporo).
// dv = v_source - v_target. Jerk: m [dv/r^3 - 3 (d.dv) d / r^5].
template <class T> struct AccumJerk {
    T ax = 0, ay = 0, az = 0, jx = 0, jy = 0, jz = 0, pot = 0;
};

// A tile's sums in a narrower type (float) added into the wide totals (double): the mixed kernels
// flush once per tile so that the float sums never hold more than a tile's terms.
template <class Wide, class Narrow> HOST_DEVICE inline void flush(AccumJerk<Wide>& sum, const AccumJerk<Narrow>& part)
{
    sum.ax += part.ax;
    sum.ay += part.ay;
    sum.az += part.az;
    sum.jx += part.jx;
    sum.jy += part.jy;
    sum.jz += part.jz;
    sum.pot += part.pot;
}

// The pair's terms from its softened squared distance r2 = |d|^2 + eps^2 (a caller that needs
// the unsoftened |d|^2 too computes it once and adds eps^2). kMayBeZero = false: the caller knows
// r2 > 0 (eps > 0), and the test that drops a pair at zero distance goes.
template <bool kMayBeZero = true, class T>
HOST_DEVICE inline AccumJerk<T> p2p_jerk_r2(AccumJerk<T> acc, T dx, T dy, T dz, T dvx, T dvy, T dvz, T m, T r2)
{
    const T inv_r = !kMayBeZero || r2 > T(0) ? rsqrt_fast(r2) : T(0);
    const T inv_r2 = inv_r * inv_r;
    const T m_inv_r = m * inv_r;
    const T m_inv_r3 = m_inv_r * inv_r2;
    const T rv3 = T(3) * (dx * dvx + dy * dvy + dz * dvz) * inv_r2;
    acc.ax += m_inv_r3 * dx;
    acc.ay += m_inv_r3 * dy;
    acc.az += m_inv_r3 * dz;
    acc.jx += m_inv_r3 * minus_product(dvx, rv3, dx);
    acc.jy += m_inv_r3 * minus_product(dvy, rv3, dy);
    acc.jz += m_inv_r3 * minus_product(dvz, rv3, dz);
    acc.pot -= m_inv_r;
    return acc;
}

template <class T>
HOST_DEVICE inline AccumJerk<T> p2p_jerk(AccumJerk<T> acc, T dx, T dy, T dz, T dvx, T dvy, T dvz, T m, T eps2)
{
    // eps2 first: three FMAs, no extra add
    return p2p_jerk_r2(acc, dx, dy, dz, dvx, dvy, dvz, m, eps2 + dx * dx + dy * dy + dz * dz);
}

// Acceleration, jerk, snap and potential of a softened pair for the 6th-order scheme (Nitadori &
// Makino 2008): with d, dv, da = source - target in position, velocity and acceleration,
//   alpha = d.dv / r^2,  beta = (dv.dv + d.da) / r^2 + alpha^2,
//   a = m d / r^3,  j = m dv / r^3 - 3 alpha a,  s = m da / r^3 - 6 alpha j - 3 beta a.
template <class T> struct AccumSnap {
    T ax = 0, ay = 0, az = 0, jx = 0, jy = 0, jz = 0, sx = 0, sy = 0, sz = 0, pot = 0;
};

template <class T>
HOST_DEVICE inline AccumSnap<T> p2p_snap(AccumSnap<T> acc, const T d[3], const T dv[3], const T da[3], T m, T eps2)
{
    const T r2 = eps2 + d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    const T inv_r = r2 > T(0) ? rsqrt_fast(r2) : T(0);
    const T inv_r2 = inv_r * inv_r;
    const T m_inv_r = m * inv_r;
    const T m_inv_r3 = m_inv_r * inv_r2;
    const T alpha = (d[0] * dv[0] + d[1] * dv[1] + d[2] * dv[2]) * inv_r2;
    const T beta =
        (dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2] + d[0] * da[0] + d[1] * da[1] + d[2] * da[2]) * inv_r2 +
        alpha * alpha;
    T a[3], j[3], s[3];
    for (int k = 0; k < 3; ++k) {
        a[k] = m_inv_r3 * d[k];
        j[k] = m_inv_r3 * dv[k] - T(3) * alpha * a[k];
        s[k] = m_inv_r3 * da[k] - T(6) * alpha * j[k] - T(3) * beta * a[k];
    }
    acc.ax += a[0];
    acc.ay += a[1];
    acc.az += a[2];
    acc.jx += j[0];
    acc.jy += j[1];
    acc.jz += j[2];
    acc.sx += s[0];
    acc.sy += s[1];
    acc.sz += s[2];
    acc.pot -= m_inv_r;
    return acc;
}

} // namespace grove
