// The GPU benchmarks of `grove bench` (direct, hermite, tree). A build without the GPU library
// has bench_gpu_absent.cpp instead, which says so.
#pragma once

#include <string>

#include "cli/bench_config.hpp"

namespace grove {

int bench_gpu(const std::string& what, const BenchConfig& config);

} // namespace grove
