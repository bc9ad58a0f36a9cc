// Kick-drift-kick leapfrog with a shared time step over any force engine: second order,
// symplectic and time-reversible, the integrator of collisionless galaxy runs. One force
// evaluation per step; the forces at the end of a step are the next step's first kick.
#pragma once

#include <cstdint>
#include <vector>

#include "core/force_engine.hpp"
#include "core/particle_order.hpp"
#include "core/particles.hpp"
#include "core/resident_leapfrog.hpp"

namespace grove {

class Leapfrog {
  public:
    // keep_engine_order: see restore_order(). resident: take the engine's resident stepper where it
    // offers one (core/resident_leapfrog.hpp; only with keep_engine_order).
    Leapfrog(ForceEngine& engine, double dt, bool keep_engine_order = true, bool resident = true);

    // Computes the forces of the initial state (into particles.acc / pot), in its order.
    void start(ParticleSet& particles);
    // Continues from a checkpoint whose particles carry the forces of their positions.
    void resume(const ParticleSet& particles);
    // One step: v += a dt/2; x += v dt; a = F(x); v += a dt/2; time += dt. Needs start() first.
    void step(ParticleSet& particles);

    // Between outputs the particles stay in the engine's order (a tree's Morton order, taken
    // after each evaluation: core/particle_order.hpp; IDs and types stay behind). This puts them
    // back into the order start() or resume() received them in; callers call it before they write
    // the particles out or read IDs or types. No force evaluation and no communication.
    void restore_order(ParticleSet& particles);
    // With a resident stepper, the particles' positions, velocities and forces stay where the
    // engine keeps them between outputs: this (and restore_order, after which the next step
    // reloads them, as a restart from a checkpoint written now would) brings them back, in the
    // order start() or resume() received them in. Without one, a no-op.
    void synchronize(ParticleSet& particles);

    // The engine's phases of the last step (the resident stepper's where there is one).
    PhaseTimes last_phase_times() const;
    bool is_resident() const { return resident_ != nullptr; }

    double dt() const { return dt_; }
    double force_seconds() const { return force_seconds_; }     // wall time inside the engine
    double reorder_seconds() const { return reorder_seconds_; } // moving particles into the engine's order
    long long steps() const { return steps_; }

  private:
    // The forces of the particles' positions into particles.acc / pot; with kick > 0 also the
    // closing half-kick v += kick a, folded into the move into the engine's order where there is
    // one (may_reorder). Returns false when a position or velocity is not finite (checked only
    // with a kick).
    bool compute_forces(ParticleSet& particles, double kick, bool may_reorder);

    ForceEngine& engine_;
    ResidentLeapfrog* resident_ = nullptr; // the engine's, or null
    bool synchronized_ = false;            // the host's particles hold the resident state
    double dt_;
    bool started_ = false;
    bool keep_engine_order_;
    double force_seconds_ = 0, reorder_seconds_ = 0;
    long long steps_ = 0;
    Forces forces_;
    ParticleOrder order_;
    std::vector<std::uint32_t> engine_order_;
};

} // namespace grove
