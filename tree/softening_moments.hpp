// A tree's softening by type (core/softening.hpp): each sorted particle's h = eps^2 / 2 and each
// node's mass-weighted mean of its particles' h, with which a pair (target i, source s) is softened
// with eps^2 = h_i + h_s. A node's particles are one contiguous range of the sorted order, so the
// node means come from one prefix sum of m h over the particles, whatever the tree's shape.
#pragma once

#include <vector>

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

// From h in the order the tree was built from (tree.order indexes it); empty h gives empty moments.
// A massless node gets the plain mean of its particles' h and radius 0 (its terms are zero).
template <class T>
void make_softening_moments(const Octree& tree, const std::vector<double>& half_eps2, SofteningMoments<T>& out);

} // namespace grove
