#include "parallel/distributed_engine.hpp"

#include "parallel/target_shares.hpp"

#include <stdexcept>

namespace grove {

DistributedForceEngine::DistributedForceEngine(std::unique_ptr<ForceEngine> engine, const Communicator& comm)
    : ForceEngine(engine->name() + " x " + std::to_string(comm.size()) + " ranks"), engine_(std::move(engine)),
      tree_(as_tree_engine(*engine_)), comm_(comm)
{
    if (tree_) tree_->set_share(comm_.rank(), comm_.size());
}

void DistributedForceEngine::compute(ParticleStore& store)
{
    ParticleSet& p = store.host();
    if (p.has_forces()) engine_->set_acceleration_estimate(p.acc);
    compute(p.pos, p.mass, store.types(), forces_);
    store.take_forces(forces_);
}

void DistributedForceEngine::compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out)
{
    const auto n = static_cast<std::size_t>(pos.cols());
    if (tree_) {
        engine_->compute(pos, mass, type, out); // zero outside this rank's share
        comm_.sum(out.acc.data(), 3 * n);
        comm_.sum(out.pot.data(), n);
        // Every particle's cost comes from the one rank that evaluated it: the sum is exact and
        // the same on every rank, which therefore cut the same shares of equal cost next time.
        std::vector<double> costs = tree_->last_particle_costs();
        if (costs.size() == n) {
            comm_.sum(costs.data(), n);
            tree_->set_share_costs(costs);
        }
        return;
    }
    std::vector<std::int32_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::int32_t>(i);
    compute_subset(pos, mass, type, all, out);
}

void DistributedForceEngine::compute_subset(PositionsRef pos, MassesRef mass, TypesRef type,
                                            const std::vector<std::int32_t>& targets, Forces& out)
{
    const TargetShares shares(targets.size(), comm_);
    Forces part;
    engine_->compute_subset(pos, mass, type, shares.mine(targets), part); // throws, naming the engine, if it cannot
    const auto m = static_cast<Eigen::Index>(targets.size());
    out.acc.resize(3, m);
    out.pot.resize(m);
    shares.gather(part.acc.data(), 3, out.acc.data());
    shares.gather(part.pot.data(), 1, out.pot.data());
}

std::unique_ptr<ForceEngine> distribute(std::unique_ptr<ForceEngine> engine, const Communicator& comm)
{
    if (comm.size() == 1) return engine;
    return std::make_unique<DistributedForceEngine>(std::move(engine), comm);
}

} // namespace grove
