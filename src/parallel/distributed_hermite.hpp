// The Hermite force engine spread over the ranks of an MPI job: every rank keeps the whole state
// (replicated data) and evaluates a contiguous share of each block step's active particles; the
// shares are gathered. Each active particle's force comes from one rank's arithmetic, so block
// steps are bit-identical to one process's for any number of ranks.
#pragma once

#include <memory>

#include "core/hermite_engine.hpp"
#include "parallel/communicator.hpp"

namespace grove {

class DistributedHermiteEngine final : public HermiteEngine {
  public:
    DistributedHermiteEngine(std::unique_ptr<HermiteEngine> engine, const Communicator& comm);
    std::string name() const override;
    void set_state(const HermiteState& state) override
    {
        sixth_ = state.sixth_order();
        engine_->set_state(state);
    }
    void update(const HermiteState& state, const std::vector<std::int32_t>& changed) override
    {
        engine_->update(state, changed);
    }
    void evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out) override;

  private:
    std::unique_ptr<HermiteEngine> engine_;
    const Communicator& comm_;
    bool sixth_ = false; // the state has snap and crackle: gather the snap too
};

// `engine` itself for a one-process job, else wrapped.
std::unique_ptr<HermiteEngine> distribute(std::unique_ptr<HermiteEngine> engine, const Communicator& comm);

} // namespace grove
