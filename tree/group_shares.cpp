#include "tree/group_shares.hpp"

#include <algorithm>

namespace grove {

namespace {

constexpr double kNodeCost = 2.0; // a quadrupole interaction in particle-particle interactions

} // namespace

GroupRange share_of_groups(const Octree& tree, const std::vector<double>& costs, int index, int count)
{
    const auto& groups = tree.groups;
    const auto g = static_cast<std::int32_t>(groups.size());
    const auto n = static_cast<std::int64_t>(tree.particles.size());
    if (count <= 1) return {0, g};
    // Cumulative cost at each group's end; share s starts at the first group whose end passes s/count
    // of the total. Serial: a few operations per particle, like the sort's gather.
    std::vector<double> end_cost;
    double running = 0;
    if (costs.size() == static_cast<std::size_t>(n)) {
        end_cost.resize(groups.size());
        for (std::size_t k = 0; k < groups.size(); ++k) {
            for (std::int32_t i = groups[k].range.begin; i < groups[k].range.end; ++i)
                running += costs[tree.order[static_cast<std::size_t>(i)]];
            end_cost[k] = running;
        }
    }
    if (!(running > 0)) { // no costs: equal particle counts
        auto first_group = [&](std::int64_t share) {
            const std::int64_t first_particle = n * share / count;
            return static_cast<std::int32_t>(
                std::partition_point(groups.begin(), groups.end(),
                                     [&](const Group<double>& gr) { return gr.range.begin < first_particle; }) -
                groups.begin());
        };
        return {first_group(index), first_group(index + 1)};
    }
    auto first_group = [&](int share) {
        if (share <= 0) return std::int32_t{0};
        if (share >= count) return g;
        const double boundary = running * share / count;
        return static_cast<std::int32_t>(std::upper_bound(end_cost.begin(), end_cost.end(), boundary) -
                                         end_cost.begin());
    };
    return {first_group(index), first_group(index + 1)};
}

namespace {

// Every particle of groups [range.first, range.last) gets its group's cost per particle,
// cost_of(k) for group k, in costs (caller's order, through tree.order).
template <class CostOf>
void spread_costs(const Octree& tree, GroupRange range, CostOf&& cost_of, std::vector<double>& costs)
{
    for (std::int32_t k = range.first; k < range.last; ++k) {
        const double per_particle = cost_of(k);
        const ParticleRange own = tree.groups[static_cast<std::size_t>(k)].range;
        for (std::int32_t i = own.begin; i < own.end; ++i)
            costs[tree.order[static_cast<std::size_t>(i)]] = per_particle;
    }
}

} // namespace

void add_group_costs(const Octree& tree, const InteractionLists& lists, GroupRange batch, std::vector<double>& costs)
{
    spread_costs(
        tree, batch,
        [&](std::int32_t k) {
            double cost = kNodeCost * static_cast<double>(lists.node_count(k));
            const std::int32_t* leaves = lists.leaves_of(k);
            for (std::int64_t e = 0; e < lists.leaf_count(k); ++e) {
                const ParticleRange r = tree.range[static_cast<std::size_t>(leaves[e])];
                cost += r.end - r.begin;
            }
            return cost;
        },
        costs);
}

std::vector<double> group_costs(const Octree& tree, const InteractionLists& lists, GroupRange range)
{
    std::vector<double> costs(tree.particles.size(), 0.0);
    add_group_costs(tree, lists, range, costs);
    return costs;
}

std::vector<double> group_costs_from_counts(const Octree& tree, const long long* node_count,
                                            const long long* leaf_count, GroupRange range)
{
    std::int64_t leaves = 0;
    for (const std::uint8_t leaf : tree.is_leaf) leaves += leaf;
    const double occupancy = leaves > 0 ? static_cast<double>(tree.particles.size()) / static_cast<double>(leaves) : 0;
    std::vector<double> costs(tree.particles.size(), 0.0);
    spread_costs(
        tree, range,
        [&](std::int32_t k) {
            const auto local = static_cast<std::size_t>(k - range.first);
            return kNodeCost * static_cast<double>(node_count[local]) +
                   occupancy * static_cast<double>(leaf_count[local]);
        },
        costs);
    return costs;
}

} // namespace grove
