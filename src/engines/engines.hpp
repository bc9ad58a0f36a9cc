// The engines this build has, in one registry: the CPU engines always, the GPU engines when the
// build has them. Commands, tests, the GRAPE libraries and Python take engines from here.
#pragma once

#include "core/engine_registry.hpp"

namespace grove {

// Filled on first use; the same registry for the whole process.
const EngineRegistry& engines();

} // namespace grove
