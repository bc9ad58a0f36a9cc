// The GPU engines' registry entries (direct-gpu with its Hermite form, tree-gpu) and the device
// count that tells the registry whether a GPU is present. Host-only header.
#pragma once

#include "core/engine_registry.hpp"

namespace grove {

void register_gpu_engines(EngineRegistry& registry);

} // namespace grove
