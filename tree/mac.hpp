// The multipole acceptance criteria. The walk (tree/walk.hpp) compares squared distances; host
// (double) and device (float) use these same functions so that both make the same decisions.
//
// Geometric (Octgrav's, after Barnes 1994): a group accepts a cell's multipole when the closest
// point of the group's box lies outside the cell's opening sphere, centred on its centre of mass,
// of radius
//   r_open = max(l / theta, sqrt(3)/2 l (1 + 1e-6)) + delta,
// l the longest side of the bounding box of the cell's particles and delta = |centre of mass -
// box centre| (Bonsai's convention; tree/node_moments.hpp says why). Every particle of the cell
// lies within sqrt(3)/2 l + delta of the centre of mass, so the floor keeps a group from ever
// accepting a cell that contains one of its own particles, which l/theta alone would allow for
// theta > 2/sqrt(3); below that it changes nothing. The sphere is closed (a box at distance
// exactly r_open opens the cell), so a cell of one particle, whose r_open is 0, is opened by the
// group that holds it.
//
// Relative (GADGET-2's, Springel 2005): a cell of mass M is opened when its leading neglected
// term would exceed a fraction alpha of the particle's acceleration, G M l^2 / d^4 > alpha |a|,
// with |a| from the previous step. For a group, d is the distance from its box to the centre of
// mass and |a| its particles' smallest, so every member's own test is met. Squared:
//   d^2 <= l sqrt(M / alpha) / sqrt(|a| / G) = r_rel2[node] * mac_scale[group]
// (closed, as the geometric sphere is).
// The geometric floor (theta = 2/sqrt(3)) stays, so a group never accepts a cell that holds one of
// its particles however large |a| is. Cells are opened where the error they would make is large
// compared to the force they act on, not by their angle alone: small cells near a dense centre are
// opened at distances where the geometric criterion accepts them, far cells in quiet regions are
// accepted earlier.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/host_device.hpp"
#include "core/opening_criterion.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

// Where the relative criterion has no accelerations yet (the first step), a geometric walk at this
// theta supplies them: |a| is needed only to a few per cent.
constexpr double kFirstPassTheta = 0.75;

template <class T> HOST_DEVICE inline T opening_radius2(T l, T delta, T theta)
{
    const T by_theta = l / theta;
    const T floor = T(0.8660254037844387 * (1 + 1e-6)) * l;
    const T r = (by_theta > floor ? by_theta : floor) + delta;
    return r * r;
}

// Softening by type (core/softening.hpp): a cell is seen with its particles' mass-weighted mean of
// h = eps^2 / 2, which errs by about (3/8) (sigma_h / R^2)^2 of its monopole at R^2 = d^2 + h, sigma_h
// the mass-weighted rms of h about that mean (the expansion's second-order term in h), and at first
// order by its "softening dipole" sum m (h - mean) (x - com), up to (3/2) sigma_h l d / R^4. Where the
// types mix with lengths far apart (halo and bulge in a galaxy's centre, cells far smaller than
// the halo's eps) those terms are of order one, so such a cell is opened within
//   d^2 < sigma_h / kSofteningSpread,
// which bounds the first by (3/8) kSofteningSpread^2; a cell of one softening (sigma_h = 0) keeps
// its radius. The value was chosen by the errors it gives (bench/results/accuracy.md).
constexpr double kSofteningSpread = 0.02;
template <class T> HOST_DEVICE inline T softening_radius2(T sigma_h)
{
    return sigma_h * T(1.0 / kSofteningSpread);
}

// The relative criterion's per-node factor: l sqrt(M / alpha) (see the top of this file).
template <class T> HOST_DEVICE inline T relative_radius2(T l, T mass, T alpha)
{
#ifdef __CUDA_ARCH__
    return l * ::sqrt(mass / alpha); // CUDA's float overload
#else
    return l * std::sqrt(mass / alpha);
#endif
}

