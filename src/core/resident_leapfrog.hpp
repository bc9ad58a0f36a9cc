// Whole kick-drift-kick leapfrog steps done where an engine keeps the particles (tree-gpu: on its
// device), so that no step copies positions, velocities or forces between host and device. The
// leapfrog integrator (integrators/leapfrog.hpp) uses it when its engine offers one; the host's
// particle set is then brought up to date only when the caller asks (store()).
#pragma once

#include "core/force_engine.hpp"
#include "core/particles.hpp"

namespace grove {

class ResidentLeapfrog {
  public:
    virtual ~ResidentLeapfrog() = default;
    // Takes the particles, with the forces of their positions in acc and pot, for steps of dt.
    // From then on the engine holds the state; `particles` is left as it is.
    virtual void load(const ParticleSet& particles, double dt) = 0;
    // One step: v += a dt/2; x += v dt; a = F(x); v += a dt/2. Returns false when a position or
    // velocity became non-finite (the state is then that of the failed step).
    virtual bool step() = 0;
    // Writes positions, velocities, accelerations and potentials into `particles` in the order
    // load() received them (IDs, types, masses and time are the caller's).
    virtual void store(ParticleSet& particles) = 0;
    // Drops the state: the next load() starts afresh.
    virtual void unload() = 0;
    virtual bool loaded() const = 0;
    virtual PhaseTimes last_phase_times() const = 0;
};

} // namespace grove
