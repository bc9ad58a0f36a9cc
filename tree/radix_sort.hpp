// Parallel radix sort of (key, value) pairs with OpenMP, in two stages (a sample sort whose
// buckets finish by radix sort):
//  1. 255 splitters taken from an evenly spaced sample of 4096 keys cut the keys into 256
//     buckets of about equal size whatever the key distribution (a fixed top digit put half of a
//     Plummer sphere's keys into a few buckets). Each thread classifies its slice through the
//     splitters' implicit search tree (nearly sorted input, a tree's particles a step after the
//     last build, first tries the previous key's bucket), an exclusive scan over (bucket,
//     thread) gives every thread its scatter offsets, and a stable scatter moves the pairs into
//     place: one pass over memory.
//  2. Every bucket is then sorted by one thread on the bits below the highest bit in which its
//     smallest and largest keys differ, by MSD passes with 8-bit digits in cache down to
//     insertion sorts of at most 48 keys (about two passes for a bucket of 4096, where LSD passes
//     need one per digit). A bucket too big for the cache (many equal keys around one splitter)
//     takes MSD passes over memory first, whose sub-buckets become OpenMP tasks.
// A plain LSD sort of 63-bit Morton keys needs eight passes over memory; this needs one, plus
// in-cache work (bench/results/step.md has the measurements).
#pragma once

#include <cstdint>
#include <vector>

namespace grove {

// Sorts keys ascending, permuting values alongside; stable. keys.size() == values.size().
void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values);

// Sorts keys ascending and sets order[k] to the original index of the key now at k (stable):
// radix_sort_pairs with values 0, 1, 2, ..., which the first pass writes instead of reading.
void radix_sort_with_order(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& order);

} // namespace grove
