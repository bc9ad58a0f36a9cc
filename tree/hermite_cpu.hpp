// The Hermite force engine on the CPU in double precision (OpenMP over active particles): the
// reference for the GPU engine, and the engine of Hermite runs on machines without a GPU.
#pragma once

#include "core/force_engine.hpp"
#include "core/hermite_engine.hpp"

namespace grove {

class HermiteCpuEngine final : public HermiteEngine {
  public:
    explicit HermiteCpuEngine(GravityParams gravity) : gravity_(gravity) {}
    std::string name() const override { return "direct-cpu"; }
    void set_state(const HermiteState& state) override { state_ = state; }
    void update(const HermiteState& state, const std::vector<std::int32_t>& changed) override;
    void evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out) override;

  private:
    GravityParams gravity_;
    HermiteState state_;
    Eigen::Matrix3Xd xp_, vp_; // predicted
};

} // namespace grove
