// Particles kept in a force engine's order between outputs. A tree engine sorts the particles
// along the Morton curve on every build; a caller that moves its own arrays into that order
// (ForceEngine::take_particle_order) hands the next build nearly sorted keys and a sequential
// gather instead of a random one. What the caller's order was is kept here, so that outputs
// (snapshots, diagnostics, checkpoints, Python's arrays) see the particles as they were given.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "core/particles.hpp"

namespace grove {

class ParticleOrder {
  public:
    // Moves particle order[k] to slot k in every per-particle array of p (positions, velocities,
    // masses, IDs, types, forces, extra columns). Throws std::invalid_argument unless order is a
    // permutation's length; the caller (the engine) guarantees it is a permutation.
    void adopt(ParticleSet& p, const std::vector<std::uint32_t>& order);
    // Puts p back into its order before the first adopt() since the last restore; returns false
    // when nothing was moved.
    bool restore(ParticleSet& p);
    bool moved() const { return !caller_index_.empty(); }
    // caller_index()[k]: where the particle now in slot k was in the caller's order.
    const std::vector<std::uint32_t>& caller_index() const { return caller_index_; }

  private:
    // out[k] = in[index[k]] (gather) or out[index[k]] = in[k] (scatter), for every array of p.
    void permute(ParticleSet& p, const std::vector<std::uint32_t>& index, bool scatter);

    std::vector<std::uint32_t> caller_index_, index_scratch_;
    // Scratch of each element type, swapped with the arrays it permutes: after the first step
    // nothing is allocated (fresh pages at 10^6 particles cost as much as the permutation).
    Eigen::Matrix3Xd columns_;
    Eigen::VectorXd scalars_;
    std::vector<std::uint64_t> words_;
    std::vector<std::uint8_t> bytes_;
    std::vector<double> extra_values_;
};

} // namespace grove
