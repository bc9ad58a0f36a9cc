// Tree reuse between steps: the structure of the last build (nodes, particle ranges, groups) kept,
// and everything that depends on positions recomputed for the particles' new positions in O(N):
// the particles gathered into the tree's order, centres of mass, quadrupoles, node sizes grown to
// hold particles that left their cells, and group boxes. Far cheaper than a build; the cost is
// accuracy, as cells grow and their expansions lengthen (grove bench step --rebuild-every reports
// it).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <Eigen/Core>

#include "core/array_views.hpp"
#include "core/force_engine.hpp"
#include "core/particle_store.hpp"

#include "tree/build.hpp"

namespace grove {

// Refits `tree` (built from the same particles, N and masses' order unchanged) to `pos` and `mass`.
// Throws std::invalid_argument for a particle count that differs from the tree's or non-finite input.
void refit_octree(Octree& tree, PositionsRef pos, MassesRef mass, BuildTimes* times = nullptr);

// What a tree engine does each evaluation: a full build on every rebuild_every-th call (and
// whenever the particle count changed), a refit on the calls between.
//
// Look-ahead (TreeParams::lookahead, with rebuild_every = 1): while an evaluation runs on the
// GPU, the host builds the next tree from the positions the integrator predicts
// (from the particle store's last drift); the next update() only refits that tree to the exact positions,
// which moved little from the prediction, so its cells barely grow. The build leaves the critical
// path; a refit's gather and moments stay on it. The build runs on the calling thread, with its
// OpenMP team, at the point the engine chooses (tree-gpu: while it waits for its kernels).
class TreeUpdater {
  public:
    explicit TreeUpdater(int rebuild_every = 1);
    // Returns true when it rebuilt (a refitted look-ahead tree counts as built: its order is fresh).
    bool update(Octree& tree, PositionsRef pos, MassesRef mass, const BuildParams& params, BuildTimes* times);

    // The integrator's prediction for the next call (from the particle store's last drift); used by the
    // next start_lookahead() only.
    void hint(const Eigen::Matrix3Xd& vel, const Eigen::Matrix3Xd& acc, double dt);
    // After update(): with a hint, prepares the build of the next tree from pos + dt (vel + dt acc),
    // which run_lookahead() does. order_handed_over: the caller will take `current`'s order
    // (take_order) and move its particles into it, so the next tree indexes particles in that
    // moved order. pos, mass and the hint's arrays must live until run_lookahead().
    void start_lookahead(const Octree& current, PositionsRef pos, MassesRef mass, const BuildParams& params,
                         bool order_handed_over);
    // Builds the prepared tree now (nothing without one); a build that fails is dropped and the
    // next update() builds.
    void run_lookahead();
    // run_lookahead() if the engine has not yet, before it hands `current`'s order over.
    void finish_lookahead() { run_lookahead(); }
    // The look-ahead build's time in the last evaluation, 0 without one.
    double lookahead_seconds() const { return lookahead_seconds_; }
    // Whether the last build's order has not been handed over yet (to a particle store): false after a refit of a tree
    // whose order was taken.
    bool order_fresh() const { return !order_taken_; }
    // Hands the last build's order over, once; the tree then indexes the particles in that order
    // (its order becomes the identity), so that refits gather the moved particles correctly.
    bool take_order(Octree& tree, std::vector<std::uint32_t>& order);
    // The caller's particles moved otherwise (the store's order epoch changed): build next time.
    void force_rebuild();
    // Gives back the look-ahead tree and the scratch of its builds (a particle store on a device
    // builds its own); the next update() builds afresh.
    void release();

    // Before a computation on a particle store: builds afresh when the store's particles moved in
    // a way no engine asked for (its order epoch changed), and takes the store's last drift as the
    // prediction the next look-ahead build starts from. The store's arrays must stay as they are
    // until the computation returns.
    void follow(ParticleStore& store);
    // After it: forces in the order of `tree`'s last build where tree_order and that order has not
    // been handed over yet (the particles follow them there), else in the store's order.
    void hand_forces(ParticleStore& store, Octree& tree, Forces& forces, bool tree_order);

  private:
    int rebuild_every_;
    int since_build_ = -1;    // calls since the last build; -1 before the first
    bool order_taken_ = true; // the last build's order has been handed over

    const Eigen::Matrix3Xd* hint_vel_ = nullptr;
    const Eigen::Matrix3Xd* hint_acc_ = nullptr;
    double hint_dt_ = 0;
    std::function<void()> pending_;  // the prepared look-ahead build
    Octree next_;                    // the look-ahead tree
    bool next_ready_ = false;        // next_ holds a tree for the coming update()
    bool next_for_handover_ = false; // next_ indexes the order the caller was expected to take
    bool handed_over_since_ = false; // take_order() handed an order over since start_lookahead()
    Eigen::Matrix3Xd predicted_;
    std::vector<std::uint32_t> inverse_; // the handed-over order's inverse (remapping next_)
    std::vector<std::uint32_t> handed_;  // the order handed to a store (its scratch after the swap)
    std::uint64_t store_epoch_ = 0;      // the store's order epoch the tree indexes
    double lookahead_seconds_ = 0;
};

} // namespace grove
