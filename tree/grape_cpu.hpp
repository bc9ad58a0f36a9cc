// The GRAPE engine (core/grape_engine.hpp) on the CPU in double precision, OpenMP over the
// i-particles: the engine of the GRAPE libraries on machines without a GPU, and the reference for
// the GPU one.
#pragma once

#include "core/grape_engine.hpp"

namespace grove {

class GrapeCpuEngine final : public GrapeEngine {
  public:
    std::string name() const override { return "direct-cpu"; }
    void resize(std::size_t slots) override;
    std::size_t size() const override { return memory_.size(); }
    void set(std::size_t slot, const GrapeJParticle& p) override;
    void evaluate(double t, std::size_t nj, const GrapeIParticles& i, double eps2, std::size_t neighbour_capacity,
                  GrapeResults& out) override;

  private:
    std::vector<GrapeJParticle> memory_;
    std::vector<double> xp_, vp_; // predicted, 3 per slot
    double predicted_t_ = 0;
    std::size_t predicted_n_ = 0;
    bool predicted_ = false;
};

} // namespace grove
