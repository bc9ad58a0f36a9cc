// Which Morton-ordered groups a share of a tree evaluation takes (TreeEngine::set_share, an MPI
// job's ranks): contiguous runs of groups of about equal cost. The cost of a particle is the
// work of its group's lists in the last evaluation (group_costs below); summed over a job's
// shares it is known on every rank, so every rank cuts the same runs. Without costs (the first
// step, a restart, another particle count) every particle costs the same. Any cut gives the same
// forces: each group is evaluated by one share with the same arithmetic.
#pragma once

#include <cstdint>
#include <vector>

#include "tree/interaction_lists.hpp"
#include "tree/octree.hpp"

namespace grove {

// Share `index` of `count`. costs: per particle in the caller's order (tree.order maps sorted
// particles to it), or empty.
GroupRange share_of_groups(const Octree& tree, const std::vector<double>& costs, int index, int count);

// The cost of every particle of groups [range.first, range.last) under `lists` (a particle-node
// interaction counted as two particle-particle ones, about their ratio of arithmetic), in the
// caller's order, zero for the other particles.
std::vector<double> group_costs(const Octree& tree, const InteractionLists& lists, GroupRange range);
// The same for the groups of one batch of lists while they are held, into costs (N entries, in
// the caller's order); the other particles' entries are left as they are.
void add_group_costs(const Octree& tree, const InteractionLists& lists, GroupRange batch, std::vector<double>& costs);

// The same from list lengths alone (the GPU walk's first pass, which counts leaf cells, not their
// particles): node_count[k] and leaf_count[k] belong to group range.first + k, and a leaf cell
// counts as the tree's mean leaf occupancy.
std::vector<double> group_costs_from_counts(const Octree& tree, const long long* node_count,
                                            const long long* leaf_count, GroupRange range);

} // namespace grove
