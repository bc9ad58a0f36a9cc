// Annotations that let one function compile for both the host and the CUDA device.
// Everything device-specific (intrinsics) hides in tiny helpers here, so the physics headers stay
// free of #ifdef __CUDA_ARCH__.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

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
    // ::rsqrt(double) is PTX's rsqrt.approx.f64, which ptxas emulates with a software sequence.
    // Here: the hardware's estimate from x's upper 32 bits (one MUFU.RSQ64H, relative error about
    // 2^-20), then one third-order step y (1 + r/2 + 3r^2/8) with r = 1 - x y^2, whose error
    // (5/16 r^3, below 2^-55) is under the double rounding of its five FP64 operations. No
    // branch, so x must be a positive normal number: 0 and subnormals (the estimate flushes them
    // to 0) give NaN, not +Inf. The callers pass r^2 + eps^2 with eps > 0, or test r^2 > 0 first
    // (tree/gravity.hpp); only a pair closer than 1e-154 without softening is subnormal.
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    const double r = fma(-(x * y), y, 1.0);
    return fma(y * r, fma(r, 0.375, 0.5), y);
#else
    return 1.0 / std::sqrt(x);
#endif
}

// |x|, exact on both. On the device fabs is an operand modifier of the instruction that uses it;
// the compiler spells (x < 0 ? -x : x) out as a compare, a negation and a select.
template <class T> HOST_DEVICE inline T magnitude(T x)
{
#if defined(__CUDA_ARCH__)
    return fabs(x); // CUDA's overloads: float stays float
#else
    return std::fabs(x);
#endif
}

// a b and a + b rounded one by one on the device as on the host (no fused multiply-add), where a
// decision such as a time bin must fall alike on both.
HOST_DEVICE inline double mul_rn(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

HOST_DEVICE inline double add_rn(double a, double b)
{
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

// c - a b. On the device one fused multiply-add with a negated operand: the compiler leaves
// c - a * b as a multiply and a subtraction. On the host the plain expression, since std::fma
// without FMA hardware in the target is a library call.
template <class T> HOST_DEVICE inline T minus_product(T c, T a, T b)
{
#if defined(__CUDA_ARCH__)
    return fma(-a, b, c);
#else
    return c - a * b;
#endif
}

// A double's bits as an integer, and back: the same on both (an integer carried through a double's
// slot of an upload, a hash of a double's value).
HOST_DEVICE inline std::uint64_t double_bits(double d)
{
#if defined(__CUDA_ARCH__)
    return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
    std::uint64_t v;
    std::memcpy(&v, &d, sizeof v);
    return v;
#endif
}

HOST_DEVICE inline double bits_as_double(std::uint64_t v)
{
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(static_cast<long long>(v));
#else
    double d;
    std::memcpy(&d, &v, sizeof d);
    return d;
#endif
}

} // namespace grove
