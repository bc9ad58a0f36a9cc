// The Hermite force engine on the CPU in double precision (OpenMP over active particles): the
// reference for the GPU engine, and the engine of Hermite runs on machines without a GPU. Given a
// 6th-order state it also returns the snap (the only engine that does so far).
#pragma once

#include "core/force_engine.hpp"
#include "core/hermite_engine.hpp"

namespace grove {

class HermiteCpuEngine final : public HermiteEngine {
  public:
    explicit HermiteCpuEngine(GravityParams gravity) : gravity_(gravity) {}
    std::string name() const override { return "direct-cpu"; }
    void set_state(const HermiteState& state) override;
    void update(const HermiteState& state, const std::vector<std::int32_t>& changed) override;
    void evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out) override;

  private:
    // The 6th-order evaluation (the state has snap and crackle): acceleration, jerk and snap.
    void evaluate_snap(const std::vector<std::int32_t>& active, HermiteForces& out);

    GravityParams gravity_;
    HermiteState state_;
    Eigen::Matrix3Xd xp_, vp_, ap_; // predicted
    std::vector<double> half_eps2_; // softening by type: eps^2 / 2 per particle, else empty
};

} // namespace grove
