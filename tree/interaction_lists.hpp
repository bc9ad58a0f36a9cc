// The interaction lists of a tree walk (tree/walk.hpp) for every group, built on the host in two
// passes with a scan between them, and their statistics.
#pragma once

#include <cstdint>
#include <vector>

#include "tree/octree.hpp"

namespace grove {

// Interaction lists of every group, concatenated: group g's nodes are
// node_list[node_offset[g] .. node_offset[g+1]) and likewise for leaves.
struct InteractionLists {
    std::vector<std::int64_t> node_offset; // [num_groups + 1]
    std::vector<std::int64_t> leaf_offset; // [num_groups + 1]
    std::vector<std::int32_t> node_list;
    std::vector<std::int32_t> leaf_list;
};

// Count pass, exclusive scan, write pass over all groups of a view whose criterion arrays are set
// (tree/mac.hpp: set_opening_criterion); the Octree form walks tree.view() (its r_open2 set).
// With a group range, only groups [first, last) walk; the others get empty lists.
template <class T> InteractionLists build_interaction_lists(const OctreeView<T>& view);
template <class T>
InteractionLists build_interaction_lists(const OctreeView<T>& view, std::int32_t first, std::int32_t last);
InteractionLists build_interaction_lists(const Octree& tree);

// Mean interaction counts of the last evaluation.
struct TreeStats {
    double nodes_per_group = 0, leaves_per_group = 0;
    double node_interactions_per_particle = 0; // particle-quadrupole interactions
    double leaf_interactions_per_particle = 0; // particle-particle interactions
    std::int64_t num_groups = 0, num_nodes = 0;
};

TreeStats list_statistics(const Octree& tree, const InteractionLists& lists);

} // namespace grove
