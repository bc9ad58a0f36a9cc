// The flat octree: a few arrays in pre-order plus a trivially copyable view that host loops and
// CUDA kernels take by value. Node i's subtree is the index range [i, next[i]); its first child is
// i + 1; a leaf has next[i] == i + 1. Particles are stored in Morton order, so every node and every
// group owns one contiguous particle range.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "tree/annotation.hpp"
#include "tree/gravity.hpp"

namespace grove {

// x, y, z and a fourth value (mass); for T = float its layout is CUDA's float4.
template <class T> struct alignas(4 * sizeof(T)) Vec4 {
    T x, y, z, w;
};
static_assert(sizeof(Vec4<float>) == 16, "Vec4<float> must match float4");
static_assert(sizeof(Vec4<double>) == 32, "Vec4<double> must match double4");
static_assert(sizeof(Quadrupole<float>) == 24, "Quadrupole<float> is six floats");

// A half-open range of particle indices (Morton order).
struct ParticleRange {
    std::int32_t begin, end;
};
static_assert(sizeof(ParticleRange) == 8, "ParticleRange is shared with the device");

// A group of particles that walks the tree together: its range and its axis-aligned bounding box.
template <class T> struct Group {
    Vec4<T> centre;      // box centre (w unused)
    Vec4<T> half_extent; // box half widths (w unused)
    ParticleRange range;
};

// Everything a walk or an evaluation reads; raw pointers and counts, no ownership.
template <class T> struct OctreeView {
    std::int32_t num_nodes = 0;
    std::int32_t num_particles = 0;
    std::int32_t num_groups = 0;
    const std::int32_t* next = nullptr;    // [num_nodes] index after the node's subtree
    const std::uint8_t* is_leaf = nullptr; // [num_nodes] 1 for leaves
    const ParticleRange* range = nullptr;  // [num_nodes] particles of the node
    const Vec4<T>* com_mass = nullptr;     // [num_nodes] centre of mass (x,y,z), mass (w)
    const Quadrupole<T>* quad = nullptr;   // [num_nodes] traceless quadrupole about the centre of mass
    const T* r_open2 = nullptr;            // [num_nodes] squared opening radius for the current theta
    const Vec4<T>* particles = nullptr;    // [num_particles] position (x,y,z), mass (w), Morton order
    const Group<T>* groups = nullptr;      // [num_groups] in Morton order, ranges tile [0, num_particles)
};
static_assert(std::is_trivially_copyable_v<OctreeView<float>>, "kernels take the view by value");

// The view of an owner that keeps the walk's arrays as vectors under these names (Octree,
// FloatTree).
template <class T, class Owner> OctreeView<T> make_view(const Owner& o)
{
    OctreeView<T> v;
    v.num_nodes = static_cast<std::int32_t>(o.next.size());
    v.num_particles = static_cast<std::int32_t>(o.particles.size());
    v.num_groups = static_cast<std::int32_t>(o.groups.size());
    v.next = o.next.data();
    v.is_leaf = o.is_leaf.data();
    v.range = o.range.data();
    v.com_mass = o.com_mass.data();
    v.quad = o.quad.data();
    v.r_open2 = o.r_open2.data();
    v.particles = o.particles.data();
    v.groups = o.groups.data();
    return v;
}

// The owning host tree (double precision) built by build_octree().
struct Octree {
    std::vector<std::int32_t> next;
    std::vector<std::uint8_t> is_leaf;
    std::vector<ParticleRange> range;
    std::vector<Vec4<double>> com_mass;
    std::vector<Quadrupole<double>> quad;
    std::vector<double> size;              // [num_nodes] cell side length l
    std::vector<double> com_offset;        // [num_nodes] delta = |centre of mass - cell centre|
    std::vector<std::int32_t> level;       // [num_nodes] 0 for the root
    std::vector<double> r_open2;           // [num_nodes] filled by set_opening_radii()
    std::vector<Vec4<double>> particles;   // [N] sorted positions and masses
    std::vector<std::uint32_t> order;      // [N] order[k] = caller's index of sorted particle k
    std::vector<std::uint64_t> keys;       // [N] Morton keys of the sorted particles
    std::vector<Vec4<double>> cell_centre; // [num_nodes] geometric cell centres
    std::vector<Group<double>> groups;
    double box_lo[3] = {0, 0, 0}; // bounding cube corner
    double box_side = 0;          // bounding cube side

    std::int32_t num_nodes() const { return static_cast<std::int32_t>(next.size()); }
    OctreeView<double> view() const;
};

// Squared opening radius of a cell of side l whose centre of mass lies delta from its centre:
// (max(l/theta, sqrt(3)/2 l (1 + 1e-6)) + delta)^2. One formula for the host (double) and the
// device kernel (float) so that both walks make the same decisions.
template <class T> HOST_DEVICE inline T opening_radius2(T l, T delta, T theta)
{
    const T by_theta = l / theta;
    const T floor = T(0.8660254037844387 * (1 + 1e-6)) * l;
    const T r = (by_theta > floor ? by_theta : floor) + delta;
    return r * r;
}

// r_open = max(l/theta, sqrt(3)/2 l (1 + 1e-6)) + delta for every node. The floor keeps a group
// from ever accepting a cell that contains one of its own particles, which l/theta alone would
// allow for theta > 2/sqrt(3); below that it changes nothing (Octgrav's l/theta + delta).
void set_opening_radii(Octree& tree, double theta);

} // namespace grove
