#include "parallel/distributed_hermite.hpp"

namespace grove {

DistributedHermiteEngine::DistributedHermiteEngine(std::unique_ptr<HermiteEngine> engine, const Communicator& comm)
    : engine_(std::move(engine)), comm_(comm)
{
}

std::string DistributedHermiteEngine::name() const
{
    return engine_->name() + " x " + std::to_string(comm_.size()) + " ranks";
}

void DistributedHermiteEngine::evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out)
{
    const std::size_t m = active.size(), ranks = static_cast<std::size_t>(comm_.size());
    std::vector<std::size_t> counts(ranks), first(ranks + 1, 0);
    for (std::size_t r = 0; r < ranks; ++r) {
        counts[r] = m / ranks + (r < m % ranks ? 1 : 0);
        first[r + 1] = first[r] + counts[r];
    }
    const auto me = static_cast<std::size_t>(comm_.rank());
    const std::vector<std::int32_t> mine(active.begin() + static_cast<std::ptrdiff_t>(first[me]),
                                         active.begin() + static_cast<std::ptrdiff_t>(first[me + 1]));
    HermiteForces part;
    engine_->evaluate(t, mine, part);
    const auto cols = static_cast<Eigen::Index>(m);
    out.acc.resize(3, cols);
    out.jerk.resize(3, cols);
    out.pot.resize(cols);
    std::vector<std::size_t> counts3(ranks);
    for (std::size_t r = 0; r < ranks; ++r) counts3[r] = 3 * counts[r];
    comm_.all_gather(part.acc.data(), 3 * mine.size(), counts3, out.acc.data());
    comm_.all_gather(part.jerk.data(), 3 * mine.size(), counts3, out.jerk.data());
    comm_.all_gather(part.pot.data(), mine.size(), counts, out.pot.data());
    if (sixth_) {
        out.snap.resize(3, cols);
        comm_.all_gather(part.snap.data(), 3 * mine.size(), counts3, out.snap.data());
    }
}

std::unique_ptr<HermiteEngine> distribute(std::unique_ptr<HermiteEngine> engine, const Communicator& comm)
{
    if (comm.size() == 1) return engine;
    return std::make_unique<DistributedHermiteEngine>(std::move(engine), comm);
}

} // namespace grove
