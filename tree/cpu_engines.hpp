// The CPU engines' registry entries: direct-cpu (acc + pot, and the Hermite engine) and tree-cpu.
#pragma once

#include "core/engine_registry.hpp"

namespace grove {

void register_cpu_engines(EngineRegistry& registry);

} // namespace grove
