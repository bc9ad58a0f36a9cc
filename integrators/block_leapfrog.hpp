// The leapfrog with hierarchical time steps (docs/block-timesteps.md): each particle kicks with
// its own power-of-two step dt_max / 2^k (core/time_bins.hpp), every particle drifts to
// each tick where some bin is due, and only the due particles' forces are computed where the
// engine can compute a subset (ForceEngine::computes_subsets), or, on a store whose device runs
// time bins (core/device_time_bins.hpp: tree-gpu's resident store), where the particles are.
// With every particle in bin 0 a dt_max is the shared leapfrog's step, operation for operation.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/device_time_bins.hpp"
#include "core/force_engine.hpp"
#include "core/particle_store.hpp"
#include "core/particles.hpp"
#include "core/time_bins.hpp"

namespace grove {

// What `grove run --timestep block`, `grove bench step` and Python's Simulation take unless told:
// GADGET's eta, and the dynamical time's cap, the best of the values tried on the 2^20 galaxy
// (bench/results/step.md).
constexpr double kDefaultBlockEta = 0.025;
constexpr double kDefaultEtaDyn = 0.2;

class BlockLeapfrog {
  public:
    // eta: GADGET's accuracy parameter of dt = sqrt(2 eta eps / |a|), eps each particle's
    // softening (gravity's, by type where it has one), which must be > 0. eta_dyn > 0 caps each
    // step at eta_dyn times the dynamical time sqrt(r^3 / (G M(<r))) about the centre of mass
    // (core/time_bins.hpp); 0 leaves GADGET's criterion alone. Throws std::invalid_argument for
    // dt_max or eta not finite and > 0, or eta_dyn negative or not finite.
    BlockLeapfrog(ForceEngine& engine, GravityParams gravity, double dt_max, double eta, double eta_dyn = 0);

    // Asked after each tick of a dt_max but its last: true stops advance() there (a run that
    // must checkpoint now, within a dt_max).
    using PauseRequest = std::function<bool()>;

    // The forces of the initial particles (into acc and pot) and their bins.
    void start(ParticleSet& p);
    // Continues from particles with the forces of their positions at a multiple of dt_max (a
    // checkpoint), and the counters it kept.
    void resume(ParticleSet& p, long long ticks, long long forces);
    // Continues from within a dt_max, where advance() paused (a checkpoint written there): the
    // particles as they were then (positions at `tick`, the due particles' velocities kicked
    // half a step ahead), their bins, and the profile of the dt_max's start.
    void resume_within(ParticleSet& p, long long ticks, long long forces, Tick tick, std::vector<std::uint8_t> bins,
                       const EnclosedMassProfile& profile);
    // One dt_max: every tick where some bin is due, until all are due again. The velocities are
    // then synchronous with the positions (the next opening kicks wait for the next call), and it
    // returns true. Where `pause` stops it first it returns false at tick() > 0: the state is
    // then the particles (a device store's where restore_order() brings them), bins() and
    // profile(), and the next call goes on (on a device from the particles loaded afresh).
    bool advance(ParticleSet& p, const PauseRequest& pause = {});
    // The same on a store: on its device where that runs time bins, else on the host's arrays.
    bool advance(ParticleStore& s, const PauseRequest& pause = {});

    Tick tick() const { return tick_; } // within the current dt_max; 0 between them
    // Each particle's bin, in the order of the host's arrays (on a device: as of the last pause).
    const std::vector<std::uint8_t>& bins() const { return bins_; }
    // The enclosed-mass profile of the current dt_max's start (where eta_dyn > 0).
    const EnclosedMassProfile& profile() const { return profile_; }
    std::vector<long long> particles_per_bin() const;              // kMaxBin + 1 counts
    long long ticks_stepped() const { return substeps_; }          // ticks with some bin due, so far
    long long forces_computed() const { return forces_computed_; } // due particles' forces, summed
    double force_seconds() const { return force_seconds_; }        // wall time inside the engine
    // The ticks so far by their longest due bin k (every bin from k on is due; k = 0 ends a
    // dt_max): how many, the particles due at them, their wall time from drift to kicks, and on a
    // device the engine's phases summed over them.
    struct TickCost {
        long long ticks = 0, due = 0;
        double seconds = 0;
        PhaseTimes phases;
    };
    const std::array<TickCost, kMaxBin + 1>& tick_costs() const { return tick_costs_; }
    // The engine's phases summed over the last advance()'s ticks on a device (else empty).
    const PhaseTimes& last_device_phases() const { return device_phases_; }

  private:
    // Forces on the particles `due` (all when it is empty) into p.acc and p.pot, timed.
    void compute_forces(ParticleSet& p, const std::vector<std::int32_t>& due);
    void compute_due_forces(ParticleSet& p, const std::vector<std::int32_t>& due);
    // Bins for the particles `due` (all when `all`) from their accelerations, moving to a longer
    // step only where it is due at the current tick; then, with `open`, their opening half-kicks.
    void rebin_and_open(ParticleSet& p, const std::vector<std::int32_t>& due, bool all, bool open);
    // Every particle's potential where it is, for what a pause within a dt_max saves.
    void potentials_where_paused(ParticleSet& p);
    double half_step(int bin) const; // dt_max / 2^(bin + 1), exact
    bool advance_on_device(DeviceTimeBins& device, ParticleStore& s, const PauseRequest& pause);

    ForceEngine& engine_;
    GravityParams gravity_;
    double dt_max_, eta_, eta_dyn_;
    EnclosedMassProfile profile_;         // at the start of the dt_max under way, where eta_dyn_ > 0
    bool subsets_ = false;                // the engine computes forces on a subset of targets
    std::vector<std::uint8_t> bins_;      // on the host's arrays
    std::vector<long long> device_count_; // particles per bin on a device, after its last dt_max
    PhaseTimes device_phases_;
    Tick tick_ = 0; // within the current dt_max; 0 at its start
    bool started_ = false;
    bool drop_device_ = false; // paused on a device store: its state goes before the next tick
    long long substeps_ = 0, forces_computed_ = 0;
    std::array<TickCost, kMaxBin + 1> tick_costs_{};
    void count_tick(long long due, double seconds, const PhaseTimes& phases = {});
    double force_seconds_ = 0;
    Forces scratch_;
};

} // namespace grove
