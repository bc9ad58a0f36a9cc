// grove bench step: leapfrog steps on a tree engine, timed phase by phase (host, transfers, GPU),
// with the energy error at the end and the force errors of the first step.
#pragma once

#include "cli/bench_config.hpp"

namespace grove {

int bench_step(const BenchConfig& config);

} // namespace grove
