// grove bench step: leapfrog steps on a tree engine, timed phase by phase (host, transfers, GPU),
// with the energy error at the end and the force errors of the first step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cli/bench_config.hpp"
#include "core/particles.hpp"

namespace grove {

int bench_step(const BenchConfig& config);

// The benchmarks' models: plummer (Henon units), galaxy (GADGET units) or uniform, from one seed.
ParticleSet make_bench_model(const std::string& model, std::size_t n, std::uint64_t seed = 1);

} // namespace grove
