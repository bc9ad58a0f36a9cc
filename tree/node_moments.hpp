// One node's moments (mass, centre of mass, traceless quadrupole, com offset) and the bounding box
// of its particles, which gives the opening criterion its size and centre: the step that
// compute_moments (tree/moments.hpp) runs bottom-up on the host and the resident GPU pipeline's
// refit runs from the leaves up on the device. One definition for both, so the CPU tests of refits test the
// device's arithmetic.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

// The level (0 = root) of a cell of side `side` in a tree whose root cell has side root_side: a
// build makes every side the root's divided by a power of two, which is exact, so the binary
// exponents differ by the level. The resident GPU refit gives each node its side from it.
HOST_DEVICE inline int cell_level(double side, double root_side)
{
    return ilogb(root_side) - ilogb(side);
}

// An axis-aligned box: a node's particles'.
struct NodeBox {
    double lo[3], hi[3];
};

HOST_DEVICE inline NodeBox empty_node_box()
{
    return NodeBox{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}};
}

// Comparisons rather than fmin/fmax, which the host compiler calls in libm (NaN rules): the box
// of every leaf's particles made the host's moments several times slower. Positions are finite.
HOST_DEVICE inline void cover(NodeBox& b, const NodeBox& c)
{
    for (int d = 0; d < 3; ++d) {
        b.lo[d] = c.lo[d] < b.lo[d] ? c.lo[d] : b.lo[d];
        b.hi[d] = c.hi[d] > b.hi[d] ? c.hi[d] : b.hi[d];
    }
}

// Raw pointers to what finishing a node reads and writes, in double precision.
struct MomentArrays {
    const Vec4<double>* particles = nullptr; // sorted positions and masses
    const std::int32_t* next = nullptr;
    const std::uint8_t* is_leaf = nullptr;
    const ParticleRange* range = nullptr;
    Vec4<double>* cell_centre = nullptr; // x, y, z written (the box's centre); w, the cell's side, kept
    double* size = nullptr;              // written: the box's longest side
    Vec4<double>* com_mass = nullptr;
    Quadrupole<double>* quad = nullptr;
    double* com_offset = nullptr;
    NodeBox* boxes = nullptr; // written: one per node, read back for the parents
    // Optional: node i's children listed at child_list[first_child[i]], child_count[i] of them
    // (the GPU's refit), in place of following the `next` links one dependent load at a time.
    const std::int32_t* child_list = nullptr;
    const std::int32_t* first_child = nullptr;
    const std::uint8_t* child_count = nullptr;
};

HOST_DEVICE inline void accumulate_quadrupole(Quadrupole<double>& q, double m, double dx, double dy, double dz)
{
    const double d2 = dx * dx + dy * dy + dz * dz;
    q.xx += m * (3 * dx * dx - d2);
    q.xy += m * 3 * dx * dy;
    q.xz += m * 3 * dx * dz;
    q.yy += m * (3 * dy * dy - d2);
    q.yz += m * 3 * dy * dz;
    q.trace += m * d2;
}

// The most children a node of an octree has (the tree invariants test checks it).
constexpr int kMaxChildren = 8;

// An internal node's children in order, with their centres of mass. Every loop runs over
// kMaxChildren with the count as a guard, so the compiler unrolls it, keeps the arrays in
// registers and issues the children's loads together: a device refit waited on one dependent
// load after another when each of finish_node's passes followed the `next` links.
struct NodeChildren {
    int count = 0;
    std::int32_t index[kMaxChildren] = {};
    Vec4<double> com_mass[kMaxChildren] = {};
    NodeChildren() = default; // a leaf's: none
    HOST_DEVICE NodeChildren(const MomentArrays& t, std::int32_t i)
    {
        if (t.child_list) {
            count = t.child_count[i];
            const std::int32_t* listed = t.child_list + t.first_child[i];
            for (int k = 0; k < kMaxChildren; ++k)
                if (k < count) index[k] = listed[k];
            for (int k = 0; k < kMaxChildren; ++k)
                if (k < count) com_mass[k] = t.com_mass[index[k]];
            return;
        }
        const std::int32_t end = t.next[i];
        std::int32_t c = i + 1;
        for (int k = 0; k < kMaxChildren; ++k)
            if (c < end) {
                index[k] = c;
                count = k + 1;
                c = t.next[c];
            }
        for (int k = 0; k < kMaxChildren; ++k)
            if (k < count) com_mass[k] = t.com_mass[index[k]];
    }
};

