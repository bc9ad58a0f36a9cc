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

    std::int32_t num_nodes() const { return static_cast<std::int32_t>(next.size()); }
    OctreeView<double> view() const
    {
        return make_view(*this, static_cast<std::int32_t>(particles.size()), num_nodes(),
                         static_cast<std::int32_t>(groups.size()));
    }
};

} // namespace grove
