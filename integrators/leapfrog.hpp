// Kick-drift-kick leapfrog with a shared time step over any force engine: second order,
// symplectic and time-reversible, the integrator of collisionless galaxy runs. One force
// evaluation per step; the forces at the end of a step are the next step's first kick.
// Written once over a particle store (core/particle_store.hpp): the same steps run on the host's
// arrays and, where the engine offers its device (tree-gpu's resident steps), on the device.
#pragma once

#include "core/force_engine.hpp"
#include "core/particle_store.hpp"

namespace grove {

class Leapfrog {
  public:
    // resident: keep the particles on the engine's device between outputs where it offers one
    // (core/tree_engine.hpp) and the store lets the engine order them.
    Leapfrog(ForceEngine& engine, double dt, bool resident = true);

    // Computes the forces of the initial state (into the store's acc / pot), in its order.
    void start(ParticleStore& store);
    // Continues from a checkpoint whose particles carry the forces of their positions.
    void resume(ParticleStore& store);
    // One step: v += a dt/2; x += v dt; a = F(x); v += a dt/2; time += dt. Needs start() first.
    void step(ParticleStore& store);

    // The engine's phases of the last step.
    PhaseTimes last_phase_times() const { return engine_.last_phase_times(); }
    // Whether the engine offers its device for the particles between outputs.
    bool is_resident() const { return device_ != nullptr; }

    double dt() const { return dt_; }
    double force_seconds() const { return force_seconds_; } // wall time of the engine's work
    // Wall time of the host's kick and drift loops (none where the store lives on a device).
    double integration_seconds() const { return integration_seconds_; }
    long long steps() const { return steps_; }

  private:
    // Puts the store where the steps run (the engine's device where it offers one).
    void place(ParticleStore& store) const;

    ForceEngine& engine_;
    DeviceParticles* device_ = nullptr; // the engine's, or null
    double dt_;
    bool started_ = false;
    double force_seconds_ = 0, integration_seconds_ = 0;
    long long steps_ = 0;
};

} // namespace grove
