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

// GADGET's criterion dt = sqrt(2 eta eps / |a|) (eps: the particle's softening length). Infinite
// where |a| is 0 (the caller clamps to dt_max); NaN where |a| is not finite, which bin_for_step
// sends to the shortest bin.
HOST_DEVICE inline double gadget_time_step(double eta, double eps, double acceleration)
{
    return sqrt(2 * eta * eps / acceleration);
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
