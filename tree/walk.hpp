// The stackless group walk (DESIGN.md section 1), one function for the CPU engine's OpenMP loop and
// the GPU's one-thread-per-group kernels. Nodes are in pre-order with next[] skip indices, so the
// traversal is a single index moving forward: open a node by stepping to i + 1, accept it by
// jumping to next[i]. No stack, no recursion, no divergent depth on the device.
//
// A node is opened for group g by an acceptance criterion of tree/mac.hpp (its per-node radii
// precomputed for the current theta or alpha). Opened leaves go to the leaf list (their particles interact one by one),
// accepted nodes to the node list (their quadrupole expansion is used).
//
// The walk runs twice (ArborX's first/second pass): once counting, once writing at the offsets a
// scan of the counts gives. What a pass does with each entry is its sink's business (the GPU's
// write pass stages entries in registers, gpu/tree_walk.cu).
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "core/host_device.hpp"
#include "tree/mac.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

struct ListLengths {
    std::int32_t nodes = 0;
    std::int32_t leaves = 0;
};

// What the walk needs to know of node i for one group: whether the group opens it, whether it is
// a leaf, and where its subtree ends.
struct NodeStep {
    bool opened;
    bool leaf;
    std::int32_t skip;
};

// The two opening tests the walk takes (tree/mac.hpp): node i is opened when the test holds.
// They hold the arrays by value: a reference to the kernel's tree parameter would make the device
// copy the whole view to local memory and read every pointer from there. The GPU engine walks on
// packed nodes instead (PackedOpening below), whose step is one load.
template <class T> struct GeometricOpening {
    const Vec4<T>* com_mass;
    const T* r_open2;
    const std::int32_t* next;
    const std::uint8_t* is_leaf;
    HOST_DEVICE NodeStep operator()(const Group<T>& group, std::int32_t i) const
    {
        const std::int32_t skip = next[i];
        const bool leaf = is_leaf[i] != 0;
        return {must_open(group, com_mass[i], r_open2[i]), leaf, skip};
    }
};

template <class T> struct RelativeOpening {
    const Vec4<T>* com_mass;
    const T* r_open2;
    const T* r_rel2;
    const std::int32_t* next;
    const std::uint8_t* is_leaf;
    T mac_scale; // the group's
    HOST_DEVICE NodeStep operator()(const Group<T>& group, std::int32_t i) const
    {
        const std::int32_t skip = next[i];
        const bool leaf = is_leaf[i] != 0;
        return {must_open_relative(group, com_mass[i], r_open2[i], r_rel2[i], mac_scale), leaf, skip};
    }
};

// Either test on the packed nodes (tree_arrays.hpp): the same values, so the same decisions.
template <class T, bool kRelative> struct PackedOpening {
    const WalkNode<T>* nodes;
    T mac_scale; // the group's (relative criterion)
    HOST_DEVICE NodeStep operator()(const Group<T>& group, std::int32_t i) const
    {
        const WalkNode<T> n = nodes[i];
        const Vec4<T>& c = n.com_r_open2;
        const bool opened =
            kRelative ? must_open_relative(group, c, c.w, n.r_rel2, mac_scale) : must_open(group, c, c.w);
        return {opened, n.is_leaf != 0, n.next};
    }
};

// A sink may take each visited node in one call, entry(i, to_nodes, to_leaves), instead of
// node(i) and leaf(i) behind a branch on its kind: on the GPU the threads of a warp visit nodes of
// either kind at once, and two branches would each be taken in turn.
template <class Sink, class = void> struct TakesEntries : std::false_type {
};
template <class Sink>
struct TakesEntries<Sink, std::void_t<decltype(std::declval<Sink&>().entry(0, true, true))>> : std::true_type {
};

