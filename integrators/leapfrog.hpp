// Kick-drift-kick leapfrog with a shared time step over any force engine: second order,
// symplectic and time-reversible, the integrator of collisionless galaxy runs. One force
// evaluation per step; the forces at the end of a step are the next step's first kick.
#pragma once

#include "core/force_engine.hpp"
#include "core/particles.hpp"

namespace grove {

class Leapfrog {
  public:
    Leapfrog(ForceEngine& engine, double dt);

    // Computes the forces of the initial state (into particles.acc / pot).
    void start(ParticleSet& particles);
    // Continues from a checkpoint whose particles carry the forces of their positions.
    void resume(const ParticleSet& particles);
    // One step: v += a dt/2; x += v dt; a = F(x); v += a dt/2; time += dt. Needs start() first.
    void step(ParticleSet& particles);

    double dt() const { return dt_; }
    double force_seconds() const { return force_seconds_; } // wall time inside the engine
    long long steps() const { return steps_; }

  private:
    void compute_forces(ParticleSet& particles);

    ForceEngine& engine_;
    double dt_;
    bool started_ = false;
    double force_seconds_ = 0;
    long long steps_ = 0;
    Forces forces_;
};

} // namespace grove
