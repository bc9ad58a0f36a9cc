// The ranks' key ranges from samples of their keys: each rank sends a few thousand (key, weight)
// pairs, each standing for a run of its particles (the weight their cost, or their number), and
// every rank finds the same cuts from all of them. This is how the GPUs cut their domains anew
// between follows (gpu/tree_resident_recut.cu), without a histogram over every key as the host's
// cut makes (parallel/domains.hpp): a cut there is off by at most one sample's weight.
#pragma once

#include <cstdint>
#include <vector>

namespace grove {

struct WeightedKey {
    std::uint64_t key;
    double weight; // finite, >= 0
};

// first[r] is the least key of rank r (first[0] = 0, first[ranks] = end): rank r's range starts at
// the first sample, in key order, whose weight's middle lies at or beyond r / ranks of the total
// (by count where every weight is 0); ranges may be empty. Throws std::invalid_argument for
// ranks < 1, a weight that is negative or not finite, or a key not below end.
std::vector<std::uint64_t> key_ranges_from_samples(std::vector<WeightedKey> samples, int ranks, std::uint64_t end);

} // namespace grove
