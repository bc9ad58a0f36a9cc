// The sum over the j-splits of a direct kernel's partial results, one warp per target: lane l
// adds splits l, l + 32, ... in order, then the lanes combine in a fixed tree, so the total does
// not depend on timing. With few targets and hundreds of splits (a block step of a few
// particles) a thread per target would wait on its splits' loads one after another.
#pragma once

#include <cstddef>

namespace grove::gpu {

// partial[y * n + i] holds split y's result for target i; its first kWords members are doubles.
// Every lane of the warp calls this for the same i; lane 0 ends with the totals.
template <int kWords, class Partial>
__device__ inline void warp_sum_splits(const Partial* partial, int splits, int n, int i, double (&total)[kWords])
{
    static_assert(sizeof(Partial) >= kWords * sizeof(double), "the words are the partial's first members");
#pragma unroll
    for (int w = 0; w < kWords; ++w) total[w] = 0;
    for (int y = static_cast<int>(threadIdx.x % 32); y < splits; y += 32) {
        const double* p = reinterpret_cast<const double*>(partial + static_cast<std::size_t>(y) * n + i);
#pragma unroll
        for (int w = 0; w < kWords; ++w) total[w] += p[w];
    }
    for (int offset = 16; offset > 0; offset /= 2)
#pragma unroll
        for (int w = 0; w < kWords; ++w) total[w] += __shfl_down_sync(~0u, total[w], offset);
}

// The target of the calling warp in a launch of warp_reduce_blocks(n) blocks of kReduceThreads.
constexpr int kReduceThreads = 256;
__device__ inline int warp_target()
{
    return static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32);
}
inline unsigned warp_reduce_blocks(std::size_t n)
{
    return static_cast<unsigned>((32 * n + kReduceThreads - 1) / kReduceThreads);
}

} // namespace grove::gpu
