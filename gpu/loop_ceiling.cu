// Kernels that run only the direct kernels' inner loops, many times over; see loop_ceiling.h.
// Every thread evaluates four targets, as the direct and mixed Hermite kernels do, with the
// formulas of tree/gravity.hpp. The register variant moves its targets by 1e-6 after each pass
// over its sources (12 additions per 64 pairs), so that no difference is loop-invariant.
#include "gpu/loop_ceiling.h"

#include <algorithm>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "tree/gravity.hpp"

namespace grove {

namespace {

constexpr int kThreads = 128;
constexpr int kTargets = 4;

// A thread's float targets, placed by a per-thread number t (no value is a compile-time
// constant), and their sums.
struct FloatTargets {
    float x[kTargets], y[kTargets], z[kTargets];
    Accum<float> a[kTargets];
    __device__ explicit FloatTargets(float t)
    {
#pragma unroll
        for (int k = 0; k < kTargets; ++k) {
            x[k] = t + k;
            y[k] = 0.5f * t - k;
            z[k] = 0.25f * k - t;
        }
    }
    __device__ float sum() const
    {
        float total = 0.f;
#pragma unroll
        for (int k = 0; k < kTargets; ++k) total += a[k].ax + a[k].ay + a[k].az + a[k].pot;
        return total;
    }
};

template <int S> __global__ void __launch_bounds__(kThreads) float_register_loop(int passes, float eps2, float* out)
{
    const float t = 1e-3f * static_cast<float>(blockIdx.x * blockDim.x + threadIdx.x);
    FloatTargets f(t);
    float4 s[S];
#pragma unroll
    for (int q = 0; q < S; ++q) s[q] = make_float4(0.1f * q + t, 1.f - 0.2f * q, 0.3f * q - t, 1e-3f * (q + 1));
    for (int r = 0; r < passes; ++r) {
#pragma unroll
        for (int q = 0; q < S; ++q)
#pragma unroll
            for (int k = 0; k < kTargets; ++k)
                f.a[k] = p2p<false>(f.a[k], s[q].x - f.x[k], s[q].y - f.y[k], s[q].z - f.z[k], s[q].w, eps2);
#pragma unroll
        for (int k = 0; k < kTargets; ++k) {
            f.x[k] += 1e-6f;
            f.y[k] += 1e-6f;
            f.z[k] += 1e-6f;
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = f.sum(); // keeps the sums, hence the loop
}

__global__ void __launch_bounds__(kThreads) float_shared_loop(int passes, float eps2, float* out)
{
    __shared__ float4 tile[kThreads];
    const float t = 1e-3f * static_cast<float>(blockIdx.x * blockDim.x + threadIdx.x);
    const float u = static_cast<float>(threadIdx.x);
    tile[threadIdx.x] = make_float4(0.1f * u + t, 1.f - 0.2f * u, 0.3f * u, 1e-3f);
    __syncthreads();
    FloatTargets f(t);
    for (int r = 0; r < passes; ++r) {
#pragma unroll 8
        for (int s = 0; s < kThreads; ++s) {
            const float4 p = tile[s];
#pragma unroll
            for (int k = 0; k < kTargets; ++k)
                f.a[k] = p2p<false>(f.a[k], p.x - f.x[k], p.y - f.y[k], p.z - f.z[k], p.w, eps2);
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = f.sum();
}

// The mixed Hermite kernel's source: position as a float pair hi + lo (mass in hi.w), velocity.
struct MixedJerkSource {
    float4 hi, lo, v;
};

__global__ void __launch_bounds__(kThreads) mixed_jerk_shared_loop(int passes, float eps2, float* out)
{
    __shared__ MixedJerkSource tile[kThreads];
    const float t = 1e-3f * static_cast<float>(blockIdx.x * blockDim.x + threadIdx.x);
    const float u = static_cast<float>(threadIdx.x);
    tile[threadIdx.x] = {make_float4(0.1f * u + t, 1.f - 0.2f * u, 0.3f * u, 1e-3f),
                         make_float4(1e-9f * u, -2e-9f * u, 3e-9f, 0.f),
                         make_float4(0.01f * u, 0.02f, -0.01f * u, 0.f)};
    __syncthreads();
    float hx[kTargets], hy[kTargets], hz[kTargets], lx[kTargets], ly[kTargets], lz[kTargets];
    float vx[kTargets], vy[kTargets], vz[kTargets];
    AccumJerk<float> a[kTargets];
#pragma unroll
    for (int k = 0; k < kTargets; ++k) { // all from t: no target value is a compile-time constant
        hx[k] = t + k;
        hy[k] = 0.5f * t - k;
        hz[k] = 0.25f * k - t;
        lx[k] = 1e-9f * (k + t);
        ly[k] = -1e-9f * t;
        lz[k] = 2e-9f * t;
        vx[k] = 0.1f * (k + t);
        vy[k] = t;
        vz[k] = -t - k;
    }
    for (int r = 0; r < passes; ++r) {
#pragma unroll 4
        for (int s = 0; s < kThreads; ++s) {
            const MixedJerkSource p = tile[s];
#pragma unroll
            for (int k = 0; k < kTargets; ++k) {
                const float dx = (p.hi.x - hx[k]) + (p.lo.x - lx[k]);
                const float dy = (p.hi.y - hy[k]) + (p.lo.y - ly[k]);
                const float dz = (p.hi.z - hz[k]) + (p.lo.z - lz[k]);
                a[k] = p2p_jerk(a[k], dx, dy, dz, p.v.x - vx[k], p.v.y - vy[k], p.v.z - vz[k], p.hi.w, eps2);
            }
        }
    }
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kTargets; ++k) sum += a[k].ax + a[k].ay + a[k].az + a[k].jx + a[k].jy + a[k].jz + a[k].pot;
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <int C> __global__ void __launch_bounds__(kThreads) ffma_stream(int passes, float b, float* out)
{
    float a[C];
#pragma unroll
    for (int c = 0; c < C; ++c) a[c] = 1e-3f * static_cast<float>(threadIdx.x + c);
    for (int r = 0; r < passes; ++r)
#pragma unroll
        for (int c = 0; c < C; ++c) a[c] = fmaf(a[c], b, 1e-7f);
    float sum = 0.f;
#pragma unroll
    for (int c = 0; c < C; ++c) sum += a[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// Blocks for a few waves on any device, and the best of three timed launches after a warm-up.
struct CeilingRun {
    int blocks = 0;
    gpu::DeviceBuffer<float> out;
    cudaEvent_t start = nullptr, stop = nullptr;
    CeilingRun()
    {
        int device = 0, sms = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        blocks = 32 * sms;
        out.reserve(static_cast<std::size_t>(blocks) * kThreads, "loop ceiling sums");
        CUDA_CHECK(cudaEventCreate(&start));
        CUDA_CHECK(cudaEventCreate(&stop));
    }
    ~CeilingRun()
    {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
    }
    double threads() const { return static_cast<double>(blocks) * kThreads; }
    // Seconds of the fastest of three launches.
    template <class Launch> double seconds(Launch launch)
    {
        launch();
        gpu::check_launch("loop ceiling kernel", nullptr);
        float best = 0;
        for (int rep = 0; rep < 3; ++rep) {
            CUDA_CHECK(cudaEventRecord(start));
            launch();
            CUDA_CHECK(cudaEventRecord(stop));
            CUDA_CHECK(cudaEventSynchronize(stop));
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            best = rep == 0 ? ms : std::min(best, ms);
        }
        return best * 1e-3;
    }
};

constexpr float kEps2 = 1e-4f;

} // namespace

std::vector<LoopCeiling> measure_direct_loop_ceilings()
{
    CeilingRun run;
    std::vector<LoopCeiling> rows;
    constexpr int kSources = 16, kRegisterPasses = 4000, kSharedPasses = 500, kFfmaPasses = 20000, kChains = 16;
    double s = run.seconds(
        [&] { float_register_loop<kSources><<<run.blocks, kThreads>>>(kRegisterPasses, kEps2, run.out.data()); });
    rows.push_back({"float acc+pot, sources in registers", run.threads() * kRegisterPasses * kSources * kTargets / s});
    s = run.seconds([&] { float_shared_loop<<<run.blocks, kThreads>>>(kSharedPasses, kEps2, run.out.data()); });
    rows.push_back({"float acc+pot, shared tile of 128", run.threads() * kSharedPasses * kThreads * kTargets / s});
    s = run.seconds([&] { ffma_stream<kChains><<<run.blocks, kThreads>>>(kFfmaPasses, 0.999f, run.out.data()); });
    rows.push_back({"independent FFMAs (per second)", run.threads() * kFfmaPasses * kChains / s});
    return rows;
}

std::vector<LoopCeiling> measure_hermite_loop_ceilings()
{
    CeilingRun run;
    constexpr int kPasses = 200;
    const double s =
        run.seconds([&] { mixed_jerk_shared_loop<<<run.blocks, kThreads>>>(kPasses, kEps2, run.out.data()); });
    return {{"mixed acc+jerk+pot, shared tile of 128", run.threads() * kPasses * kThreads * kTargets / s}};
}

} // namespace grove
