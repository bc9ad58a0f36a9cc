// The owning host tree in double precision, built by build_octree() (tree/build.hpp): the tree's
// arrays (tree/tree_arrays.hpp) plus what only the host build keeps.
#pragma once

#include <cstdint>
#include <vector>

#include "tree/key_frame.hpp"
#include "tree/segments.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

struct Octree : TreeArrays<double, HostVector> {
    std::vector<std::uint64_t> keys; // [N] Morton keys of the sorted particles
    // [M] x, y, z: the centre of the node's particles' box once moments are made (the geometric
    // cell's centre before); w: the octree cell's side, which fixes the node's level.
    std::vector<Vec4<double>> cell_centre;
    std::vector<Segment> segments; // how the build cut the node array (tree/segments.hpp)
    // The build's buffer per thread, emptied after each build but kept (with its capacity) for the
    // next one, so that repeated builds do not allocate; a copy of the tree copies none of it.
    std::vector<BuildStaging> staging;
    KeyFrame frame; // where the keys came from (the cube's side fixes each cell's level)
    // What other domains' LETs appended to this tree brought for softening by type
    // (tree/locally_essential.hpp: append_let): a LET's cells come without their particles, so
    // each appended node's mean h and opening radius^2 for its spread come with it (NaN from a
    // LET that had none to give), and each appended particle's type. Empty for a tree built here
    // alone; the build empties them.
    std::vector<double> appended_half, appended_radius2; // [nodes appended], after the tree's own
    std::vector<std::uint8_t> appended_types;            // [particles appended]

    std::int32_t num_nodes() const { return static_cast<std::int32_t>(next.size()); }
    OctreeView<double> view() const
    {
        return make_view(*this, static_cast<std::int32_t>(particles.size()), num_nodes(),
                         static_cast<std::int32_t>(groups.size()));
    }
};

} // namespace grove
