// grove bench scaling (under mpirun): force computation time, speed-up and efficiency on 1, 2, 4,
// ... and all ranks of the job.
#pragma once

#include "cli/bench_config.hpp"

namespace grove {

int bench_scaling(const BenchConfig& config);

// The same for the tree over Peano-Hilbert domains (--decomposition domains; bench_domains.cpp): strong
// or weak scaling with the phases, the LET traffic, the load imbalance and the force errors.
int bench_domain_scaling(const BenchConfig& config);

} // namespace grove