// Walks the tree for one group, handing every accepted node to sink.node(i) and every opened leaf
// to sink.leaf(i), in walk order, and returns the node it stopped before: tree.num_nodes when it
// walked the whole tree. kBudgeted: over at most `budget` nodes; where the budget runs out first,
// the sink holds the walk's first entries and the node returned is where the rest begins (the
// walk's whole state is that index: the GPU's one-thread walks stop there and leave the rest of a
// long walk to threads of its own, gpu/tree_walk.cu). Without it the loop counts nothing and the
// budget is not read.
template <bool kBudgeted, class Open, class Sink, class T>
HOST_DEVICE inline std::int32_t walk_group_path(const OctreeView<T>& tree, const Group<T>& group, const Open& open,
                                                Sink& sink, std::int32_t budget)
{
    std::int32_t i = 0;
    for (std::int32_t visited = 0; i < tree.num_nodes; ++visited) {
        if constexpr (kBudgeted)
            if (visited == budget) return i;
        const NodeStep step = open(group, i);
        if constexpr (TakesEntries<Sink>::value) {
            sink.entry(i, !step.opened, step.opened && step.leaf);
        } else {
            if (step.opened && step.leaf) sink.leaf(i);
            if (!step.opened) sink.node(i);
        }
        i = step.opened ? i + 1 : step.skip; // descend (for a leaf i + 1 == next[i]) or pass the subtree
    }
    return tree.num_nodes;
}

template <class Open, class Sink, class T>
HOST_DEVICE inline void walk_group_with(const OctreeView<T>& tree, const Group<T>& group, const Open& open, Sink& sink)
{
    walk_group_path<false>(tree, group, open, sink, 0);
}

// Group g's walk under the view's criterion: the relative one when the view carries its arrays;
// on the packed nodes when the view has them.
template <class Sink, class T>
HOST_DEVICE inline void walk_group_into(const OctreeView<T>& tree, std::int32_t g, Sink& sink)
{
    const Group<T> group = tree.groups[g];
    if (tree.walk_nodes != nullptr) {
        if (tree.r_rel2 != nullptr)
            walk_group_with(tree, group, PackedOpening<T, true>{tree.walk_nodes, tree.mac_scale[g]}, sink);
        else
            walk_group_with(tree, group, PackedOpening<T, false>{tree.walk_nodes, T(0)}, sink);
    } else if (tree.r_rel2 != nullptr) {
        walk_group_with(
            tree, group,
            RelativeOpening<T>{tree.com_mass, tree.r_open2, tree.r_rel2, tree.next, tree.is_leaf, tree.mac_scale[g]},
            sink);
    } else {
        walk_group_with(tree, group, GeometricOpening<T>{tree.com_mass, tree.r_open2, tree.next, tree.is_leaf}, sink);
    }
}

struct CountPass {
    ListLengths lengths;
    HOST_DEVICE void node(std::int32_t) { ++lengths.nodes; }
    HOST_DEVICE void leaf(std::int32_t) { ++lengths.leaves; }
};

struct WritePass {
    std::int32_t* node_list;
    std::int32_t* leaf_list;
    ListLengths lengths;
    HOST_DEVICE void node(std::int32_t i) { node_list[lengths.nodes++] = i; }
    HOST_DEVICE void leaf(std::int32_t i) { leaf_list[lengths.leaves++] = i; }
};

// The two passes by name: CountPass only counts, so that the caller can scan the counts into
// offsets and size the lists exactly; WritePass writes at those offsets (node_list and leaf_list
// must have room for what CountPass returned for the same group and tree; CountPass ignores them).
template <class Pass, class T>
HOST_DEVICE inline ListLengths walk_group(const OctreeView<T>& tree, std::int32_t g, std::int32_t* node_list,
                                          std::int32_t* leaf_list)
{
    if constexpr (std::is_same<Pass, CountPass>::value) {
        CountPass pass;
        walk_group_into(tree, g, pass);
        return pass.lengths;
    } else {
        WritePass pass{node_list, leaf_list, {}};
        walk_group_into(tree, g, pass);
        return pass.lengths;
    }
}

} // namespace grove
