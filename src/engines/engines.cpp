#include "engines/engines.hpp"

#include "tree/cpu_engines.hpp"
#if defined(GROVE_HAVE_CUDA) // the only place a build's engine set is decided
#include "gpu/gpu_engines.h"
#endif

namespace grove {

const EngineRegistry& engines()
{
    static const EngineRegistry registry = [] {
        EngineRegistry r;
        register_cpu_engines(r);
#if defined(GROVE_HAVE_CUDA)
        register_gpu_engines(r);
#endif
        return r;
    }();
    return registry;
}

} // namespace grove
