// A tree's softening by type (core/softening.hpp): each sorted particle's h = eps^2 / 2 and each
// node's mass-weighted mean of its particles' h, with which a pair (target i, source s) is softened
// with eps^2 = h_i + h_s. A node's particles are one contiguous range of the sorted order, so the
// node means come from one prefix sum of m h over the particles, whatever the tree's shape.
#pragma once

#include <cmath>
#include <vector>

#include "core/host_device.hpp"
#include "tree/mac.hpp"
#include "tree/octree.hpp"

namespace grove {

template <class T> struct SofteningMoments {
    std::vector<T> particle; // [N] h of sorted particle k
    std::vector<T> node;     // [M] sum m h / sum m over the node's particles
    // [M] the squared distance within which a target opens the node for its spread of h
    // (tree/mac.hpp: softening_radius2), 0 for a node of one softening
    std::vector<T> radius2;
    bool empty() const { return particle.empty(); }
};

// A node's mean h and the radius its spread of h opens it within (tree/mac.hpp), from the sums of
// m h and m h^2 over its particles and its mass: the host and the resident step's device make them
// with this. A massless node gets 0 and 0: its terms are zero whatever its h.
struct NodeSoftening {
    double half, radius2;
};
HOST_DEVICE inline NodeSoftening node_softening(double mass, double sum_mh, double sum_mhh)
{
    if (!(mass > 0)) return {0, 0};
    const double mean = sum_mh / mass;
    // The spread from sum m h^2 - M mean^2; rounding may leave a node of one softening a little
    // above or below 0, which a relative floor removes.
    const double variance = sum_mhh / mass - mean * mean;
    return {mean, softening_radius2(variance > 1e-12 * mean * mean ? sqrt(variance) : 0.0)};
}

// From h in the order the tree was built from (tree.order indexes it); empty h gives empty moments.
// Nodes appended from other domains' LETs (Octree::appended_half) keep the moments they came with.
template <class T>
void make_softening_moments(const Octree& tree, const std::vector<double>& half_eps2, SofteningMoments<T>& out);

} // namespace grove
