// The force engine of the 4th-order Hermite integrator (Makino & Aarseth 1992; kirin, Sapporo):
// it keeps every particle's state at its own last time, predicts all of them to the current block
// time, and returns acceleration, jerk and potential of the active particles from all others.
// Engines: HermiteCpuEngine (double, OpenMP) and HermiteGpuEngine (double or mixed precision,
// prediction on the device, j-particles split over blocks when few are active).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/hermite_predict.hpp"

namespace grove {

// Per-particle state at each particle's own time t: the predictor's Taylor coefficients.
struct HermiteState {
    Eigen::Matrix3Xd x, v, a, j;
    Eigen::VectorXd t, mass;
    std::size_t size() const { return static_cast<std::size_t>(mass.size()); }
};

struct HermiteForces {
    Eigen::Matrix3Xd acc, jerk; // 3 x active
    Eigen::VectorXd pot;        // active (G included, own term excluded)
};

class HermiteEngine {
  public:
    virtual ~HermiteEngine() = default;
    virtual std::string name() const = 0;
    // Takes the whole state (first call, or after every particle changed).
    virtual void set_state(const HermiteState& state) = 0;
    // Takes the new state of the particles `changed` (after their correction).
    virtual void update(const HermiteState& state, const std::vector<std::int32_t>& changed) = 0;
    // Predicts every particle to time t and evaluates the `active` ones (at their predicted
    // positions and velocities) against all others.
    virtual void evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out) = 0;
};

// Particle i of `s` predicted to time t (core/hermite_predict.hpp).
inline void hermite_predict(const HermiteState& s, Eigen::Index i, double t, double* x, double* v)
{
    hermite_predict(t - s.t[i], s.x.col(i).data(), s.v.col(i).data(), s.a.col(i).data(), s.j.col(i).data(), x, v);
}

} // namespace grove
