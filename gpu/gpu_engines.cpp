#include "gpu/gpu_engines.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/device_info.h"
#include "gpu/direct_gpu.h"
#include "gpu/direct_multi_gpu.h"
#include "gpu/grape_gpu.h"
#include "gpu/hermite_gpu.h"
#include "gpu/tree_gpu.h"
#include "tree/cpu_engines.hpp"

namespace grove {

namespace {

// The devices the direct engine's forces use: one named device (a rank's under mpirun), else the
// list asked for, else every visible one (so one GPU stays the behaviour where only one is).
std::vector<int> direct_devices(const EngineConfig& c)
{
    if (c.device >= 0) return {c.device};
    const int visible = cuda_device_count();
    if (c.devices.empty()) {
        std::vector<int> all(static_cast<std::size_t>(std::max(visible, 1)));
        for (std::size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);
        return all;
    }
    for (int d : c.devices)
        if (d < 0 || d >= visible)
            throw std::runtime_error("--gpus: device " + std::to_string(d) + " is not one of the " +
                                     std::to_string(visible) + " visible");
    return c.devices;
}

} // namespace

void register_gpu_engines(EngineRegistry& registry)
{
    registry.set_device_count(cuda_device_count);
    registry.set_device_free_memory(cuda_device_free_memory);
    registry.add({"direct-gpu", true,
                  [](const EngineConfig& c) -> std::unique_ptr<ForceEngine> {
                      const std::vector<int> devices = direct_devices(c);
                      if (devices.size() > 1)
                          return std::make_unique<MultiGpuDirectEngine>(c.gravity, precision_by_name(c.precision),
                                                                        devices);
                      const bool named = c.device >= 0 || !c.devices.empty(); // else: the current device
                      return std::make_unique<DirectGpuEngine>(c.gravity, precision_by_name(c.precision),
                                                               named ? devices.front() : -1);
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
