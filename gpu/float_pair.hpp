// A double held as a float pair hi + lo, hi = float(x) and lo = float(x - hi): about 48 bits, so
// that the difference of two positions, (hi - hi') + (lo - lo'), keeps the digits of close pairs
// with float arithmetic alone (Sapporo's double-single idea; conversions from double run at an
// eighth of the float rate on these GPUs and would bound a kernel). The mixed-precision direct,
// Hermite and GRAPE kernels keep their positions so. Plain C++ (host and device).
#pragma once

#include "core/host_device.hpp"

namespace grove::gpu {

struct FloatPair {
    float hi, lo;
};

HOST_DEVICE inline FloatPair split_double(double x)
{
    const float hi = static_cast<float>(x);
    return {hi, static_cast<float>(x - hi)};
}

// The difference of two split values, j minus i.
HOST_DEVICE inline float pair_difference(float hi_j, float lo_j, float hi_i, float lo_i)
{
    return (hi_j - hi_i) + (lo_j - lo_i);
}

} // namespace grove::gpu
