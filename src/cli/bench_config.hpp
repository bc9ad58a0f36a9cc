// The options of `grove bench`, parsed once (cmd_bench.cpp) for every benchmark.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/engine_registry.hpp"
#include "integrators/block_leapfrog.hpp"

namespace grove {

struct BenchConfig {
    std::string what;                    // direct | hermite | tree | tree-build | step | scaling
    std::string build_sizes = "1e5,1e6"; // tree-build: particle counts
    int nleaf = kDefaultNleaf, ncrit = kDefaultNcrit;
    std::string sizes = "14:20"; // direct, hermite: log2 N range for all-on-all runs
    std::string active = "6:14"; // log2 range of active targets
    int sources = 20;            // log2 of the sources for the active runs
    std::string precision = "float,mixed,double";
    std::optional<double> eps;       // direct, hermite: 0.01 when absent; step: by model
    std::string eps_type;            // step: softening by type (core/softening.hpp), empty for one
    std::string timestep = "shared"; // step: shared, or block (each particle by dt / 2^k; dt is then dt_max)
    double eta = kDefaultBlockEta;   // step, block: GADGET's accuracy parameter
    double eta_dyn = kDefaultEtaDyn; // step, block: the dynamical time's cap (0: none)
    int repeat = 3;
    std::string models = "uniform,galaxy";    // tree
    std::string tree_sizes = "20,23";         // tree: log2 N
    std::string thetas = "0.5,0.75";          // tree
    double tree_eps = 0;                      // tree
    int sample = 16384;                       // tree, step: particles compared against direct summation
    std::string model = "plummer";            // step: plummer | galaxy | uniform
    long long n = 1 << 20;                    // step
    double theta = 0.5;                       // step
    std::string mac = "geometric";            // step: opening criterion (geometric | relative)
    double alpha = 1e-3;                      // step: the relative criterion's bound
    double theta_max = kMaxTheta;             // step: the relative criterion's geometric bound
    std::optional<double> dt;                 // step: 1/64, or 2.5e-4 for galaxy (GADGET time units)
    int steps = 64;                           // step: timed steps (after the warm-up)
    int warmup = 3;                           // step: steps before the timing starts
    int rebuild_every = 1;                    // step: full tree builds every K steps, refits between
    std::string engine = "tree";              // step
    std::vector<int> gpus;                    // scaling: the GPUs of one process (empty: every visible one)
    std::string decomposition = "replicated"; // scaling, tree engines: replicated | domains
    bool weak = false;                        // scaling, domains: -n particles per rank (else in all)
    bool cut_by_work = false;                 // step, domains: --domain-cut work
    bool keep_engine_order = true;            // step: particles in the tree's order between steps
    bool resident = true;                     // step: whole steps on the GPU (tree-gpu, look-ahead)
    bool lookahead = true;                    // step: the next tree built while the GPU evaluates
    std::uint64_t gpu_memory = 0;             // step: --gpu-memory (0: what the device has free)
    std::uint64_t list_memory = 0;            // step: --list-memory (0: from the memory there is)
};

} // namespace grove
