#include "tree/interaction_lists.hpp"

#include "tree/walk.hpp"

namespace grove {

template <class T> InteractionLists build_interaction_lists(const OctreeView<T>& view)
{
    return build_interaction_lists(view, 0, view.num_groups);
}

template <class T>
InteractionLists build_interaction_lists(const OctreeView<T>& view, std::int32_t first, std::int32_t last)
{
    const std::int32_t num_groups = view.num_groups;
    InteractionLists lists;
    lists.node_offset.assign(static_cast<std::size_t>(num_groups) + 1, 0);
    lists.leaf_offset.assign(static_cast<std::size_t>(num_groups) + 1, 0);
#pragma omp parallel for schedule(dynamic, 32)
    for (std::int32_t g = first; g < last; ++g) {
        const auto lengths = walk_group<CountPass>(view, g, nullptr, nullptr);
        lists.node_offset[g + 1] = lengths.nodes;
        lists.leaf_offset[g + 1] = lengths.leaves;
    }
    for (std::int32_t g = 0; g < num_groups; ++g) { // exclusive scan into offsets
        lists.node_offset[g + 1] += lists.node_offset[g];
        lists.leaf_offset[g + 1] += lists.leaf_offset[g];
    }
    lists.node_list.resize(static_cast<std::size_t>(lists.node_offset.back()));
    lists.leaf_list.resize(static_cast<std::size_t>(lists.leaf_offset.back()));
#pragma omp parallel for schedule(dynamic, 32)
    for (std::int32_t g = first; g < last; ++g)
        walk_group<WritePass>(view, g, lists.node_list.data() + lists.node_offset[g],
                              lists.leaf_list.data() + lists.leaf_offset[g]);
    return lists;
}

template InteractionLists build_interaction_lists<float>(const OctreeView<float>&);
template InteractionLists build_interaction_lists<double>(const OctreeView<double>&);
template InteractionLists build_interaction_lists<float>(const OctreeView<float>&, std::int32_t, std::int32_t);
template InteractionLists build_interaction_lists<double>(const OctreeView<double>&, std::int32_t, std::int32_t);

InteractionLists build_interaction_lists(const Octree& tree)
{
    return build_interaction_lists(tree.view());
}

TreeStats list_statistics(const Octree& tree, const InteractionLists& lists)
{
    TreeStats s;
    s.num_groups = static_cast<std::int64_t>(tree.groups.size());
    s.num_nodes = tree.num_nodes();
    if (s.num_groups == 0) return s;
    double node_pairs = 0, leaf_pairs = 0;
    for (std::size_t g = 0; g < tree.groups.size(); ++g) {
        const double members = tree.groups[g].range.end - tree.groups[g].range.begin;
        node_pairs += members * static_cast<double>(lists.node_offset[g + 1] - lists.node_offset[g]);
        for (std::int64_t k = lists.leaf_offset[g]; k < lists.leaf_offset[g + 1]; ++k) {
            const auto r = tree.range[static_cast<std::size_t>(lists.leaf_list[static_cast<std::size_t>(k)])];
            leaf_pairs += members * (r.end - r.begin);
        }
    }
    const double n = static_cast<double>(tree.particles.size());
    s.nodes_per_group = static_cast<double>(lists.node_list.size()) / static_cast<double>(s.num_groups);
    s.leaves_per_group = static_cast<double>(lists.leaf_list.size()) / static_cast<double>(s.num_groups);
    s.node_interactions_per_particle = node_pairs / n;
    s.leaf_interactions_per_particle = leaf_pairs / n;
    return s;
}

} // namespace grove
