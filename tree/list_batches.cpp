#include "tree/list_batches.hpp"

#include <algorithm>
#include <stdexcept>

namespace grove {

std::vector<GroupRange> batches_by_room(GroupRange groups, std::int64_t entries_per_group, std::int64_t budget_entries)
{
    if (budget_entries < 1) throw std::invalid_argument("list batches: the budget must hold an entry");
    const std::int64_t count = groups.last - groups.first;
    if (count <= 0) return {};
    const std::int64_t per_batch =
        std::max<std::int64_t>(1, budget_entries / std::max<std::int64_t>(1, entries_per_group));
    const std::int64_t batches = (count + per_batch - 1) / per_batch;
    std::vector<GroupRange> out;
    out.reserve(static_cast<std::size_t>(batches));
    for (std::int64_t b = 0; b < batches; ++b)
        out.push_back({static_cast<std::int32_t>(groups.first + count * b / batches),
                       static_cast<std::int32_t>(groups.first + count * (b + 1) / batches)});
    return out;
}

std::vector<GroupRange> batches_by_lengths(GroupRange groups, const std::int64_t* node_offset,
                                           const std::int64_t* leaf_offset, std::int64_t budget_entries)
{
    if (budget_entries < 1) throw std::invalid_argument("list batches: the budget must hold an entry");
    const std::int64_t count = groups.last - groups.first;
    if (count <= 0) return {};
    const auto entries = [&](std::int64_t k) { return node_offset[k] + leaf_offset[k]; }; // before group first + k
    const std::int64_t total = entries(count);
    // Batches of at most total / batches entries each, so that the last one is not a remnant.
    const std::int64_t batches = std::max<std::int64_t>(1, (total + budget_entries - 1) / budget_entries);
    const std::int64_t limit = std::max<std::int64_t>(1, (total + batches - 1) / batches);
    std::vector<GroupRange> out;
    std::int64_t begin = 0;
    while (begin < count) {
        // The last k whose entries from begin fit the limit (the prefix sums rise with k).
        std::int64_t lo = begin + 1, hi = count;
        if (entries(lo) - entries(begin) <= limit) {
            while (lo < hi) {
                const std::int64_t mid = lo + (hi - lo + 1) / 2;
                if (entries(mid) - entries(begin) <= limit)
                    lo = mid;
                else
                    hi = mid - 1;
            }
        }
        out.push_back({static_cast<std::int32_t>(groups.first + begin), static_cast<std::int32_t>(groups.first + lo)});
        begin = lo;
    }
    return out;
}

} // namespace grove
