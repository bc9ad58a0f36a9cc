// Kernels that run only the direct kernels' inner loops, many times over; see loop_ceiling.h.
// Every thread evaluates four targets, as the direct and mixed Hermite kernels do, with their
// pair code (tree/gravity.hpp, gpu/jerk_pair.cuh): the shared loops count, in their PTX, the
// instructions per pair of the kernels' own loops. The register variant moves its targets by 1e-6
// after each pass over its sources (12 additions per 64 pairs), so that no difference is
// loop-invariant.
#include "gpu/loop_ceiling.h"

#include <algorithm>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/jerk_pair.cuh"
#include "tree/gravity.hpp"

namespace grove {

namespace {

constexpr int kThreads = 128;
constexpr int kTargets = 4;

// The tile entry whose position stands for this thread's target k in the shared loops.
__device__ inline int target_slot(int k)
{
    return (static_cast<int>(threadIdx.x) + 31 * k + 1) % kThreads;
}

// A thread's float targets and their sums. Placed by a per-thread number t (the register loop,
// which moves them every pass), or read from a shared tile (the shared loop): the compiler then
// keeps them in registers as the direct kernel keeps targets it loaded, where targets it can
// compute from t it recomputed inside the loop to save registers.
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
    __device__ explicit FloatTargets(const float4* tile)
    {
#pragma unroll
        for (int k = 0; k < kTargets; ++k) {
            const float4 q = tile[target_slot(k)];
            x[k] = q.x;
            y[k] = q.y;
            z[k] = q.z;
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
    FloatTargets f(tile);
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

// The mixed Hermite kernel's pair (gpu/jerk_pair.cuh), softened and unguarded as
// hermite_kernel runs it with eps > 0, over a tile of its sources.
__global__ void __launch_bounds__(kThreads) mixed_jerk_shared_loop(int passes, float eps2, float* out)
{
    using P = gpu::MixedJerkPolicy;
    __shared__ P::Source tile[kThreads];
    const float t = 1e-3f * static_cast<float>(blockIdx.x * blockDim.x + threadIdx.x);
    const float u = static_cast<float>(threadIdx.x);
    tile[threadIdx.x] = {make_float4(0.1f * u + t, 1.f - 0.2f * u, 0.3f * u, 1e-3f),
                         make_float4(1e-9f * u, -2e-9f * u, 3e-9f, 0.f),
                         make_float4(0.01f * u, 0.02f, -0.01f * u, 0.f)};
    __syncthreads();
    P::Target target[kTargets];
    AccumJerk<float> a[kTargets];
#pragma unroll
    for (int k = 0; k < kTargets; ++k) // read, not computed: kept in registers as the kernel keeps them
        target[k] = P::target(tile[target_slot(k)]);
    unsigned long long unused = gpu::kNoCoincidentPair; // kGuard = false never writes it
    for (int r = 0; r < passes; ++r) {
#pragma unroll 4
        for (int s = 0; s < kThreads; ++s) {
            const P::Source p = tile[s];
#pragma unroll
            for (int k = 0; k < kTargets; ++k)
                gpu::jerk_pair<P, false>(a[k], target[k], p, P::mass(p), eps2, -1, s, unused);
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
