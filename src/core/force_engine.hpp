// The one interface every force engine implements: positions and masses in, accelerations and
// potentials out, in the caller's particle order. Integrators and commands see only this.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "core/array_views.hpp"

namespace grove {

struct GravityParams {
    double G = 1.0;   // gravitational constant in the snapshot's units
    double eps = 0.0; // Plummer softening length (0 allowed)
};

struct Forces {
    Eigen::Matrix3Xd acc; // 3 x N accelerations
    Eigen::VectorXd pot;  // N potentials (G included; a particle's own term excluded)
};

// Named wall-clock phases of the last evaluation, in seconds, in the order they ran.
using PhaseTimes = std::vector<std::pair<std::string, double>>;

class ResidentLeapfrog; // core/resident_leapfrog.hpp

class ForceEngine {
  public:
    virtual ~ForceEngine() = default;
    virtual std::string name() const = 0;
    // Every particle feels every other; `out` is resized to N.
    virtual void compute(PositionsRef pos, MassesRef mass, Forces& out) = 0;
    // Forces on the particles `targets` (indices into pos) from all particles; out has
    // targets.size() columns. Direct engines implement it (the accuracy reference for a sample);
    // the default throws std::runtime_error naming the engine.
    virtual void compute_subset(PositionsRef pos, MassesRef mass, const std::vector<std::int32_t>& targets,
                                Forces& out);
    virtual PhaseTimes last_phase_times() const { return {}; }
    // The accelerations of the previous step (3 x N, caller's order), which a criterion that
    // bounds the error relative to |a| reads (the tree engines' relative criterion); the next
    // compute() uses them. Engines that need none ignore them. Integrators pass theirs before
    // each step, so that a restarted run makes the same decisions as an uninterrupted one.
    virtual void set_acceleration_estimate(const Eigen::Matrix3Xd& /*acc*/) {}
    // Share `index` of `count` equal parts of the work (parallel/distributed_engine.hpp): engines
    // that can (the tree engines, by groups) then compute only the forces of their share, zero
    // elsewhere, and return true. Others return false (count 1 always works).
    virtual bool set_share(int /*index*/, int count) { return count == 1; }
    // Engines that take shares: the cost of every particle (caller's order) in the last compute(),
    // zero outside this share, and the costs summed over all shares, from which the next compute()
    // cuts shares of equal cost (tree/group_shares.hpp). Others return none and ignore them.
    virtual std::vector<double> last_particle_costs() const { return {}; }
    virtual void set_share_costs(const std::vector<double>& /*costs*/) {}
    // compute() for a caller that will keep its particles in the engine's order. An engine that
    // visits the particles in an order of its own (the tree engines: the Morton order of a build
    // made in this call) returns the forces in that order and true: out's column k belongs to
    // particle order[k] of pos. A caller that moves its particles into that order
    // (core/particle_order.hpp) gives the next build nearly sorted keys and a sequential gather,
    // and neither side scatters the forces; the engine takes the moved order as the caller's from
    // then on. Otherwise it returns false with the forces in the caller's order (engines without
    // an order of their own; a refit, which keeps the order handed over before).
    //
    // early: an engine that waits for a device may call early(order) once, before the forces are
    // ready, with the order it is about to return (true) with; the caller can then move pos and
    // mass into that order while the device works, and the engine no longer reads them. Engines
    // without such a wait never call it, and the caller moves everything afterwards.
    using EarlyMove = std::function<void(const std::vector<std::uint32_t>&)>;
    virtual bool compute_in_own_order(PositionsRef pos, MassesRef mass, Forces& out,
                                      std::vector<std::uint32_t>& /*order*/, const EarlyMove& /*early*/ = {})
    {
        compute(pos, mass, out);
        return false;
    }
    // The caller moved its particles some other way (back into its own order, for output): an
    // engine that keeps structure between calls (a tree refitted between builds) rebuilds it.
    virtual void particles_reordered() {}
    // Said just before compute() by an integrator that knows where the particles go next: the
    // next call's positions will be close to pos + dt (vel + dt acc), in the order this call's
    // forces come back in. A tree engine with look-ahead builds its next tree from that
    // prediction while this call evaluates, and the next call only refits it. vel and acc must
    // stay unchanged until compute() returns.
    virtual void hint_next_drift(const Eigen::Matrix3Xd& /*vel*/, const Eigen::Matrix3Xd& /*acc*/, double /*dt*/) {}
    // An engine that can run whole leapfrog steps with the particles kept where it computes
    // (core/resident_leapfrog.hpp) returns its stepper, owned by the engine; null otherwise or
    // where its settings rule it out.
    virtual ResidentLeapfrog* resident_leapfrog() { return nullptr; }
};

inline void ForceEngine::compute_subset(PositionsRef, MassesRef, const std::vector<std::int32_t>&, Forces&)
{
    throw std::runtime_error("engine " + name() + " computes forces only for all particles");
}

} // namespace grove
