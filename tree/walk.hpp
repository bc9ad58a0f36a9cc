// The stackless group walk (DESIGN.md section 1), one function for the CPU engine's OpenMP loop and
// the GPU's one-thread-per-group kernels. Nodes are in pre-order with next[] skip indices, so the
// traversal is a single index moving forward: open a node by stepping to i + 1, accept it by
// jumping to next[i]. No stack, no recursion, no divergent depth on the device.
//
// A node is opened for group g by the acceptance criterion of tree/mac.hpp (r_open^2 precomputed
// per node for the current theta). Opened leaves go to the leaf list (their particles interact one by one), accepted
// nodes to the node list (their quadrupole expansion is used).
//
// The walk runs twice (ArborX's first/second pass): once counting, once writing at the offsets a
// scan of the counts gives. What a pass does with each entry is its sink's business (the GPU's
// write pass stages entries in registers, gpu/tree_walk.cu).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/host_device.hpp"
#include "tree/mac.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

struct ListLengths {
    std::int32_t nodes = 0;
    std::int32_t leaves = 0;
};

// Walks the tree for one group, handing every accepted node to sink.node(i) and every opened leaf
// to sink.leaf(i), in walk order.
template <class Sink, class T>
HOST_DEVICE inline void walk_group_into(const OctreeView<T>& tree, const Group<T>& group, Sink& sink)
{
    std::int32_t i = 0;
    while (i < tree.num_nodes) {
        const Vec4<T> com = tree.com_mass[i];
        if (must_open(group, com, tree.r_open2[i])) {
            if (tree.is_leaf[i]) sink.leaf(i);
            ++i; // descend; for a leaf i + 1 == next[i]
        } else {
            sink.node(i);
            i = tree.next[i];
        }
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
HOST_DEVICE inline ListLengths walk_group(const OctreeView<T>& tree, const Group<T>& group, std::int32_t* node_list,
                                          std::int32_t* leaf_list)
{
    if constexpr (std::is_same<Pass, CountPass>::value) {
        CountPass pass;
        walk_group_into(tree, group, pass);
        return pass.lengths;
    } else {
        WritePass pass{node_list, leaf_list, {}};
        walk_group_into(tree, group, pass);
        return pass.lengths;
    }
}

} // namespace grove
