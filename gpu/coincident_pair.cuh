// Two particles at zero distance with zero softening, as the guarded direct-summation kernels
// report them: each thread keeps the smallest key (target index << 32 | source index) it met,
// and the launch keeps the smallest of all with atomicMin, so the error names the same pair
// whatever the order in which the blocks ran.
#pragma once

#include <string>

namespace grove::gpu {

constexpr unsigned long long kNoCoincidentPair = ~0ull;

__device__ inline unsigned long long pair_key(int target, int source)
{
    return (static_cast<unsigned long long>(target) << 32) | static_cast<unsigned>(source);
}

// "particles A and B" for a key that is not kNoCoincidentPair.
inline std::string coincident_pair_text(unsigned long long key)
{
    return "particles " + std::to_string(key >> 32) + " and " + std::to_string(key & 0xffffffffull);
}

} // namespace grove::gpu