// The relative criterion's group factor from the smallest |a| / G of its particles, folded one
// particle at a time from INFINITY: 1 / sqrt(smallest). A particle whose |a| is 0 or NaN makes the
// smallest 1e-60, whose scale (1e30) stays finite in float and opens every cell.
constexpr double kSmallestAcceleration = 1e-60;
HOST_DEVICE inline double smaller_acceleration(double smallest, double a)
{
    return a > kSmallestAcceleration ? (a < smallest ? a : smallest) : kSmallestAcceleration;
}
HOST_DEVICE inline double group_mac_scale(double smallest)
{
#ifdef __CUDA_ARCH__
    return 1 / ::sqrt(smallest);
#else
    return 1 / std::sqrt(smallest);
#endif
}

// Squared distance from point p to the axis-aligned box of `box` (0 inside the box).
template <class T> HOST_DEVICE inline T box_distance2(const Group<T>& box, T px, T py, T pz)
{
    // |p - c| - h: p - c and c - p are exact negatives, so this equals max(p - c, c - p) - h with
    // one subtraction (the absolute value is free as an operand on the GPU).
    const T ox = px - box.centre.x, oy = py - box.centre.y, oz = pz - box.centre.z;
    T dx = magnitude(ox) - box.half_extent.x;
    T dy = magnitude(oy) - box.half_extent.y;
    T dz = magnitude(oz) - box.half_extent.z;
    dx = dx > T(0) ? dx : T(0);
    dy = dy > T(0) ? dy : T(0);
    dz = dz > T(0) ? dz : T(0);
    return dx * dx + dy * dy + dz * dz;
}

// True when the group must open the node: its box comes as close to the centre of mass as r_open.
template <class T> HOST_DEVICE inline bool must_open(const Group<T>& group, const Vec4<T>& com, T r_open2)
{
    return box_distance2(group, com.x, com.y, com.z) <= r_open2;
}

// The relative criterion's test for node i and a group of scale `mac_scale`: within the floor or
// the error bound, whichever is the larger. One comparison against their larger rather than two
// joined by an or: so written, the GPU's relative walk takes its entries by selects without
// walking longer (bench/results/tree-kernels.md).
template <class T>
HOST_DEVICE inline bool must_open_relative(const Group<T>& group, const Vec4<T>& com, T r_open2, T r_rel2, T mac_scale)
{
    const T d2 = box_distance2(group, com.x, com.y, com.z);
    const T r_rel = r_rel2 * mac_scale;
    return d2 <= (r_rel > r_open2 ? r_rel : r_open2);
}

// r_open2[i] for every node (host, OpenMP); float and double are instantiated.
template <class T>
void fill_opening_radii(std::size_t num_nodes, const T* size, const T* com_offset, T theta, T* r_open2);

// The same for a host tree's arrays; throws std::invalid_argument unless theta > 0.
template <class T> void set_opening_radii(TreeArrays<T, HostVector>& tree, T theta);

// r_rel2[i] = relative_radius2(size[i], com_mass[i].w, alpha) for every node (host, OpenMP).
template <class T>
void fill_relative_radii(std::size_t num_nodes, const T* size, const Vec4<T>* com_mass, T alpha, T* r_rel2);

// mac_scale[g] = 1 / sqrt(smallest |a| / G over group g's particles); abs_acc holds |a| / G in the
// caller's order and order[k] is sorted particle k's caller index. A group whose smallest |a| is 0
// (or not finite) gets the largest scale, so it opens every cell.
template <class T>
void fill_group_mac_scales(const std::vector<Group<double>>& groups, const std::uint32_t* order,
                           const std::vector<double>& abs_acc, T* mac_scale);

// Sets a host tree's per-criterion arrays: r_open2 for either (the floor alone for the relative
// one), and for the relative one r_rel2 and mac_scale (from abs_acc as above, groups and order of
// `structure`, the double tree the arrays were made from). Returns the view the walk must use.
template <class T>
OctreeView<T> set_opening_criterion(TreeArrays<T, HostVector>& tree, const OctreeView<T>& plain_view,
                                    const OpeningCriterion& criterion, const std::vector<Group<double>>& groups,
                                    const std::vector<double>& abs_acc);

} // namespace grove
