// The CPU engines' registry entries: direct-cpu (acc + pot, and the Hermite engine) and tree-cpu;
// and the tree parameters that tree-gpu's entry reads the same way.
#pragma once

#include "core/engine_registry.hpp"
#include "tree/build.hpp"

namespace grove {

// A tree engine's parameters from an engine configuration; throws std::invalid_argument for an
// unknown criterion or a theta / alpha out of range (tree/mac.hpp).
TreeParams tree_params(const EngineConfig& config);

void register_cpu_engines(EngineRegistry& registry);

} // namespace grove
