// grove bench step: leapfrog steps on a tree engine, timed phase by phase (host, transfers, GPU),
// with the energy error at the end and the force errors of the first step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/bench_config.hpp"
#include "core/particles.hpp"
#include "integrators/integrator.hpp"

namespace grove {

int bench_step(const BenchConfig& config);

// The same under mpirun on Peano-Hilbert domains (--decomposition domains; bench_domains.cpp): each
// rank holds its domain, the domains follow the particles after every step as a run's do.
int bench_domain_step(const BenchConfig& config);

// "theta 0.5" or "alpha 0.001": the opening criterion of bench step's options.
std::string opening_text(const BenchConfig& c);

// bench step's step and softening (the model's defaults where not given), its options checked:
// throws std::runtime_error for -n, --dt, --steps, --warmup or --eps out of range.
struct StepSettings {
    double dt, eps;
};
StepSettings step_settings(const BenchConfig& c);

// The leapfrog's configuration for bench step's options, with dt, the softening and the look-ahead.
IntegratorConfig step_config(const BenchConfig& c, const ParticleSet& p, double dt, double eps, bool lookahead);

// The benchmarks' models: plummer (Henon units), galaxy (GADGET units) or uniform, from one seed.
ParticleSet make_bench_model(const std::string& model, std::size_t n, std::uint64_t seed = 1);

} // namespace grove
