// The tree's arrays, declared once (cornerstone-octree's OctreeData idea) and instantiated for
// every place a tree lives: host vectors in double (Octree) and float (FloatTree), raw pointers
// (what pack_float_tree writes), and in gpu/ pinned and device buffers. Adding an array here adds
// it to every copy, resize, upload and view.
#pragma once

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "core/host_device.hpp"
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

// A half-open run of groups (Morton order): an MPI rank's share, a batch of the walk.
struct GroupRange {
    std::int32_t first = 0, last = 0; // groups [first, last)
};

// How long an array is.
enum class Extent { particles, nodes, groups };

struct TreeArrayInfo {
    const char* name; // names the buffer in allocation errors
    Extent extent;
    bool per_theta; // computed for each opening criterion where the walk runs, never uploaded with the tree
};

template <class U> using HostVector = std::vector<U>;
template <class U> using Pointer = U*;

// Node i's subtree is the index range [i, next[i]); its first child is i + 1; a leaf has
// next[i] == i + 1. Particles are in Morton order, so every node and group owns one contiguous
// particle range.
template <class T, template <class> class Store> struct TreeArrays {
    Store<Vec4<T>> particles;   // [N] position (x,y,z), mass (w)
    Store<std::uint32_t> order; // [N] caller's index of sorted particle k
    Store<std::int32_t> next;   // [M] index after the node's subtree
    Store<std::uint8_t> is_leaf;
    Store<ParticleRange> range; // [M] particles of the node
    Store<Vec4<T>> com_mass;    // [M] centre of mass (x,y,z), mass (w)
    Store<Quadrupole<T>> quad;  // [M] traceless quadrupole about the centre of mass
    Store<T> size;              // [M] l, the longest side of the particles' box
    Store<T> com_offset;        // [M] delta = |centre of mass - box centre|
    Store<T> r_open2;           // [M] squared opening radius for the current theta (tree/mac.hpp)
    Store<T> r_rel2;            // [M] relative criterion: l sqrt(M / alpha) (tree/mac.hpp)
    Store<Group<T>> groups;     // [G] in Morton order; their ranges tile [0, N)
    Store<T> mac_scale;         // [G] relative criterion: 1 / sqrt(the group's smallest |a|)

    // The arrays above, in the same order, and what each is.
    auto tie() { return tie_of(*this); }
    auto tie() const { return tie_of(*this); }
    static constexpr TreeArrayInfo kInfo[] = {
        {"tree particles", Extent::particles, false}, {"tree order", Extent::particles, false},
        {"tree next indices", Extent::nodes, false},  {"tree leaf flags", Extent::nodes, false},
        {"tree node ranges", Extent::nodes, false},   {"tree centres of mass", Extent::nodes, false},
        {"tree quadrupoles", Extent::nodes, false},   {"tree cell sizes", Extent::nodes, false},
        {"tree com offsets", Extent::nodes, false},   {"tree opening radii", Extent::nodes, true},
        {"tree relative radii", Extent::nodes, true}, {"tree groups", Extent::groups, false},
        {"tree group scales", Extent::groups, true}};

  private:
    template <class Self> static auto tie_of(Self& s)
    {
        return std::tie(s.particles, s.order, s.next, s.is_leaf, s.range, s.com_mass, s.quad, s.size, s.com_offset,
                        s.r_open2, s.r_rel2, s.groups, s.mac_scale);
    }
};

static_assert(std::tuple_size_v<decltype(TreeArrays<float, Pointer>{}.tie())> ==
                  sizeof(TreeArrays<float, Pointer>::kInfo) / sizeof(TreeArrayInfo),
              "every tree array has its TreeArrayInfo");

// Calls f(array, info) for every array of a TreeArrays.
template <class Arrays, class F> void for_each_array(Arrays& a, F&& f)
{
    std::apply(
        [&](auto&... arrays) {
            std::size_t k = 0;
            (f(arrays, std::remove_reference_t<Arrays>::kInfo[k++]), ...);
        },
        a.tie());
}

