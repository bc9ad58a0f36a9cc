#include "tree/cpu_engines.hpp"

#include "tree/direct_cpu.hpp"
#include "tree/hermite_cpu.hpp"
#include "tree/mac.hpp"
#include "tree/tree_cpu.hpp"

namespace grove {

void register_cpu_engines(EngineRegistry& registry)
{
    registry.add({"direct-cpu", false,
                  [](const EngineConfig& c) { return std::make_unique<DirectCpuEngine>(c.gravity); },
                  [](const EngineConfig& c) { return std::make_unique<HermiteCpuEngine>(c.gravity); }});
    registry.add({"tree-cpu", false,
                  [](const EngineConfig& c) {
                      check_theta(c.theta);
                      return std::make_unique<TreeCpuEngine>(TreeParams{c.theta, {c.nleaf, c.ncrit}, c.rebuild_every},
                                                             c.gravity);
                  },
                  nullptr});
}

} // namespace grove
