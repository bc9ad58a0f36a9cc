#include "tree/cpu_engines.hpp"

#include "tree/direct_cpu.hpp"
#include "tree/grape_cpu.hpp"
#include "tree/hermite_cpu.hpp"
#include "tree/mac.hpp"
#include "tree/tree_cpu.hpp"

namespace grove {

TreeParams tree_params(const EngineConfig& c)
{
    TreeParams p;
    p.mac = parse_mac(c.mac);
    p.theta = c.theta;
    p.alpha = c.alpha;
    p.theta_max = c.theta_max;
    check_opening(p.opening());
    p.build = {c.nleaf, c.ncrit};
    p.rebuild_every = c.rebuild_every;
    p.lookahead = c.lookahead;
    p.resident = c.resident;
    p.list_memory = c.list_memory;
    p.device_memory = c.gpu_memory;
    return p;
}

void register_cpu_engines(EngineRegistry& registry)
{
    registry.add({"direct-cpu", false,
                  [](const EngineConfig& c) { return std::make_unique<DirectCpuEngine>(c.gravity); },
                  [](const EngineConfig& c) { return std::make_unique<HermiteCpuEngine>(c.gravity); },
                  [](const EngineConfig&) { return std::make_unique<GrapeCpuEngine>(); }});
    registry.add({"tree-cpu", false,
                  [](const EngineConfig& c) {
                      TreeParams p = tree_params(c);
                      p.lookahead = false; // on the CPU the next build cannot hide behind the evaluation
                      return std::make_unique<TreeCpuEngine>(p, c.gravity);
                  },
                  nullptr});
}

} // namespace grove