namespace detail {
template <class A, class B, class F, std::size_t... I>
void for_each_array_pair(A& a, B& b, F& f, std::index_sequence<I...>)
{
    auto ta = a.tie();
    auto tb = b.tie();
    (f(std::get<I>(ta), std::get<I>(tb), std::remove_reference_t<A>::kInfo[I]), ...);
}
} // namespace detail

// Calls f(a_array, b_array, info) for the matching arrays of two TreeArrays (e.g. pinned and
// device storage of one tree).
template <class A, class B, class F> void for_each_array_pair(A& a, B& b, F&& f)
{
    constexpr std::size_t count = std::tuple_size_v<decltype(a.tie())>;
    detail::for_each_array_pair(a, b, f, std::make_index_sequence<count>{});
}

// Raw pointers to the arrays of any storage with data().
template <class T, template <class> class Store> TreeArrays<T, Pointer> pointers_of(TreeArrays<T, Store>& a)
{
    TreeArrays<T, Pointer> p;
    for_each_array_pair(a, p, [](auto& from, auto& to, const TreeArrayInfo&) { to = from.data(); });
    return p;
}

// All that one step of the walk reads of node i, in one 32-byte sector: a GPU thread's step then
// touches one sector, not four (com_mass, r_open2, next and is_leaf live in separate arrays, and
// the threads of a warp walk different nodes). The GPU engine packs it per opening criterion.
template <class T> struct alignas(8 * sizeof(T)) WalkNode {
    Vec4<T> com_r_open2; // centre of mass (x,y,z), squared opening radius (w)
    std::int32_t next;
    std::int32_t is_leaf;
    T r_rel2; // the relative criterion's radius (0 for the geometric one)
};
static_assert(sizeof(WalkNode<float>) == 32, "WalkNode<float> fills one 32-byte sector");

template <class T>
HOST_DEVICE inline WalkNode<T> make_walk_node(const Vec4<T>& com, T r_open2, T r_rel2, std::int32_t next,
                                              std::uint8_t is_leaf)
{
    WalkNode<T> n{};
    n.com_r_open2 = {com.x, com.y, com.z, r_open2};
    n.next = next;
    n.is_leaf = is_leaf;
    n.r_rel2 = r_rel2;
    return n;
}

// Everything a walk or an evaluation reads; raw pointers and counts, no ownership.
template <class T> struct OctreeView {
    std::int32_t num_nodes = 0;
    std::int32_t num_particles = 0;
    std::int32_t num_groups = 0;
    const std::int32_t* next = nullptr;
    const std::uint8_t* is_leaf = nullptr;
    const ParticleRange* range = nullptr;
    const Vec4<T>* com_mass = nullptr;
    const Quadrupole<T>* quad = nullptr;
    const T* r_open2 = nullptr;
    const Vec4<T>* particles = nullptr;
    const Group<T>* groups = nullptr;
    // Set only for the relative criterion (tree/mac.hpp): the walk then also opens node i for
    // group g when d^2 < r_rel2[i] * mac_scale[g]. Null for the geometric one.
    const T* r_rel2 = nullptr;
    const T* mac_scale = nullptr;
    // Set when the walk should read the packed nodes (the same values as the arrays above, and
    // r_rel2 in them when r_rel2 is set); null on the host.
    const WalkNode<T>* walk_nodes = nullptr;
};

// The view of arrays of any storage with data(), given the counts.
template <class T, template <class> class Store>
OctreeView<T> make_view(const TreeArrays<T, Store>& a, std::int32_t num_particles, std::int32_t num_nodes,
                        std::int32_t num_groups)
{
    OctreeView<T> v;
    v.num_nodes = num_nodes;
    v.num_particles = num_particles;
    v.num_groups = num_groups;
    v.next = a.next.data();
    v.is_leaf = a.is_leaf.data();
    v.range = a.range.data();
    v.com_mass = a.com_mass.data();
    v.quad = a.quad.data();
    v.r_open2 = a.r_open2.data();
    v.particles = a.particles.data();
    v.groups = a.groups.data();
    return v;
}

} // namespace grove
