// Hierarchical time steps on a device store (docs/block-timesteps.md): the particles' bins live
// beside their positions, so a tick moves nothing across the bus but the particles per bin. The
// integrator (integrators/block_leapfrog.hpp) keeps the timeline and calls, per tick, drift(),
// the engine's compute() on the store (forces of the due particles' groups only), then close().
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/particles.hpp"
#include "core/time_bins.hpp"

namespace grove {

// What chooses a particle's bin: GADGET's dt = sqrt(2 eta eps / |a|) against dt_max, eps by type,
// capped where eta_dyn > 0 by the dynamical time (core/time_bins.hpp), whose profile the device
// makes at open_all() from the particles where they are.
struct BinRule {
    double eta = 0, dt_max = 0, eta_dyn = 0;
    std::array<double, kNumParticleTypes> eps_of_type{};
};

// The bins after an operation: particles per bin (kMaxBin + 1 counts) and whether every position
// and velocity stayed finite.
struct BinCounts {
    std::vector<long long> count;
    bool finite = true;

    // The shortest step's bin that holds a particle (0 where none does).
    int shortest() const
    {
        int k = static_cast<int>(count.size()) - 1;
        while (k > 0 && count[static_cast<std::size_t>(k)] == 0) --k;
        return k > 0 ? k : 0;
    }
    // The particles due at tick t of the dt_max.
    long long due_at(Tick t) const
    {
        long long due = 0;
        for (std::size_t k = 0; k < count.size(); ++k)
            if (bin_due(static_cast<int>(k), t)) due += count[k];
        return due;
    }
};

class DeviceTimeBins {
  public:
    virtual ~DeviceTimeBins() = default;
    // At a multiple of dt_max, with the forces of every particle current: each particle's bin
    // from the rule, and its opening half-kick.
    virtual BinCounts open_all(const BinRule& rule) = 0;
    // Every particle drifts by dt to `tick` of the dt_max; `due` particles are due there, and
    // the next compute() on the store evaluates only the groups that hold one.
    virtual void drift(double dt, Tick tick, long long due) = 0;
    // The closing half-kicks of the due particles with the forces just computed; with `reopen`
    // (the tick is not the dt_max's last) their new bins and opening half-kicks.
    virtual BinCounts close(bool reopen) = 0;

    // Within a dt_max, after a close(): each particle's bin in the order load() received the
    // particles, and the profile open_all() made (what a checkpoint there keeps).
    virtual std::vector<std::uint8_t> bins_in_load_order() = 0;
    virtual EnclosedMassProfile profile() const = 0;
    // Goes on within a dt_max from particles just loaded (a pause's, or a checkpoint's), with
    // their bins in load order and the dt_max's profile: the next call is drift().
    virtual BinCounts continue_within(const BinRule& rule, const std::vector<std::uint8_t>& bins,
                                      const EnclosedMassProfile& profile) = 0;
};

} // namespace grove
