// The run loop of `grove run`: evolves a snapshot with an integrator (integrators/integrator.hpp),
// writing snapshots, a diagnostics table, the parameters used, checkpoints and a timing
// breakdown. cmd_run.cpp turns the command line into a RunConfig; this file does the run.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/run_target.hpp"
#include "core/checkpoint.hpp"
#include "integrators/integrator.hpp"

namespace grove {

struct RunConfig {
    std::string input;  // initial snapshot
    std::string output; // directory
    IntegratorConfig integrator;
    bool G_given = false;             // -G given; else G comes from the snapshot's units
    std::optional<Units> input_units; // --units, for an input that holds none
    double t_end = 0;
    std::optional<double> snapshot_every;        // default (t_end - t_start) / 10
    int log_every = 10;                          // intervals between diagnostics lines
    double checkpoint_every = 1800;              // wall seconds
    long long checkpoint_steps = 0;              // 0: off
    std::vector<std::string> argv;               // the command line after "grove run" (for restarts)
    bool cadence_changed = false;                // a restart gave a new --snapshot-every
    std::map<std::string, std::string> recorded; // every option, into the files' run parameters
    std::optional<RunTarget> target;             // choose theta (alpha) for this error at the start
    bool domains = false;     // --decomposition domains: each rank one Peano-Hilbert domain (parallel/domain_tree.hpp)
    bool cut_by_work = false; // --domain-cut work
};

// Runs (or, with `restart`, continues) the run; returns the process exit status (0, or 128 +
// signal after an interruption that wrote a checkpoint). Throws std::runtime_error for bad
// parameters before any output is written.
int run_simulation(const RunConfig& config, std::optional<Checkpoint> restart);

} // namespace grove
