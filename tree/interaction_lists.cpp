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
    InteractionLists lists = count_interaction_lists(view, GroupRange{first, last});
    write_interaction_lists(view, GroupRange{first, last}, lists);
    return lists;
}

template <class T> InteractionLists count_interaction_lists(const OctreeView<T>& view, GroupRange walked)
{
    const std::int32_t num_groups = view.num_groups;
    InteractionLists lists;
    lists.node_offset.assign(static_cast<std::size_t>(num_groups) + 1, 0);
    lists.leaf_offset.assign(static_cast<std::size_t>(num_groups) + 1, 0);
#pragma omp parallel for schedule(dynamic, 32)
    for (std::int32_t g = walked.first; g < walked.last; ++g) {
        const auto lengths = walk_group<CountPass>(view, g, nullptr, nullptr);
        lists.node_offset[g + 1] = lengths.nodes;
        lists.leaf_offset[g + 1] = lengths.leaves;
    }
    for (std::int32_t g = 0; g < num_groups; ++g) { // exclusive scan into offsets
        lists.node_offset[g + 1] += lists.node_offset[g];
        lists.leaf_offset[g + 1] += lists.leaf_offset[g];
    }
    return lists;
}

template <class T> void write_interaction_lists(const OctreeView<T>& view, GroupRange batch, InteractionLists& lists)
{
    lists.node_base = lists.node_offset[batch.first];
    lists.leaf_base = lists.leaf_offset[batch.first];
    lists.node_list.resize(static_cast<std::size_t>(lists.node_offset[batch.last] - lists.node_base));
    lists.leaf_list.resize(static_cast<std::size_t>(lists.leaf_offset[batch.last] - lists.leaf_base));
#pragma omp parallel for schedule(dynamic, 32)
    for (std::int32_t g = batch.first; g < batch.last; ++g)
        walk_group<WritePass>(view, g, lists.node_list.data() + (lists.node_offset[g] - lists.node_base),
                              lists.leaf_list.data() + (lists.leaf_offset[g] - lists.leaf_base));
}

template InteractionLists build_interaction_lists<float>(const OctreeView<float>&);
template InteractionLists build_interaction_lists<double>(const OctreeView<double>&);
template InteractionLists build_interaction_lists<float>(const OctreeView<float>&, std::int32_t, std::int32_t);
template InteractionLists build_interaction_lists<double>(const OctreeView<double>&, std::int32_t, std::int32_t);
template InteractionLists count_interaction_lists<float>(const OctreeView<float>&, GroupRange);
template InteractionLists count_interaction_lists<double>(const OctreeView<double>&, GroupRange);
template void write_interaction_lists<float>(const OctreeView<float>&, GroupRange, InteractionLists&);
template void write_interaction_lists<double>(const OctreeView<double>&, GroupRange, InteractionLists&);

InteractionLists build_interaction_lists(const Octree& tree)
{
    return build_interaction_lists(tree.view());
}

void ListStatistics::add(const Octree& tree, const InteractionLists& lists, GroupRange batch)
{
    for (std::int32_t g = batch.first; g < batch.last; ++g) {
        const ParticleRange own = tree.groups[static_cast<std::size_t>(g)].range;
        const double members = own.end - own.begin;
        node_entries_ += static_cast<double>(lists.node_count(g));
        leaf_entries_ += static_cast<double>(lists.leaf_count(g));
        node_pairs_ += members * static_cast<double>(lists.node_count(g));
        const std::int32_t* leaves = lists.leaves_of(g);
        for (std::int64_t k = 0; k < lists.leaf_count(g); ++k) {
            const ParticleRange r = tree.range[static_cast<std::size_t>(leaves[k])];
            leaf_pairs_ += members * (r.end - r.begin);
        }
    }
}

TreeStats ListStatistics::of(const Octree& tree) const
{
    TreeStats s;
    s.num_groups = static_cast<std::int64_t>(tree.groups.size());
    s.num_nodes = tree.num_nodes();
    if (s.num_groups == 0) return s;
    // A structure whose particles live elsewhere (the resident GPU store's) counts them by its root.
    const double n =
        static_cast<double>(!tree.particles.empty() || tree.range.empty() ? tree.particles.size()
                                                                          : tree.range[0].end - tree.range[0].begin);
    s.nodes_per_group = node_entries_ / static_cast<double>(s.num_groups);
    s.leaves_per_group = leaf_entries_ / static_cast<double>(s.num_groups);
    s.node_interactions_per_particle = node_pairs_ / n;
    s.leaf_interactions_per_particle = leaf_pairs_ / n;
    return s;
}

TreeStats list_statistics(const Octree& tree, const InteractionLists& lists)
{
    ListStatistics totals;
    totals.add(tree, lists, GroupRange{0, static_cast<std::int32_t>(tree.groups.size())});
    return totals.of(tree);
}

} // namespace grove
