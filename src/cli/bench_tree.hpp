// grove bench tree: the GPU tree engine's phases, list lengths, rates, busy lanes and accuracy.
#pragma once

#include <cxxopts.hpp>

namespace grove {

int bench_tree(const cxxopts::ParseResult& options);

} // namespace grove
