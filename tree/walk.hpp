// The stackless group walk (DESIGN.md section 1), one function for the CPU engine's OpenMP loop and
// the GPU's one-thread-per-group kernels. Nodes are in pre-order with next[] skip indices, so the
// traversal is a single index moving forward: open a node by stepping to i + 1, accept it by
// jumping to next[i]. No stack, no recursion, no divergent depth on the device.
//
// A node is opened for group g by the acceptance criterion of tree/mac.hpp (r_open^2 precomputed
// per node for the current theta). Opened leaves go to the leaf list (their particles interact one by one), accepted
// nodes to the node list (their quadrupole expansion is used).
//
// The walk runs twice (ArborX's first/second pass): CountPass only counts, so that the caller can
// scan the counts into offsets and size the lists exactly; WritePass writes at those offsets.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/host_device.hpp"
#include "tree/mac.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

struct CountPass {};
struct WritePass {};

struct ListLengths {
    std::int32_t nodes = 0;
    std::int32_t leaves = 0;
};

// Walks the tree for one group. With WritePass, node_list and leaf_list must have room for the
// lengths that CountPass returned for the same group and tree; with CountPass they are unused.
template <class Pass, class T>
HOST_DEVICE inline ListLengths walk_group(const OctreeView<T>& tree, const Group<T>& group, std::int32_t* node_list,
                                          std::int32_t* leaf_list)
{
    constexpr bool write = std::is_same<Pass, WritePass>::value;
    ListLengths lengths;
    std::int32_t i = 0;
    while (i < tree.num_nodes) {
        const Vec4<T> com = tree.com_mass[i];
        if (must_open(group, com, tree.r_open2[i])) {
            if (tree.is_leaf[i]) {
                if (write) leaf_list[lengths.leaves] = i;
                ++lengths.leaves;
            }
            ++i; // descend; for a leaf i + 1 == next[i]
        } else {
            if (write) node_list[lengths.nodes] = i;
            ++lengths.nodes;
            i = tree.next[i];
        }
    }
    return lengths;
}

} // namespace grove
