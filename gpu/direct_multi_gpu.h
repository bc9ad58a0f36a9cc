// Direct summation on several GPUs of one process: each evaluation's targets are cut into
// one contiguous share per device, and each device sums its share over every source with the
// one-GPU engine (its j-splits and reduction), all devices at once from one host thread each.
// Splitting the targets rather than the sources keeps each target's sum on one device (no
// reduction across devices, nothing to exchange but the sources) and balances exactly when every
// particle is a target (forces, accuracy, the leapfrog); with few targets each device still
// splits its sources over its own blocks. The Hermite engine and the GRAPE libraries use one
// GPU. Host-only header.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpu/direct_gpu.h"

namespace grove {

class MultiGpuDirectEngine final : public ForceEngine {
  public:
    // devices: CUDA device numbers, at least one (the same one twice is allowed: tests).
    MultiGpuDirectEngine(GravityParams gravity, Precision precision, const std::vector<int>& devices);
    ~MultiGpuDirectEngine() override;
    using ForceEngine::compute;
    using ForceEngine::compute_subset;
    bool computes_subsets() const override { return true; }
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override;
    void compute_subset(PositionsRef pos, MassesRef mass, TypesRef type, const std::vector<std::int32_t>& targets,
                        Forces& out) override;
    // upload and kernels: the slowest device's; other: the rest of the wall time.
    PhaseTimes last_phase_times() const override;
    std::size_t device_count() const { return engines_.size(); }

  private:
    std::vector<int> devices_;
    std::vector<std::unique_ptr<DirectGpuEngine>> engines_;
    std::vector<Forces> shares_;
    PhaseTimes times_;
    Precision precision_;
};

} // namespace grove
