// Error discipline for every CUDA call and launch (after CUB's util_device.cuh): CUDA_CHECK throws
// with the expression, file and line; check_launch() after each launch, synchronizing only in the
// GROVE_CUDA_DEBUG_SYNC build so that Release keeps its asynchrony.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace grove::gpu {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* expr, const char* file, int line)
{
    throw std::runtime_error(std::string("CUDA error ") + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                             ") in " + expr + " at " + file + ":" + std::to_string(line));
}

#define CUDA_CHECK(expr)                                                                                               \
    do {                                                                                                               \
        const cudaError_t grove_status_ = (expr);                                                                      \
        if (grove_status_ != cudaSuccess) ::grove::gpu::throw_cuda_error(grove_status_, #expr, __FILE__, __LINE__);    \
    } while (0)

inline void check_launch(const char* kernel, cudaStream_t stream)
{
    const cudaError_t status = cudaGetLastError();
    if (status != cudaSuccess) throw_cuda_error(status, kernel, __FILE__, __LINE__);
#ifdef GROVE_CUDA_DEBUG_SYNC
    CUDA_CHECK(cudaStreamSynchronize(stream));
#else
    (void)stream;
#endif
}

constexpr inline std::size_t ceil_div(std::size_t a, std::size_t b)
{
    return (a + b - 1) / b;
}

} // namespace grove::gpu
