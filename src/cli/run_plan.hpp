// What a `grove run` does when: its span as a whole number of steps of its interval (the
// leapfrog's dt, or Hermite's largest block step, at whose multiples all particles meet), and the
// cadences of its outputs. Made and checked before anything is written.
#pragma once

#include "cli/run_simulation.hpp"

namespace grove {

struct RunPlan {
    bool by_dt_max = false; // the interval is --dt-max (Hermite, block steps), not --dt
    double t_start = 0, t_end = 0, interval = 0;
    long long total_steps = 0;
    double snapshot_every = 0;
    int log_every = 1;
    double checkpoint_every = 0;    // wall seconds
    long long checkpoint_steps = 0; // 0: off

    // Throws std::runtime_error naming the option and, for a span that is not a whole number of
    // steps, the nearest choices that are.
    static RunPlan make(const RunConfig& config, double t_start);
    double time_of(long long step) const { return t_start + static_cast<double>(step) * interval; }
    // Whether a snapshot is due at time t (next: the next snapshot's time), and the one after it.
    bool snapshot_due(double t, double next) const { return t >= next - 1e-6 * interval; }
    double after(double t, double next) const;
};

} // namespace grove
