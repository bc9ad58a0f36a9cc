#include "parallel/distributed_hermite.hpp"

#include "parallel/target_shares.hpp"

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
    const TargetShares shares(active.size(), comm_);
    HermiteForces part;
    engine_->evaluate(t, shares.mine(active), part);
    const auto cols = static_cast<Eigen::Index>(active.size());
    out.acc.resize(3, cols);
    out.jerk.resize(3, cols);
    out.pot.resize(cols);
    shares.gather(part.acc.data(), 3, out.acc.data());
    shares.gather(part.jerk.data(), 3, out.jerk.data());
    shares.gather(part.pot.data(), 1, out.pot.data());
    if (sixth_) {
        out.snap.resize(3, cols);
        shares.gather(part.snap.data(), 3, out.snap.data());
    }
}

std::unique_ptr<HermiteEngine> distribute(std::unique_ptr<HermiteEngine> engine, const Communicator& comm)
{
    if (comm.size() == 1) return engine;
    return std::make_unique<DistributedHermiteEngine>(std::move(engine), comm);
}

} // namespace grove
