// The single-precision copy of a host tree that the GPU engine walks and evaluates. Positions and
// centres of mass are stored relative to the bounding cube's centre (forces do not depend on the
// origin, and float resolves offsets from the centre best). Group boxes are recomputed from the
// converted particles and padded, so that every float particle lies inside its float box and the
// walk never accepts a cell that holds one of the group's own particles.
//
// pack_float_tree writes straight into caller memory (the GPU engine's pinned upload buffers);
// FloatTree owns vectors of the same arrays so that the host can walk exactly what the device
// walks (the list-identity test).
#pragma once

#include <cstdint>
#include <vector>

#include "tree/octree.hpp"

namespace grove {

struct FloatTreeArrays {
    Vec4<float>* particles;  // [N]
    Vec4<float>* com_mass;   // [M]
    Quadrupole<float>* quad; // [M]
    std::int32_t* next;      // [M]
    std::uint8_t* is_leaf;   // [M]
    ParticleRange* range;    // [M]
    float* size;             // [M] cell side l
    float* com_offset;       // [M] delta
    Group<float>* groups;    // [G]
    std::uint32_t* order;    // [N] caller index of sorted particle k
};

void pack_float_tree(const Octree& tree, const FloatTreeArrays& out);

// Opening radii of every node for theta, in float, with the shared formula.
void float_opening_radii(std::size_t num_nodes, const float* size, const float* com_offset, float theta,
                         float* r_open2);

struct FloatTree {
    std::vector<Vec4<float>> particles, com_mass;
    std::vector<Quadrupole<float>> quad;
    std::vector<std::int32_t> next;
    std::vector<std::uint8_t> is_leaf;
    std::vector<ParticleRange> range;
    std::vector<float> size, com_offset, r_open2;
    std::vector<Group<float>> groups;
    std::vector<std::uint32_t> order;

    explicit FloatTree(const Octree& tree);
    void set_opening_radii(float theta);
    OctreeView<float> view() const;
};

} // namespace grove
