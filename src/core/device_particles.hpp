// The particles' state kept on an engine's device between steps (core/particle_store.hpp): an
// engine that offers one (tree-gpu) implements it; the store hands it the state and applies the
// step operations there, so that no step copies positions, velocities or forces across the bus.
#pragma once

#include <vector>

#include "core/array_views.hpp"
#include "core/diagnostics.hpp"
#include "core/particles.hpp"

namespace grove {

class DeviceTimeBins; // core/device_time_bins.hpp

class DeviceParticles {
  public:
    virtual ~DeviceParticles() = default;
    // Takes positions, velocities, masses and the forces of the positions (acc, pot), in the order
    // they have in `particles`, and their types in that order (`particles` keeps its types in the
    // caller's order); the device then holds the state.
    virtual void load(const ParticleSet& particles, TypesRef types) = 0;
    // v += h a; x += dt v (core/step_update.hpp). The device may also move the particles into the
    // order of the engine's next structure and predict the next drift's positions.
    virtual void kick_drift(double h, double dt) = 0;
    // v += h a with the forces of the last computation. Returns false when a position or velocity
    // of this step became non-finite.
    virtual bool kick(double h) = 0;
    // Writes positions, velocities, accelerations and potentials into `particles` in the order
    // load() received them (IDs, types, masses and time are the caller's); the state stays.
    virtual void store(ParticleSet& particles) = 0;
    // Drops the state: the next load() starts afresh.
    virtual void unload() = 0;
    virtual bool loaded() const = 0;
    // The diagnostics of the state (potentials made where the steps left them out), summed on the
    // device without bringing the state to the host: a diagnostics line of a large run costs a
    // few reductions and a sort there instead of a copy of every array and a sort here. False
    // where the device does not make them (the caller then uses store() and compute_diagnostics).
    virtual bool diagnostics(const std::vector<double>& /*fractions*/, Diagnostics& /*out*/) { return false; }
    // Hierarchical time steps on the device, where it runs them (else null).
    virtual DeviceTimeBins* time_bins() { return nullptr; }
};

} // namespace grove
