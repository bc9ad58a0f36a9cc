// What the tree engines (tree-cpu, tree-gpu) offer beyond ForceEngine, for the callers that need
// it: shares of the work for MPI ranks, and the device side of a particle store (the relative
// criterion's estimate of |a| is ForceEngine::set_acceleration_estimate). Reached from a registry-made engine with
// as_tree_engine().
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "core/device_particles.hpp"
#include "core/force_engine.hpp"
#include "core/rank_exchange.hpp"

namespace grove {

// What an engine holds on its device: every buffer, and of them the interaction lists (which
// grow with the walk's batches, not with N; tree/list_batches.hpp).
struct DeviceMemory {
    std::uint64_t held = 0, lists = 0;
    int list_batches = 0; // batches of groups the last evaluation walked in
};

class TreeEngine {
  public:
    virtual ~TreeEngine() = default;
    // Share `index` of `count` parts of the work (parallel/distributed_engine.hpp): compute() then
    // gives the forces of the share's groups only, zero elsewhere. Cut to equal costs by
    // set_share_costs (tree/group_shares.hpp), else to equal particle counts.
    virtual void set_share(int index, int count) = 0;
    // The cost of every particle (in the order compute() got them) in the last compute(), zero
    // outside this share; and the costs summed over all shares, from which the next compute()
    // cuts shares of equal cost.
    virtual std::vector<double> last_particle_costs() const = 0;
    virtual void set_share_costs(const std::vector<double>& costs) = 0;
    // Where the engine's settings allow whole steps on its device (tree-gpu resident steps): the
    // device side a particle store may live on (ParticleStore::place_on), owned by the engine.
    // Null otherwise.
    virtual DeviceParticles* device_particles() { return nullptr; }
    // The same for a store that holds this rank's domain of particles split over ranks: each
    // computation there exchanges locally essential trees with the other ranks through `ranks`
    // (which outlives the store). Null where the engine cannot (then the caller's host pipeline
    // does the exchange).
    virtual DeviceParticles* device_particles_on_domains(RankExchange& /*ranks*/) { return nullptr; }
    // Bytes held on the engine's device now (zero for an engine without one).
    virtual DeviceMemory device_memory() const { return {}; }
};

inline TreeEngine* as_tree_engine(ForceEngine& engine)
{
    return dynamic_cast<TreeEngine*>(&engine);
}
inline const TreeEngine* as_tree_engine(const ForceEngine& engine)
{
    return dynamic_cast<const TreeEngine*>(&engine);
}

} // namespace grove
