// Direct summation on the GPU (kirin, Sapporo, Sapporo2 lineage): i-particles in registers,
// j-particles staged through shared memory in tiles, the shared p2p formula per pair. Three
// precisions: float; mixed (positions as float pairs hi + lo, differenced part by part, the rest
// in float); double (the reference). When there are too few i-particles to fill the GPU, the j-particles are
// split over blocks and the partial sums reduced on the device.
// Host-only header: includes no CUDA, so .cpp callers compile with the host compiler.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/force_engine.hpp"

namespace grove {

enum class Precision { Float, Mixed, Double };

Precision precision_by_name(const std::string& name); // float | mixed | double, else throws
const char* precision_name(Precision p);

class DirectGpuEngine final : public ForceEngine {
  public:
    // device >= 0: the engine works on that CUDA device (made current at each call); -1: the
    // current one.
    DirectGpuEngine(GravityParams gravity, Precision precision, int device = -1);
    ~DirectGpuEngine() override;
    using ForceEngine::compute;
    using ForceEngine::compute_subset;
    bool computes_subsets() const override { return true; }
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override;
    PhaseTimes last_phase_times() const override;

    void compute_subset(PositionsRef pos, MassesRef mass, TypesRef type, const std::vector<std::int32_t>& targets,
                        Forces& out) override;

    // Number of j-splits: 0 chooses from the device size (the default); tests force values.
    void set_splits(int splits);
    int last_splits() const;
    double last_kernel_seconds() const; // force kernels and the reduction, timed with events

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace grove
