// A force engine spread over the ranks of an MPI job. Every rank holds all particles (replicated
// data: N is bounded by one node's memory, docs/user-guide.md). Direct engines: each rank
// computes the forces on its contiguous share of the particles (compute_subset) and the shares are
// gathered. Tree engines: every rank builds the same tree and evaluates its share of the groups
// (TreeEngine::set_share), cut to equal costs by the last step's interaction counts
// (tree/group_shares.hpp); the ranks' results, zero outside their share, are summed. Either way
// each particle's force comes from one rank's arithmetic, so the result is bit-identical to one
// process's for any number of ranks.
#pragma once

#include <memory>

#include "core/force_engine.hpp"
#include "core/tree_engine.hpp"
#include "parallel/communicator.hpp"

namespace grove {

class DistributedForceEngine final : public ForceEngine {
  public:
    // Throws std::runtime_error when the engine can split its work neither way.
    DistributedForceEngine(std::unique_ptr<ForceEngine> engine, const Communicator& comm);
    using ForceEngine::compute;
    using ForceEngine::compute_subset;
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override;
    // compute() on the host's arrays, the store's accelerations the relative criterion's estimate.
    void compute(ParticleStore& store) override;
    // Shares of the targets (engines with compute_subset: the direct ones).
    void compute_subset(PositionsRef pos, MassesRef mass, TypesRef type, const std::vector<std::int32_t>& targets,
                        Forces& out) override;
    PhaseTimes last_phase_times() const override { return engine_->last_phase_times(); }
    bool computes_subsets() const override { return engine_->computes_subsets(); }
    void set_acceleration_estimate(const Eigen::Matrix3Xd& acc) override { engine_->set_acceleration_estimate(acc); }

  private:
    std::unique_ptr<ForceEngine> engine_;
    TreeEngine* tree_; // engine_ as a tree engine (shares of its groups), or null (shares of targets)
    const Communicator& comm_;
    Forces forces_;
};

// `engine` itself for a one-process job, else wrapped.
std::unique_ptr<ForceEngine> distribute(std::unique_ptr<ForceEngine> engine, const Communicator& comm);

} // namespace grove
