// The group walk (DESIGN.md section 1). Nodes are in pre-order with next[] skip indices, so the
// CPU engine's walk is a single index moving forward: open a node by stepping to i + 1, accept it
// by jumping to next[i]; no stack, no recursion. The GPU walks the same nodes with a warp per group
// in rounds (walk_group_in_rounds below, which gives the host the device's order): the path walk,
// a thread per group, waited on one dependent load per node and left the device nearly idle.
//
// A node is opened for group g by an acceptance criterion of tree/mac.hpp (its per-node radii
// precomputed for the current theta or alpha). Opened leaves go to the leaf list (their particles
// interact one by one), accepted nodes to the node list (their quadrupole expansion is used).
//
// The walk runs twice (ArborX's first/second pass): once counting, once writing at the offsets a
// scan of the counts gives. What a pass does with each entry is its sink's business.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

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

// The path over nodes [first, end), a run of sibling subtrees: visit(i, step) for every node the
// group tests, in increasing index order.
template <class Open, class Visit, class T>
HOST_DEVICE inline void walk_path(const Group<T>& group, const Open& open, std::int32_t first, std::int32_t end,
                                  Visit&& visit)
{
    for (std::int32_t i = first; i < end;) {
        const NodeStep step = open(group, i);
        visit(i, step);
        i = step.opened ? i + 1 : step.skip; // descend (for a leaf i + 1 == next[i]) or pass the subtree
    }
}

// What a tested node gives the lists: an accepted node to sink.node(i), an opened leaf to sink.leaf(i).
template <class Sink> HOST_DEVICE inline void hand_entry(Sink& sink, std::int32_t i, const NodeStep& step)
{
    if (step.opened && step.leaf) sink.leaf(i);
    if (!step.opened) sink.node(i);
}

// Walks the tree for one group along its path, handing its entries to the sink in increasing
// index order.
template <class Open, class Sink, class T>
HOST_DEVICE inline void walk_group_with(const OctreeView<T>& tree, const Group<T>& group, const Open& open, Sink& sink)
{
    walk_path(group, open, 0, tree.num_nodes, [&](std::int32_t i, const NodeStep& step) { hand_entry(sink, i, step); });
}

// Calls walk(group, open) with group g and the opening of the view's criterion: the relative one
// when the view carries its arrays; on the packed nodes when the view has them.
template <class Walk, class T>
HOST_DEVICE inline decltype(auto) with_group_opening(const OctreeView<T>& tree, std::int32_t g, Walk&& walk)
{
    const Group<T> group = tree.groups[g];
    if (tree.walk_nodes != nullptr) {
        if (tree.r_rel2 != nullptr) return walk(group, PackedOpening<T, true>{tree.walk_nodes, tree.mac_scale[g]});
        return walk(group, PackedOpening<T, false>{tree.walk_nodes, T(0)});
    }
    if (tree.r_rel2 != nullptr)
        return walk(group, RelativeOpening<T>{tree.com_mass, tree.r_open2, tree.r_rel2, tree.next, tree.is_leaf,
                                              tree.mac_scale[g]});
    return walk(group, GeometricOpening<T>{tree.com_mass, tree.r_open2, tree.next, tree.is_leaf});
}

// Group g's walk under the view's criterion.
template <class Sink, class T>
HOST_DEVICE inline void walk_group_into(const OctreeView<T>& tree, std::int32_t g, Sink& sink)
{
    with_group_opening(tree, g,
                       [&](const Group<T>& group, const auto& open) { walk_group_with(tree, group, open, sink); });
}

// The GPU walks a group with a warp (gpu/tree_walk.cu), in rounds; this is the same walk on the
// host, which gives its order: the device's lists are these, entry for entry. What is left of the
// walk is a stack of runs of sibling nodes, each (first node, end), end being the parent's next. A
// round takes up to kWalkLanes runs from the top of the stack, in stack order, or
// WalkRounds::most_runs() where the stack holds that many (on the device lane l takes runs l,
// l + 32, ..., their loads in flight together). It tests each run's first node i and hands it to
// a list, in that order, then pushes the runs' rests (next[i], end) where next[i] < end, and after
// them the children (i + 1, next[i]) of the internal nodes it opened, both in that order. Children
// on top keep the walk near depth first and the stack short. Where a round's pushes might not fit
// the stack (more than capacity - the round's most runs held), the top run is walked along its
// path instead, one node a round. Returns the rounds walked along a path (for tests of that
// fallback).
constexpr int kWalkLanes = 32;

struct WalkRounds {
    int capacity;      // runs the stack holds
    int runs_per_lane; // rounds of runs_per_lane kWalkLanes runs where the stack holds them
    constexpr int most_runs() const { return runs_per_lane * kWalkLanes; }
};
// The device's walks. Stacks of up to 233 runs in rounds of 32, and 297-322 in rounds of 64, were
// counted on the 2^20 and 2^23 galaxies and Plummer spheres (bench/results/tree-kernels.md). The
// geometric criterion's walks are alike and fill the device; the stacks take shared memory from the
// L1 cache that holds the nodes, and any larger stack made them slower. The relative criterion's
// longest walks end the kernel alone: rounds of two runs a lane halve their rounds, and are worth
// the stack (three or four a lane were slower: their pushes outgrow the stack more often).
constexpr WalkRounds kGeometricRounds{256, 1}, kRelativeRounds{512, 2};

struct WalkRun {
    std::int32_t first, end;
};

template <class Open, class Sink, class T>
inline long long walk_group_in_rounds(const OctreeView<T>& tree, const Group<T>& group, const Open& open, Sink& sink,
                                      WalkRounds rounds)
{
    std::vector<WalkRun> stack{{0, tree.num_nodes}}, round, rests, children;
    long long path_rounds = 0;
    while (!stack.empty()) {
        if (static_cast<int>(stack.size()) > rounds.capacity - rounds.most_runs()) {
            const WalkRun run = stack.back();
            stack.pop_back();
            walk_path(group, open, run.first, run.end, [&](std::int32_t i, const NodeStep& step) {
                hand_entry(sink, i, step);
                ++path_rounds;
            });
            continue;
        }
        const std::size_t most = static_cast<std::size_t>(rounds.most_runs());
        const std::size_t take = stack.size() >= most ? most : std::min<std::size_t>(stack.size(), kWalkLanes);
        round.assign(stack.end() - static_cast<std::ptrdiff_t>(take), stack.end());
        stack.resize(stack.size() - take);
        rests.clear();
        children.clear();
        for (const WalkRun& run : round) {
            const NodeStep step = open(group, run.first);
            hand_entry(sink, run.first, step);
            if (step.skip < run.end) rests.push_back({step.skip, run.end});
            if (step.opened && !step.leaf) children.push_back({run.first + 1, step.skip});
        }
        stack.insert(stack.end(), rests.begin(), rests.end());
        stack.insert(stack.end(), children.begin(), children.end());
    }
    return path_rounds;
}

// Group g's walk in rounds under the view's criterion (as walk_group_into chooses it), with the
// device's rounds for it, or with a stack of `capacity` runs where that is given (tests).
template <class Sink, class T>
inline long long walk_group_in_rounds(const OctreeView<T>& tree, std::int32_t g, Sink& sink, int capacity = 0)
{
    WalkRounds rounds = tree.r_rel2 != nullptr ? kRelativeRounds : kGeometricRounds;
    if (capacity > 0) rounds.capacity = capacity;
    return with_group_opening(tree, g, [&](const Group<T>& group, const auto& open) {
        return walk_group_in_rounds(tree, group, open, sink, rounds);
    });
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
