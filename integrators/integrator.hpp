// The interface `grove run` (and later Python and MPI drivers) evolves a particle set through: it
// owns its force engine, advances to a time, synchronizes the particles' forces and potentials
// for output, and lists the state a checkpoint must keep (core/integrator_state.hpp), so the
// program needs no integrator-specific code.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/diagnostics.hpp"
#include "core/engine_registry.hpp"
#include "core/force_engine.hpp"
#include "core/integrator_state.hpp"
#include "core/particles.hpp"

namespace grove {

// What one kind of substep cost, summed since the start (block steps: the ticks whose longest due
// bin is the same): how many there were, the particles whose forces they computed, wall seconds.
struct SubstepCost {
    std::string kind;
    long long count = 0, particles = 0;
    double seconds = 0;
    PhaseTimes phases; // the engine's, summed over them, where it times its own
};

class Integrator {
  public:
    virtual ~Integrator() = default;
    virtual std::string name() const = 0;        // "leapfrog", "hermite"
    virtual std::string engine_name() const = 0; // the engine behind it
    virtual double interval() const = 0;         // the run loop's step: dt, or Hermite's dt_max

    // Forces (and whatever else it needs) of the initial particles.
    virtual void start(ParticleSet& particles) = 0;
    // Advances to t, a multiple of interval() after the start; particles' time is then t, and
    // their positions, velocities and forces those at t once synchronize() or restore_order() has
    // run (a resident leapfrog keeps them on its device until then), in the order
    // restore_order() describes.
    virtual void advance_to(double t, ParticleSet& particles) = 0;
    // Where an interval has substeps (block steps: the ticks of a dt_max), advance_to() asks
    // `pause` after each but the last and stops there when it says so: within_interval() is then
    // true, the particles' time lies before t, save() keeps the state (a checkpoint within the
    // interval), and the next advance_to(t) goes on. Integrators whose intervals are not cut never
    // ask it.
    virtual void pause_when(std::function<bool()> /*pause*/) {}
    virtual bool within_interval() const { return false; }
    // Brings particles.acc and particles.pot to the particles' current time (for diagnostics and
    // snapshots); a no-op where every step computes them.
    virtual void synchronize(ParticleSet& particles) = 0;
    // Puts the particles back into the order start() or resume() received them in. Between
    // outputs an integrator may keep them in its engine's order (leapfrog on a tree: Morton
    // order, so that each build sorts nearly sorted keys; positions, velocities, masses and forces
    // move, IDs and types stay behind); callers call this before they write the particles out or
    // read IDs or types. Local: no force evaluation, no communication.
    virtual void restore_order(ParticleSet& /*particles*/) {}
    // Leaves the particles in the engine's order but makes that the order they are held in: IDs
    // and types follow them, and restore_order() has nothing left to undo. For callers that need
    // consistent arrays in no particular order (a run on domains, every step). Local.
    virtual void settle_order(ParticleSet& /*particles*/) {}

    // The state beyond the particles that a bit-identical restart needs. `snapshot` is the copy
    // of the particles the checkpoint stores; an integrator may fill its forces.
    virtual IntegratorState save(ParticleSet& snapshot) const = 0;
    // Continues from a checkpoint's particles and state.
    virtual void resume(const IntegratorState& state, ParticleSet& particles) = 0;

    virtual double force_seconds() const = 0; // wall time inside the engine
    // The last advance_to's wall time by phase: the engine's phases, then "integration" (the
    // integrator's own loops). Benchmarks read it.
    virtual PhaseTimes last_phases() const = 0;
    virtual std::string summary() const = 0; // one line for the end of a run
    // Counts an integrator adds to each diagnostics line after the standard columns, by name (the
    // same names at every call): block time steps give the particles per bin.
    virtual std::vector<std::pair<std::string, long long>> log_counts() const { return {}; }
    // The substeps of its intervals by kind, where it has substeps of different cost (empty else).
    virtual std::vector<SubstepCost> substep_costs() const { return {}; }
    // The diagnostics of the particles at their current time, made where they live without
    // bringing them here (a resident leapfrog's device sums them); false where the caller must
    // synchronize() and compute them from the particles.
    virtual bool diagnostics_where_they_are(ParticleSet& /*particles*/, const std::vector<double>& /*fractions*/,
                                            Diagnostics& /*out*/)
    {
        return false;
    }
    // Where the particles live on the engine's device between outputs (resident()), takes them
    // there now, as the next step would: the steps then read nothing of the host's arrays (a
    // snapshot may borrow them meanwhile). Nothing elsewhere.
    virtual void load_on_device(ParticleSet& /*particles*/) {}
    // Whether the particles live where the engine computes between outputs (a resident leapfrog).
    virtual bool resident() const { return false; }
    // The force engine behind it, for what only some engines report (a tree engine's device
    // memory); null where it has none of its own.
    virtual const ForceEngine* force_engine() const { return nullptr; }
};

struct IntegratorConfig {
    std::string integrator = "leapfrog"; // leapfrog | hermite
    EngineConfig engine;
    // leapfrog: "shared" (every particle steps by dt) or "block" (hierarchical steps of dt_max / 2^k
    // from GADGET's criterion with eta: integrators/block_leapfrog.hpp)
    std::string timestep = "shared";
    double dt = 0;            // leapfrog step
    double eta = 0.01;        // hermite: Aarseth's accuracy parameter (also the start-up one); block: GADGET's
    double dt_max = 1.0 / 16; // hermite, block: largest step, a power of two for hermite
    double eta_dyn = 0;       // block: cap by eta_dyn times the dynamical time (0: none)
    // Whether the run loop's interval is dt_max (the Hermite integrators, block steps) or dt.
    bool steps_by_dt_max() const { return integrator != "leapfrog" || timestep == "block"; }
    // leapfrog: keep the particles in a tree engine's Morton order between outputs
    // (core/particle_order.hpp); false keeps the caller's order (grove bench step compares both).
    bool keep_engine_order = true;
};

// Builds the integrator and its engine (from `engines`). Throws std::runtime_error for an
// unknown integrator, an engine it cannot run on, or bad parameters.
// `wrap`, when given, takes the leapfrog's force engine and returns the one to use (an MPI job
// spreads it over its processes: parallel/distributed_engine.hpp).
// `wrap_hermite` likewise for the Hermite integrators' engine.
using ForceEngineWrapper = std::function<std::unique_ptr<ForceEngine>(std::unique_ptr<ForceEngine>)>;
using HermiteEngineWrapper = std::function<std::unique_ptr<HermiteEngine>(std::unique_ptr<HermiteEngine>)>;
std::unique_ptr<Integrator> make_integrator(const IntegratorConfig& config, const EngineRegistry& engines,
                                            const ForceEngineWrapper& wrap = nullptr,
                                            const HermiteEngineWrapper& wrap_hermite = nullptr);

} // namespace grove
