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

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/host_device.hpp"
#include "tree/octree.hpp"

namespace grove {

// The float tree's origin. The origin is the centre of mass of everything: where the particles are
// densest (a galaxy's centre), float then resolves the smallest offsets.
struct FloatOrigin {
    double cx = 0, cy = 0, cz = 0;
    HOST_DEVICE Vec4<float> shifted(const Vec4<double>& v) const
    {
        return Vec4<float>{static_cast<float>(v.x - cx), static_cast<float>(v.y - cy), static_cast<float>(v.z - cz),
                           static_cast<float>(v.w)};
    }
};

// The origin of a tree whose root has centre of mass `com`.
HOST_DEVICE inline FloatOrigin float_origin(const Vec4<double>& com)
{
    FloatOrigin o;
    o.cx = com.x;
    o.cy = com.y;
    o.cz = com.z;
    return o;
}
FloatOrigin float_origin(const Octree& tree);

// The pad of the walk's comparisons. A float position is off by up to half an ulp of its own
// magnitude, and every distance the walk compares (a group's box against a node's centre of mass)
// carries a few such errors from either side. Each side is padded by 4 ulps of its own magnitudes
// (a group's box by its largest coordinate, a node's opening radius by its centre of mass's largest
// coordinate plus its size), so that a group still always opens its own cells. Local rather than
// 4 ulps of the largest coordinate of all: a particle flung far from the rest then costs the
// precision of the comparisons out there, not of every group's box at the centre.
HOST_DEVICE inline float float_pad(float magnitude)
{
    return 4 * magnitude * FLT_EPSILON;
}

// One node's float values from its double ones.
HOST_DEVICE inline void pack_float_node(const FloatOrigin& origin, const Vec4<double>& com, const Quadrupole<double>& q,
                                        double size, double com_offset, Vec4<float>& com_out, Quadrupole<float>& q_out,
                                        float& size_out, float& com_offset_out)
{
    com_out = origin.shifted(com);
    q_out = Quadrupole<float>{static_cast<float>(q.xx), static_cast<float>(q.xy), static_cast<float>(q.xz),
                              static_cast<float>(q.yy), static_cast<float>(q.yz), static_cast<float>(q.trace)};
    size_out = static_cast<float>(size);
    // Rounded up and padded so that the float radius is never smaller than the double one.
    const float magnitude = fmaxf(fmaxf(fabsf(com_out.x), fabsf(com_out.y)), fabsf(com_out.z)) + size_out;
    com_offset_out = nextafterf(static_cast<float>(com_offset), INFINITY) + float_pad(magnitude);
}

// A group's box from its float particles, padded by a few ulps so that every particle lies inside.
HOST_DEVICE inline Group<float> float_group(ParticleRange r, const Vec4<float>* particles)
{
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (std::int32_t i = r.begin; i < r.end; ++i) {
        const Vec4<float> p = particles[i];
        const float c[3] = {p.x, p.y, p.z};
        for (int d = 0; d < 3; ++d) {
            lo[d] = fminf(lo[d], c[d]);
            hi[d] = fmaxf(hi[d], c[d]);
        }
    }
    float magnitude = 0;
    for (int d = 0; d < 3; ++d) magnitude = fmaxf(magnitude, fmaxf(fabsf(lo[d]), fabsf(hi[d])));
    const float pad = float_pad(magnitude);
    float centre[3], half_extent[3];
    for (int d = 0; d < 3; ++d) {
        centre[d] = 0.5f * (lo[d] + hi[d]);
        const float h = fmaxf(hi[d] - centre[d], centre[d] - lo[d]);
        half_extent[d] = h * (1 + 4e-7f) + pad; // covers the rounding of centre and h
    }
    return Group<float>{
        {centre[0], centre[1], centre[2], 0.f}, {half_extent[0], half_extent[1], half_extent[2], 0.f}, r};
}

// Writes every array but r_open2 (set per theta) into `out`, which must have room for the tree.
// with_order = false leaves out.order unwritten (4 bytes a particle): a caller that takes the
// forces in the tree's order (ParticleStore::take_forces_in_order) never reads it.
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
