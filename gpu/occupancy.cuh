// How many blocks of a kernel one SM of the current device holds at once: the j-split
// (gpu/j_split.hpp) plans its waves with this number. A kernel's count depends on its registers and
// shared memory, which the compiler decides, so it is asked, never assumed.
#pragma once

#include <algorithm>

#include <cuda_runtime.h>

#include "gpu/cuda_check.cuh"

namespace grove::gpu {

// Blocks of `kernel` launched with `threads` threads and no dynamic shared memory; at least 1.
// The callers ask once per kernel and keep the answer: the GPUs of one run are of one kind.
template <class Kernel> int resident_blocks_per_sm(Kernel kernel, int threads)
{
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
    return std::max(blocks, 1);
}

} // namespace grove::gpu
