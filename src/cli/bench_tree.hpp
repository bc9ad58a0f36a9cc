// grove bench tree: the GPU tree engine's phases, list lengths, rates, busy lanes and accuracy.
#pragma once

#include "cli/bench_config.hpp"

namespace grove {

int bench_tree(const BenchConfig& config);

} // namespace grove
