// Hierarchical time steps (docs/block-timesteps.md): each particle steps by dt_max / 2^k, k its
// bin, on an integer timeline of 2^kTimelineBits ticks per dt_max, so that a particle's times are
// exact multiples of its step and the bins synchronise without rounding. Shared by the host and
// the device (the resident step chooses bins where the accelerations are).
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.hpp"

namespace grove {

// Bins 0 .. kMaxBin: the shortest step is dt_max / 2^kMaxBin, a timeline tick.
constexpr int kMaxBin = 30;
using Tick = std::int64_t;
constexpr Tick kTicksPerMaxStep = Tick{1} << kMaxBin;

// Ticks of a step in bin k.
HOST_DEVICE constexpr Tick ticks_of_bin(int k)
{
    return Tick{1} << (kMaxBin - k);
}

// Whether a particle of bin k is due at tick t (its step ends there).
HOST_DEVICE constexpr bool bin_due(int k, Tick t)
{
    return (t & (ticks_of_bin(k) - 1)) == 0;
}

// The longest step's bin due at tick t: every bin from it to kMaxBin is due there (0 where all are).
HOST_DEVICE constexpr int longest_due_bin(Tick t)
{
    int k = kMaxBin;
    while (k > 0 && bin_due(k - 1, t)) --k;
    return k;
}

// GADGET's criterion dt = sqrt(2 eta eps / |a|) (eps: the particle's softening length). Infinite
// where |a| is 0 (the caller clamps to dt_max); NaN where |a| is not finite, which bin_for_step
// sends to the shortest bin.
HOST_DEVICE inline double gadget_time_step(double eta, double eps, double acceleration)
{
    return sqrt(2 * eta * eps / acceleration);
}

// The optional cap by the dynamical time (Zemp et al. 2007): dt = eta_dyn sqrt(r^3 / (G M(<r))),
// r a particle's distance from the centre of mass, floored at its softening, and M(<r) the mass
// within r, read off a profile made at the start of each dt_max. GADGET's criterion alone looks
// at |a|, which levels off in a cusp and falls to zero within the softening, while the orbits
// there are the shortest: it gives a galaxy's centre steps too long for its orbits, which made
// most of a block run's energy error (bench/results/step.md).
constexpr int kProfilePoints = 64;

// The mass fraction of the profile's point k: 1e-5 to 1, evenly spaced in log (host only; the
// profile carries the values to the device).
inline double profile_fraction(int k)
{
    return std::pow(10.0, -5.0 + 5.0 * k / (kProfilePoints - 1));
}

// The radii about the centre of mass that enclose fraction[k] of the mass (the Lagrangian radii of
// those fractions), by value so that a kernel can take it as an argument.
struct EnclosedMassProfile {
    double centre[3] = {0, 0, 0};
    double mass = 0;
    double fraction[kProfilePoints] = {};
    double radius[kProfilePoints] = {};
};

// A profile of `mass` about `centre` with its fractions set, its radii still to fill.
inline EnclosedMassProfile profile_about(double mass, const double centre[3])
{
    EnclosedMassProfile p;
    p.mass = mass;
    for (int d = 0; d < 3; ++d) p.centre[d] = centre[d];
    for (int k = 0; k < kProfilePoints; ++k) p.fraction[k] = profile_fraction(k);
    return p;
}

// The mass within r, interpolated linearly between the profile's points; within its first
// point, that point's mass (more than the truth: a shorter step). Rounded alike on the host and
// the device, so that the bins it sets are the same on both.
HOST_DEVICE inline double enclosed_mass(const EnclosedMassProfile& p, double r)
{
    if (!(r > p.radius[0])) return mul_rn(p.mass, p.fraction[0]);
    int lo = 0, hi = kProfilePoints - 1; // radius[lo] < r <= radius[hi]
    if (r >= p.radius[hi]) return p.mass;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (p.radius[mid] < r)
            lo = mid;
        else
            hi = mid;
    }
    const double span = add_rn(p.radius[hi], -p.radius[lo]);
    const double t = span > 0 ? add_rn(r, -p.radius[lo]) / span : 1.0;
    const double f = add_rn(p.fraction[lo], mul_rn(add_rn(p.fraction[hi], -p.fraction[lo]), t));
    return mul_rn(p.mass, f);
}

// The cap eta_dyn sqrt(r^3 / (G M(<r))) at position (x, y, z), r floored at eps.
HOST_DEVICE inline double dynamical_time_step(double eta_dyn, double G, const EnclosedMassProfile& p, double x,
                                              double y, double z, double eps)
{
    const double dx = add_rn(x, -p.centre[0]), dy = add_rn(y, -p.centre[1]), dz = add_rn(z, -p.centre[2]);
    double r = sqrt(add_rn(add_rn(mul_rn(dx, dx), mul_rn(dy, dy)), mul_rn(dz, dz)));
    if (r < eps) r = eps;
    const double m = enclosed_mass(p, r);
    return mul_rn(eta_dyn, sqrt(mul_rn(mul_rn(r, r), r) / mul_rn(G, m)));
}

// The shorter of GADGET's step and the dynamical time's cap; a step that is not a number stays so
// (bin_for_step sends it to the shortest bin).
HOST_DEVICE inline double capped_step(double wanted, double cap)
{
    return cap < wanted ? cap : wanted;
}

// The longest bin step dt_max / 2^k that is no longer than `wanted` (k = 0 for wanted >= dt_max,
// kMaxBin for wanted at or below a tick, or not a number).
HOST_DEVICE inline int bin_for_step(double wanted, double dt_max)
{
    if (!(wanted > 0)) return kMaxBin;
    if (wanted >= dt_max) return 0;
    // dt_max / 2^k <= wanted  <=>  k >= log2(dt_max / wanted); frexp rounds nothing.
    int exponent = 0;
    const double mantissa = frexp(dt_max / wanted, &exponent); // ratio = mantissa 2^exponent, mantissa in [0.5, 1)
    const int k = mantissa == 0.5 ? exponent - 1 : exponent;
    return k > kMaxBin ? kMaxBin : k;
}

// The bin a due particle moves to at tick t, given the one its criterion asks for: a shorter step
// at once (its acceleration jumped), a longer one only where that bin is due at t too (so the
// particle's time stays a multiple of its step), else the longest due bin on the way.
HOST_DEVICE inline int next_bin(int current, int wanted, Tick t)
{
    if (wanted >= current) return wanted;
    int k = current;
    while (k > wanted && bin_due(k - 1, t)) --k;
    return k;
}

} // namespace grove
