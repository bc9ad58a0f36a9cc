// Parallel radix sort of (key, value) pairs with OpenMP, in two stages:
//  1. one most-significant-digit pass over the top 8 significant bits: each thread histograms
//     its slice, an exclusive scan over (digit, thread) gives every thread its scatter offsets,
//     and a stable scatter moves the pairs into 256 buckets (4096 made 16 threads scatter into
//     65536 streams, which thrashed the TLB: 19 ms against 4 ms for 10^6 random keys);
//  2. every bucket is then sorted on its remaining bits as an OpenMP task: buckets that fit in
//     cache by least-significant-digit passes with 8-bit digits (skipping digits on which the
//     bucket's keys agree; insertion sort when tiny), larger ones (clustered inputs put most keys
//     in a few buckets) by one more 8-bit MSD pass whose sub-buckets become tasks in turn.
// A plain LSD sort of 63-bit Morton keys needs eight passes over memory; this needs one, plus
// in-cache work (bench/results/tree-build-*.md has the measurements).
#pragma once

#include <cstdint>
#include <vector>

namespace grove {

// Sorts keys ascending, permuting values alongside; stable. keys.size() == values.size().
void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values);

} // namespace grove
