// The interaction lists of a tree walk (tree/walk.hpp) for every group, built on the host in two
// passes with a scan between them, and their statistics.
#pragma once

#include <cstdint>
#include <vector>

#include "tree/octree.hpp"

namespace grove {

// Interaction lists of groups, concatenated: group g's nodes are entries node_offset[g] ..
// node_offset[g+1] of the walk, held from node_base on (0 when every group's lists are held; the
// first entry of the batch held otherwise), and likewise for leaves.
struct InteractionLists {
    std::vector<std::int64_t> node_offset; // [num_groups + 1]
    std::vector<std::int64_t> leaf_offset; // [num_groups + 1]
    std::vector<std::int32_t> node_list;
    std::vector<std::int32_t> leaf_list;
    std::int64_t node_base = 0, leaf_base = 0;

    std::int64_t node_count(std::int32_t g) const { return node_offset[g + 1] - node_offset[g]; }
    std::int64_t leaf_count(std::int32_t g) const { return leaf_offset[g + 1] - leaf_offset[g]; }
    const std::int32_t* nodes_of(std::int32_t g) const { return node_list.data() + (node_offset[g] - node_base); }
    const std::int32_t* leaves_of(std::int32_t g) const { return leaf_list.data() + (leaf_offset[g] - leaf_base); }
};

// Count pass, exclusive scan, write pass over all groups of a view whose criterion arrays are set
// (tree/mac.hpp: set_opening_criterion); the Octree form walks tree.view() (its r_open2 set).
// With a group range, only groups [first, last) walk; the others get empty lists.
template <class T> InteractionLists build_interaction_lists(const OctreeView<T>& view);
template <class T>
InteractionLists build_interaction_lists(const OctreeView<T>& view, std::int32_t first, std::int32_t last);
InteractionLists build_interaction_lists(const Octree& tree);

// The two passes apart, for walking in batches (tree/list_batches.hpp): the count pass and scan
// of groups `walked` (the offsets of every group, no lists), then the lists of one batch of them
// written (replacing the batch held before).
template <class T> InteractionLists count_interaction_lists(const OctreeView<T>& view, GroupRange walked);
template <class T> void write_interaction_lists(const OctreeView<T>& view, GroupRange batch, InteractionLists& lists);

// Mean interaction counts of the last evaluation.
struct TreeStats {
    double nodes_per_group = 0, leaves_per_group = 0;
    double node_interactions_per_particle = 0; // particle-quadrupole interactions
    double leaf_interactions_per_particle = 0; // particle-particle interactions
    std::int64_t num_groups = 0, num_nodes = 0;
};

TreeStats list_statistics(const Octree& tree, const InteractionLists& lists);

// The same summed batch by batch: add each batch's lists while they are held, then ask.
class ListStatistics {
  public:
    void add(const Octree& tree, const InteractionLists& lists, GroupRange batch);
    TreeStats of(const Octree& tree) const;

  private:
    double node_entries_ = 0, leaf_entries_ = 0, node_pairs_ = 0, leaf_pairs_ = 0;
};

} // namespace grove
