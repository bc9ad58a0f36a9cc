#include "core/key_ranges.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace grove {

std::vector<std::uint64_t> key_ranges_from_samples(std::vector<WeightedKey> samples, int ranks, std::uint64_t end)
{
    if (ranks < 1) throw std::invalid_argument("key ranges: at least one rank");
    double total = 0;
    for (const WeightedKey& s : samples) {
        if (!(s.weight >= 0) || !std::isfinite(s.weight))
            throw std::invalid_argument("key ranges: a sample's weight must be finite and >= 0");
        if (s.key >= end) throw std::invalid_argument("key ranges: a sample's key lies beyond the keys' end");
        total += s.weight;
    }
    const bool by_count = !(total > 0);
    if (by_count) total = static_cast<double>(samples.size());
    // Ties in key keep one order on every rank whatever order the samples came in.
    std::sort(samples.begin(), samples.end(), [](const WeightedKey& a, const WeightedKey& b) {
        return a.key < b.key || (a.key == b.key && a.weight < b.weight);
    });
    std::vector<std::uint64_t> first(static_cast<std::size_t>(ranks) + 1, end);
    first[0] = 0;
    const auto weight = [&](std::size_t k) { return by_count ? 1.0 : samples[k].weight; };
    double below = 0;
    std::size_t j = 0;
    for (int r = 1; r < ranks; ++r) {
        const double target = total * r / ranks;
        while (j < samples.size() && below + weight(j) / 2 < target) below += weight(j++);
        first[static_cast<std::size_t>(r)] =
            std::max(first[static_cast<std::size_t>(r) - 1], j < samples.size() ? samples[j].key : end);
    }
    return first;
}

} // namespace grove
