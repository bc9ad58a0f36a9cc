// The multipole acceptance criterion (Octgrav's, after Barnes 1994): a group accepts a cell's
// multipole when the closest point of the group's box lies outside the cell's opening sphere,
// centred on its centre of mass, of radius
//   r_open = max(l / theta, sqrt(3)/2 l (1 + 1e-6)) + delta,
// l the cell side and delta = |centre of mass - cell centre|. The floor keeps a group from ever
// accepting a cell that contains one of its own particles, which l/theta alone would allow for
// theta > 2/sqrt(3); below that it changes nothing. The walk (tree/walk.hpp) compares squared
// distances; host (double) and device (float) use these same functions so that both make the same
// decisions.
#pragma once

#include <cstddef>

#include "core/host_device.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

// Above this opening angle the floor of r_open (sqrt(3)/2 l) takes over for every cell, so every
// larger theta gives the same lists: 2/sqrt(3).
constexpr double kMaxTheta = 1.1547005383792515;

// Throws std::invalid_argument with a message for a user unless 0 < theta <= kMaxTheta. The
// engines' registry entries and the command line check with it; the engines themselves accept
// any theta > 0 (their floor keeps them safe, which the tests exercise).
void check_theta(double theta);

template <class T> HOST_DEVICE inline T opening_radius2(T l, T delta, T theta)
{
    const T by_theta = l / theta;
    const T floor = T(0.8660254037844387 * (1 + 1e-6)) * l;
    const T r = (by_theta > floor ? by_theta : floor) + delta;
    return r * r;
}

// Squared distance from point p to the axis-aligned box of `box` (0 inside the box).
template <class T> HOST_DEVICE inline T box_distance2(const Group<T>& box, T px, T py, T pz)
{
    T dx = (px > box.centre.x ? px - box.centre.x : box.centre.x - px) - box.half_extent.x;
    T dy = (py > box.centre.y ? py - box.centre.y : box.centre.y - py) - box.half_extent.y;
    T dz = (pz > box.centre.z ? pz - box.centre.z : box.centre.z - pz) - box.half_extent.z;
    dx = dx > T(0) ? dx : T(0);
    dy = dy > T(0) ? dy : T(0);
    dz = dz > T(0) ? dz : T(0);
    return dx * dx + dy * dy + dz * dz;
}

// True when the group must open the node: its box comes closer to the centre of mass than r_open.
template <class T> HOST_DEVICE inline bool must_open(const Group<T>& group, const Vec4<T>& com, T r_open2)
{
    return box_distance2(group, com.x, com.y, com.z) < r_open2;
}

// r_open2[i] for every node (host, OpenMP); float and double are instantiated.
template <class T>
void fill_opening_radii(std::size_t num_nodes, const T* size, const T* com_offset, T theta, T* r_open2);

// The same for a host tree's arrays; throws std::invalid_argument unless theta > 0.
template <class T> void set_opening_radii(TreeArrays<T, HostVector>& tree, T theta);

} // namespace grove
