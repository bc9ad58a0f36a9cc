// Direct summation on the CPU in double precision with OpenMP: the accuracy reference for every
// other engine. O(N^2); each target sums over all sources with the shared p2p formula, with one
// softening or softening by type.
#pragma once

#include "core/force_engine.hpp"

namespace grove {

class DirectCpuEngine final : public ForceEngine {
  public:
    explicit DirectCpuEngine(GravityParams params);
    using ForceEngine::compute;
    using ForceEngine::compute_subset;
    bool computes_subsets() const override { return true; }
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override;
    PhaseTimes last_phase_times() const override { return times_; }

    void compute_subset(PositionsRef pos, MassesRef mass, TypesRef type, const std::vector<std::int32_t>& targets,
                        Forces& out) override;

  private:
    GravityParams params_;
    PhaseTimes times_;
};

} // namespace grove
