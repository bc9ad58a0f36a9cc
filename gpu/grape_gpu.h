// The GRAPE engine (core/grape_engine.hpp) on the GPU, behind libg6: the j-memory lives on the
// device (only the slots a client changed are uploaded), every j-particle is predicted on the
// device with the GRAPE-6 predictor in double, and one thread per i-particle sums acceleration,
// jerk and potential over j-particles staged through shared memory, in double or in mixed
// precision (positions as float pairs, float arithmetic, sums flushed to double per tile), with the
// j-particles split over blocks when few i-particles are asked for. Each thread also keeps its
// nearest neighbour and appends neighbours within its radius to a bounded list (atomic counts;
// the host sorts each list). Host-only header: includes no CUDA.
#pragma once

#include <memory>

#include "core/force_engine.hpp"
#include "core/grape_engine.hpp"
#include "gpu/direct_gpu.h"

namespace grove {

class GrapeGpuEngine final : public GrapeEngine {
  public:
    // Mixed or Double; device >= 0: the engine works on that CUDA device (made current at each call).
    explicit GrapeGpuEngine(Precision precision, int device = -1);
    ~GrapeGpuEngine() override;
    std::string name() const override;
    void resize(std::size_t slots) override;
    std::size_t size() const override;
    void set(std::size_t slot, const GrapeJParticle& p) override;
    void evaluate(double t, std::size_t nj, const GrapeIParticles& i, double eps2, std::size_t neighbour_capacity,
                  GrapeResults& out) override;

    struct Impl; // grape.cu

  private:
    std::unique_ptr<Impl> impl_;
};

} // namespace grove
