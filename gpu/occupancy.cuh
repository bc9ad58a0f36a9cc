// How many blocks of a kernel one SM of the current device holds at once: the j-split
// (gpu/j_split.hpp) plans its waves with this number. A kernel's count depends on its registers and
// shared memory, which the compiler decides, so it is asked, never assumed.
#pragma once

#include <algorithm>

#include <cuda_runtime.h>

#include "gpu/cuda_check.cuh"

namespace grove::gpu {

// Blocks of kKernel launched with kThreads threads and no dynamic shared memory; at least 1.
// Asked once per kernel and kept: the GPUs of one run are of one kind.
template <auto kKernel, int kThreads> int resident_blocks_per_sm()
{
    static const int blocks = [] {
        int b = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kKernel, kThreads, 0));
        return std::max(b, 1);
    }();
    return blocks;
}

} // namespace grove::gpu
