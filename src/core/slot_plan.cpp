#include "core/slot_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace grove {

SlotPlan plan_slots(std::size_t n, const std::vector<std::size_t>& leave, std::size_t arriving)
{
    if (!std::is_sorted(leave.begin(), leave.end()) || std::adjacent_find(leave.begin(), leave.end()) != leave.end() ||
        (!leave.empty() && leave.back() >= n))
        throw std::invalid_argument("domains: the leavers' slots must be ascending, distinct and within the set");
    SlotPlan plan;
    const std::size_t leaving = leave.size();
    plan.count = n - leaving + arriving;
    // The leavers' slots below the new count are the holes; the arrivals take them first.
    const auto low = static_cast<std::size_t>(std::lower_bound(leave.begin(), leave.end(), plan.count) - leave.begin());
    const std::size_t into_slots = std::min(arriving, low);
    plan.arrival.resize(arriving);
    for (std::size_t k = 0; k < arriving; ++k) plan.arrival[k] = k < into_slots ? leave[k] : n + (k - into_slots);
    // The holes left, filled from the top by the stayers above the new count.
    std::size_t from = n, high = leaving; // leave[high - 1]: the last slot above the new count not yet passed
    plan.moves.reserve(low - into_slots);
    for (std::size_t h = into_slots; h < low; ++h) {
        --from;
        while (high > low && leave[high - 1] == from) {
            --high;
            --from;
        }
        plan.moves.emplace_back(from, leave[h]);
    }
    return plan;
}

} // namespace grove
