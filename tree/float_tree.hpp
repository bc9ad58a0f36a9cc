// The single-precision copy of a host tree that the GPU engine walks and evaluates. Positions and
// centres of mass are stored relative to the whole system's centre of mass (forces do not depend
// on the origin, and float resolves offsets best where the particles are densest). Group boxes are recomputed from the
// converted particles and padded, so that every float particle lies inside its float box and the
// walk never accepts a cell that holds one of the group's own particles.
//
// pack_float_tree (the GPU engine calls its two parts) writes straight into caller memory (the
// pinned upload buffers); FloatTree owns vectors of the same arrays so that the host can walk
// exactly what the device walks (the list-identity test).
#pragma once

#include <cstdint>
#include <vector>

#include "tree/octree.hpp"

namespace grove {

// Writes every array but r_open2 (set per theta) into `out`, which must have room for the tree.
// with_order = false leaves out.order unwritten (4 bytes a particle): a caller that takes the
// forces in the tree's order (ForceEngine::compute_in_own_order) never reads it.
void pack_float_tree(const Octree& tree, const TreeArrays<float, Pointer>& out, bool with_order = true);
// The same in two parts, so that a caller can send the particles (the bulk of the tree) while the
// rest is packed: pack_float_particles first, then pack_float_nodes (nodes, groups and the order,
// the group boxes from the float particles).
void pack_float_particles(const Octree& tree, const TreeArrays<float, Pointer>& out);
void pack_float_nodes(const Octree& tree, const TreeArrays<float, Pointer>& out, bool with_order = true);

struct FloatTree : TreeArrays<float, HostVector> {
    explicit FloatTree(const Octree& tree);
    void set_opening_radii(float theta);
    OctreeView<float> view() const;
};

} // namespace grove
