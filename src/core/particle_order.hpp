// Particles kept in a force engine's order between outputs. A tree engine sorts the particles
// along the Morton curve on every build; a caller that moves its own arrays into that order
// (core/particle_store.hpp) hands the next build nearly sorted keys and a sequential
// gather instead of a random one. What the caller's order was is kept here, so that files
// (snapshots, checkpoints) and Python's arrays see the particles as they were given.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "core/particles.hpp"

namespace grove {

// A velocity update folded into ParticleOrder::adopt's move (the leapfrog's closing half-kick):
// v += dt * acc with acc already in the new order. One pass over the velocities instead of two.
struct VelocityKick {
    const Eigen::Matrix3Xd* acc = nullptr; // none: no kick
    double dt = 0;
};

class ParticleOrder {
  public:
    // What adopt() does with p's accelerations and potentials: move them too, or leave them
    // (the caller replaces them with forces computed in the new order).
    enum class Forces { moved, replaced };
    // Moves particle order[k] to slot k in the arrays that the steps read: positions,
    // velocities, masses, and the forces unless `forces` is replaced. IDs, types and extra
    // columns stay where they are until restore(), which leaves every array consistent again:
    // nothing reads them between outputs, and each moved byte costs (at 10^6 particles the moves
    // are memory-bound). With a kick, returns whether every moved position and velocity is finite
    // (true otherwise). Throws std::invalid_argument unless order and the kick's accelerations
    // have the particles' length; the caller (the engine) guarantees order is a permutation.
    bool adopt(ParticleSet& p, const std::vector<std::uint32_t>& order, Forces forces = Forces::moved,
               VelocityKick kick = {});
    // adopt() in two parts, for an engine that tells the order before its forces are ready
    // (ParticleStore::move_early): move_early() moves the positions,
    // velocities and masses; the next adopt(), with the same order and Forces::replaced, applies
    // the kick in the new order and installs the new caller index.
    // undo_early() puts them back when the forces never come (the engine failed).
    void move_early(ParticleSet& p, const std::vector<std::uint32_t>& order);
    void undo_early(ParticleSet& p);
    // Puts p's moved arrays back into their order before the first adopt() since the last
    // restore; returns false when nothing was moved.
    bool restore(ParticleSet& p);
    // The moved order becomes the caller's: IDs, types and extra columns are gathered into it, and
    // nothing is left for restore() to put back. For a caller that needs its arrays consistent but
    // not in any particular order (a run on domains, whose particles change ranks every step and
    // whose files are sorted by ID when written). Returns false when nothing was moved.
    bool settle(ParticleSet& p);
    // Forgets every move (the caller replaced the particles); the scratch keeps its memory.
    void forget()
    {
        caller_index_.clear();
        early_ = false;
        early_finite_ = true;
    }
    bool moved() const { return !caller_index_.empty(); }
    // caller_index()[k]: where the particle now in slot k was in the caller's order.
    const std::vector<std::uint32_t>& caller_index() const { return caller_index_; }

  private:
    // out[k] = in[index[k]] (gather) or out[index[k]] = in[k] (scatter), for every array of p.
    void permute(ParticleSet& p, const std::vector<std::uint32_t>& index, bool scatter, bool forces);

    // index_scratch_ = the caller index after a move by `order` (the caller index composed with it).
    void compose_caller_index(const std::vector<std::uint32_t>& order);

    std::vector<std::uint32_t> caller_index_, index_scratch_;
    bool early_ = false;       // move_early() ran; adopt() has not yet
    bool early_finite_ = true; // every position it moved was finite
    // Scratch of each element type, swapped with the arrays it permutes: after the first step
    // nothing is allocated (fresh pages at 10^6 particles cost as much as the permutation).
    Eigen::Matrix3Xd columns_, velocities_;
    Eigen::VectorXd scalars_;
    std::vector<std::uint64_t> ids_; // settle()'s
    std::vector<std::uint8_t> types_;
};

} // namespace grove
