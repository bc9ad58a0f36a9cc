// Tree reuse between steps: the structure of the last build (nodes, particle ranges, groups) kept,
// and everything that depends on positions recomputed for the particles' new positions in O(N):
// the particles gathered into the tree's order, centres of mass, quadrupoles, node sizes grown to
// hold particles that left their cells, and group boxes. Far cheaper than a build; the cost is
// accuracy, as cells grow and their expansions lengthen (grove bench step --rebuild-every reports
// it).
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "core/array_views.hpp"

#include "tree/build.hpp"

namespace grove {

// Refits `tree` (built from the same particles, N and masses' order unchanged) to `pos` and `mass`.
// Throws std::invalid_argument for a particle count that differs from the tree's or non-finite input.
void refit_octree(Octree& tree, PositionsRef pos, MassesRef mass, BuildTimes* times = nullptr);

// What a tree engine does each evaluation: a full build on every rebuild_every-th call (and
// whenever the particle count changed), a refit on the calls between.
class TreeUpdater {
  public:
    explicit TreeUpdater(int rebuild_every = 1);
    // Returns true when it rebuilt.
    bool update(Octree& tree, PositionsRef pos, MassesRef mass, const BuildParams& params, BuildTimes* times);
    // Whether the last build's order has not been handed over yet (ForceEngine::
    // compute_in_own_order): false after a refit of a tree whose order was taken.
    bool order_fresh() const { return !order_taken_; }
    // Hands the last build's order over, once; the tree then indexes the particles in that order
    // (its order becomes the identity), so that refits gather the moved particles correctly.
    bool take_order(Octree& tree, std::vector<std::uint32_t>& order);
    // The caller's particles moved otherwise (ForceEngine::particles_reordered): build next time.
    void force_rebuild() { since_build_ = -1; }

  private:
    int rebuild_every_;
    int since_build_ = -1;    // calls since the last build; -1 before the first
    bool order_taken_ = true; // the last build's order has been handed over
};

} // namespace grove