// Mass, centre of mass, quadrupole, box and com offset of node i: a leaf sums its particles, an
// internal node its children as point masses plus their own quadrupoles (parallel-axis theorem),
// which must be done already. A node without mass keeps its box's centre as centre of mass.
//
// The node's box is a leaf's particles' own, an internal node's the union of its children's. Its
// centre and its longest side are what the opening criterion (tree/mac.hpp) measures a node by
// (Bonsai's convention rather than the octree cell's side): every particle lies within
// sqrt(3)/2 size of that centre, the bound the criterion's floor needs, and a cell whose
// particles fill only a corner of it is accepted as early as its extent allows. A build and a
// refit give a node the same size for the same positions, however far the particles moved.
HOST_DEVICE inline void finish_node(const MomentArrays& t, std::int32_t i)
{
    const bool leaf = t.is_leaf[i];
    const ParticleRange r = t.range[i];
    // A leaf's particles: their box and mass sums in one pass; an internal node's children as
    // point masses.
    NodeBox box = empty_node_box();
    double m = 0, mx = 0, my = 0, mz = 0;
    if (leaf) {
        for (std::int32_t p = r.begin; p < r.end; ++p) {
            const Vec4<double> s = t.particles[p];
            cover(box, NodeBox{{s.x, s.y, s.z}, {s.x, s.y, s.z}});
            m += s.w;
            mx += s.w * s.x;
            my += s.w * s.y;
            mz += s.w * s.z;
        }
    }
    // The children's boxes and quadrupoles are read with their centres of mass, before anything is
    // written: the GPU's refit then waits on one round of loads per node, not three.
    const NodeChildren children = leaf ? NodeChildren{} : NodeChildren(t, i);
    NodeBox child_box[kMaxChildren] = {};
    Quadrupole<double> qc[kMaxChildren];
    for (int k = 0; k < kMaxChildren; ++k)
        if (k < children.count) {
            child_box[k] = t.boxes[children.index[k]];
            qc[k] = t.quad[children.index[k]];
        }
    for (int k = 0; k < kMaxChildren; ++k)
        if (k < children.count) {
            const Vec4<double> s = children.com_mass[k];
            m += s.w;
            mx += s.w * s.x;
            my += s.w * s.y;
            mz += s.w * s.z;
        }
    for (int k = 0; k < kMaxChildren; ++k)
        if (k < children.count) cover(box, child_box[k]);
    const Vec4<double> centre{(box.lo[0] + box.hi[0]) / 2, (box.lo[1] + box.hi[1]) / 2, (box.lo[2] + box.hi[2]) / 2,
                              t.cell_centre[i].w};
    const double sx = box.hi[0] - box.lo[0], sy = box.hi[1] - box.lo[1], sz = box.hi[2] - box.lo[2];
    const double sxy = sx > sy ? sx : sy;
    const Vec4<double> cm =
        m > 0 ? Vec4<double>{mx / m, my / m, mz / m, m} : Vec4<double>{centre.x, centre.y, centre.z, 0};
    Quadrupole<double> q{};
    if (leaf) {
        for (std::int32_t p = r.begin; p < r.end; ++p) {
            const Vec4<double> s = t.particles[p];
            accumulate_quadrupole(q, s.w, s.x - cm.x, s.y - cm.y, s.z - cm.z);
        }
    } else {
        for (int k = 0; k < kMaxChildren; ++k)
            if (k < children.count) {
                const Vec4<double> s = children.com_mass[k];
                accumulate_quadrupole(q, s.w, s.x - cm.x, s.y - cm.y, s.z - cm.z);
            }
        for (int k = 0; k < kMaxChildren; ++k)
            if (k < children.count) {
                q.xx += qc[k].xx;
                q.xy += qc[k].xy;
                q.xz += qc[k].xz;
                q.yy += qc[k].yy;
                q.yz += qc[k].yz;
                q.trace += qc[k].trace; // plus the point-mass part m_c |com_c - com|^2 added above
            }
    }
    t.boxes[i] = box;
    t.cell_centre[i] = centre;
    t.size[i] = sxy > sz ? sxy : sz;
    t.com_mass[i] = cm;
    t.quad[i] = q;
    t.com_offset[i] = sqrt((cm.x - centre.x) * (cm.x - centre.x) + (cm.y - centre.y) * (cm.y - centre.y) +
                           (cm.z - centre.z) * (cm.z - centre.z));
}

} // namespace grove
