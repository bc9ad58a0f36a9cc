#include "parallel/distributed_engine.hpp"

#include <stdexcept>

namespace grove {

DistributedForceEngine::DistributedForceEngine(std::unique_ptr<ForceEngine> engine, const Communicator& comm)
    : engine_(std::move(engine)), comm_(comm)
{
    by_share_ = engine_->set_share(comm_.rank(), comm_.size());
}

std::string DistributedForceEngine::name() const
{
    return engine_->name() + " x " + std::to_string(comm_.size()) + " ranks";
}

void DistributedForceEngine::compute(PositionsRef pos, MassesRef mass, Forces& out)
{
    const auto n = static_cast<std::size_t>(pos.cols());
    if (by_share_) {
        engine_->compute(pos, mass, out); // zero outside this rank's share
        comm_.sum(out.acc.data(), 3 * n);
        comm_.sum(out.pot.data(), n);
        // Every particle's cost comes from the one rank that evaluated it: the sum is exact and
        // the same on every rank, which therefore cut the same shares of equal cost next time.
        std::vector<double> costs = engine_->last_particle_costs();
        if (costs.size() == n) {
            comm_.sum(costs.data(), n);
            engine_->set_share_costs(costs);
        }
        return;
    }
    std::vector<std::int32_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::int32_t>(i);
    compute_subset(pos, mass, all, out);
}

void DistributedForceEngine::compute_subset(PositionsRef pos, MassesRef mass, const std::vector<std::int32_t>& targets,
                                            Forces& out)
{
    // Contiguous shares of the targets, the first m % ranks one larger.
    const std::size_t m = targets.size(), ranks = static_cast<std::size_t>(comm_.size());
    std::vector<std::size_t> counts(ranks), first(ranks + 1, 0);
    for (std::size_t r = 0; r < ranks; ++r) {
        counts[r] = m / ranks + (r < m % ranks ? 1 : 0);
        first[r + 1] = first[r] + counts[r];
    }
    const auto me = static_cast<std::size_t>(comm_.rank());
    const std::vector<std::int32_t> mine(targets.begin() + static_cast<std::ptrdiff_t>(first[me]),
                                         targets.begin() + static_cast<std::ptrdiff_t>(first[me + 1]));
    Forces part;
    engine_->compute_subset(pos, mass, mine, part); // throws, naming the engine, if it cannot
    out.acc.resize(3, static_cast<Eigen::Index>(m));
    out.pot.resize(static_cast<Eigen::Index>(m));
    std::vector<std::size_t> counts3(ranks);
    for (std::size_t r = 0; r < ranks; ++r) counts3[r] = 3 * counts[r];
    comm_.all_gather(part.acc.data(), 3 * mine.size(), counts3, out.acc.data());
    comm_.all_gather(part.pot.data(), mine.size(), counts, out.pot.data());
}

std::unique_ptr<ForceEngine> distribute(std::unique_ptr<ForceEngine> engine, const Communicator& comm)
{
    if (comm.size() == 1) return engine;
    return std::make_unique<DistributedForceEngine>(std::move(engine), comm);
}

} // namespace grove
