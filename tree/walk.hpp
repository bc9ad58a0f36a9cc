// The stackless group walk (DESIGN.md section 1), one function for the CPU engine's OpenMP loop and
// the GPU's one-thread-per-group kernels. Nodes are in pre-order with next[] skip indices, so the
// traversal is a single index moving forward: open a node by stepping to i + 1, accept it by
// jumping to next[i]. No stack, no recursion, no divergent depth on the device.
//
// A node is opened for group g when the distance from the node's centre of mass to g's bounding
// box is below its opening radius (r_open^2 precomputed per node for the current theta). Opened
// leaves go to the leaf list (their particles interact one by one), accepted nodes to the node
// list (their quadrupole expansion is used).
//
// The walk runs twice (ArborX's first/second pass): CountPass only counts, so that the caller can
// scan the counts into offsets and size the lists exactly; WritePass writes at those offsets.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tree/annotation.hpp"
#include "tree/octree.hpp"

namespace grove {

struct CountPass {};
struct WritePass {};

struct ListLengths {
    std::int32_t nodes = 0;
    std::int32_t leaves = 0;
};

// Squared distance from point p to the axis-aligned box of `group` (0 inside the box).
template <class T> HOST_DEVICE inline T box_distance2(const Group<T>& group, T px, T py, T pz)
{
    T dx = (px > group.centre.x ? px - group.centre.x : group.centre.x - px) - group.half_extent.x;
    T dy = (py > group.centre.y ? py - group.centre.y : group.centre.y - py) - group.half_extent.y;
    T dz = (pz > group.centre.z ? pz - group.centre.z : group.centre.z - pz) - group.half_extent.z;
    dx = dx > T(0) ? dx : T(0);
    dy = dy > T(0) ? dy : T(0);
    dz = dz > T(0) ? dz : T(0);
    return dx * dx + dy * dy + dz * dz;
}

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
        if (box_distance2(group, com.x, com.y, com.z) < tree.r_open2[i]) {
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
