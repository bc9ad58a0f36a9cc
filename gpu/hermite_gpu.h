// The Hermite force engine on the GPU (kirin, Sapporo lineage): particle states live on the
// device; each evaluation predicts every j-particle to the block time on the device (double),
// then computes acceleration, jerk and potential of the active i-particles (in registers, two per
// thread, or four in mixed precision where that wastes few slots) against all j-particles staged
// through shared memory. Precision double, or mixed: predicted positions split into float pairs
// (hi + lo) whose differences keep about 48 bits, everything else in float, sums flushed to
// double per tile. When few particles are active the j-particles are split over blocks and the
// partial sums reduced on the device. After a correction only the changed particles are uploaded.
// A 6th-order state (snap and crackle) is predicted to 5th order and evaluated for acceleration,
// jerk and snap, in double precision only.
// Host-only header: includes no CUDA.
#pragma once

#include <memory>

#include "core/hermite_engine.hpp"
#include "gpu/direct_gpu.h"

namespace grove {

class HermiteGpuEngine final : public HermiteEngine {
  public:
    HermiteGpuEngine(GravityParams gravity, Precision precision); // Mixed or Double
    ~HermiteGpuEngine() override;
    std::string name() const override;
    void set_state(const HermiteState& state) override;
    void update(const HermiteState& state, const std::vector<std::int32_t>& changed) override;
    void evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out) override;

    void set_splits(int splits); // 0: chosen from the device size (default); tests force values
    int last_splits() const;
    double last_kernel_seconds() const; // prediction, force kernel and reduction (CUDA events)

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace grove
