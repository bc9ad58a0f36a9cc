// Hermite predictor-corrector with block time steps, of 4th order (Makino & Aarseth 1992; kirin,
// Sapporo) or 6th (Nitadori & Makino 2008; Sapporo2): the integrator of collisional
// direct-summation runs. Every particle has its own power-of-two step, commensurate with its time;
// each block step predicts all particles to the next block time, evaluates the active ones
// (HermiteEngine: acceleration and jerk, and snap for the 6th order), corrects them in double on
// the host and gives them new steps from Aarseth's criterion with accuracy eta (4th order:
// dt = sqrt(eta (|a||a2| + |a1|^2) / (|a1||a3| + |a2|^2)); 6th order, its generalisation
// dt = eta ((|a||a2| + |a1|^2) / (|a3||a5| + |a4|^2))^(1/6), a_k the k-th derivative; eta there is
// of order 0.1-0.2 where the 4th order takes 0.01).
// First steps come from the start-up criterion dt = eta_start |a| / |j|.
#pragma once

#include <cstdint>
#include <vector>

#include "core/hermite_engine.hpp"
#include "core/particles.hpp"
#include "integrators/block_schedule.hpp"

namespace grove {

struct HermiteParams {
    double eta = 0.01;         // Aarseth's accuracy parameter
    double eta_start = 0.01;   // start-up criterion
    double dt_max = 1.0 / 16;  // largest step, a power of two; particles all meet at its multiples
    double dt_min = 0x1.0p-40; // smaller steps are an error (an unresolved close encounter)
    int order = 4;             // 4 or 6
};

class Hermite {
  public:
    Hermite(HermiteEngine& engine, HermiteParams params);

    // Forces, jerks and first steps of every particle at the set's time.
    void start(const ParticleSet& particles);
    // Continues from a checkpoint: the particles (positions, velocities, accelerations, time) and
    // each particle's jerk (and for the 6th order snap and crackle), time and step, and the step
    // counters.
    void resume(const ParticleSet& particles, const Eigen::Matrix3Xd& jerk, const Eigen::VectorXd& times,
                const Eigen::VectorXd& steps, long long block_steps, long long particle_steps,
                const Eigen::Matrix3Xd& snap = {}, const Eigen::Matrix3Xd& crackle = {});
    // One block step: advances the particles whose next time is the earliest; returns that time.
    double block_step();
    // Block steps until every particle is at t (a multiple of dt_max after the start time),
    // then copies positions and velocities into `particles` and sets its time.
    void advance_to(double t, ParticleSet& particles);
    // Potentials of all particles at the current synchronized time (one extra evaluation).
    Eigen::VectorXd potentials();

    const HermiteState& state() const { return state_; }
    const Eigen::VectorXd& steps() const { return dt_; }
    long long block_steps() const { return block_steps_; }
    long long particle_steps() const { return particle_steps_; }
    double force_seconds() const { return force_seconds_; }

    int order() const { return params_.order; }

  private:
    void evaluate(double t, const std::vector<std::int32_t>& active);
    // The corrector and the new step of active particle i (k-th of the block), for each order.
    bool correct4(Eigen::Index i, Eigen::Index k, double t_next);
    bool correct6(Eigen::Index i, Eigen::Index k, double t_next);

    HermiteEngine& engine_;
    HermiteParams params_;
    HermiteState state_;
    Eigen::VectorXd dt_;
    BlockSchedule schedule_; // every particle's next time, t_ + dt_
    HermiteForces forces_;
    std::vector<std::int32_t> active_;
    long long block_steps_ = 0, particle_steps_ = 0;
    double force_seconds_ = 0;
};

} // namespace grove
