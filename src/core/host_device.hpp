// Annotations that let one function compile for both the host and the CUDA device.
// Everything device-specific (intrinsics) hides in tiny helpers here, so the physics headers stay
// free of #ifdef __CUDA_ARCH__.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define HOST_DEVICE __host__ __device__
#else
#define HOST_DEVICE
#endif

namespace grove {

// 1/sqrt(x), with the hardware instruction on the device in single precision.
HOST_DEVICE inline float rsqrt_fast(float x)
{
#if defined(__CUDA_ARCH__)
    // The flush-to-zero form is one MUFU.RSQ; plain rsqrtf() adds denormal handling around it,
    // several instructions in a loop of about fifteen. Inputs here are r^2 + eps^2, never denormal
    // in practice; a denormal r^2 with eps = 0 flushes to 0 and takes the r^2 > 0 guard.
    float y;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return 1.0f / std::sqrt(x);
#endif
}

HOST_DEVICE inline double rsqrt_fast(double x)
{
#if defined(__CUDA_ARCH__)
    return ::rsqrt(x);
#else
    return 1.0 / std::sqrt(x);
#endif
}

} // namespace grove
