#include "gpu/gpu_engines.h"

#include "gpu/device_info.h"
#include "gpu/direct_gpu.h"
#include "gpu/grape_gpu.h"
#include "gpu/hermite_gpu.h"
#include "gpu/tree_gpu.h"
#include "tree/cpu_engines.hpp"

namespace grove {

void register_gpu_engines(EngineRegistry& registry)
{
    registry.set_device_count(cuda_device_count);
    registry.add({"direct-gpu", true,
                  [](const EngineConfig& c) {
                      if (c.device >= 0) select_cuda_device(c.device);
                      return std::make_unique<DirectGpuEngine>(c.gravity, precision_by_name(c.precision));
                  },
                  [](const EngineConfig& c) {
                      if (c.device >= 0) select_cuda_device(c.device);
                      return std::make_unique<HermiteGpuEngine>(c.gravity, precision_by_name(c.precision));
                  },
                  [](const EngineConfig& c) {
                      return std::make_unique<GrapeGpuEngine>(precision_by_name(c.precision), c.device);
                  }});
    registry.add({"tree-gpu", true,
                  [](const EngineConfig& c) {
                      if (c.device >= 0) select_cuda_device(c.device);
                      return std::make_unique<TreeGpuEngine>(tree_params(c), c.gravity);
                  },
                  nullptr});
}

} // namespace grove
