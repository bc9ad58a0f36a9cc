// Parallel least-significant-digit radix sort of (key, value) pairs with OpenMP: each thread
// histograms its slice, an exclusive scan over (digit, thread) gives every thread its scatter
// offsets, and a stable scatter moves the pairs. 8-bit digits; digits on which all keys agree are
// skipped, so clustered inputs sort in fewer passes.
#pragma once

#include <cstdint>
#include <vector>

namespace grove {

// Sorts keys ascending, permuting values alongside; stable. keys.size() == values.size().
void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values);

} // namespace grove
