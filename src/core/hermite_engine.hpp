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

// Per-particle state at each particle's own time t: the predictor's Taylor coefficients. The
// 6th-order scheme also keeps snap and crackle (empty for the 4th-order one); an engine given
// them predicts to 5th order and returns the snap too.
struct HermiteState {
    Eigen::Matrix3Xd x, v, a, j;
    Eigen::Matrix3Xd s, c; // 6th order only
    Eigen::VectorXd t, mass;
    std::vector<std::uint8_t> type; // GADGET types, read where the softening is per type
    std::size_t size() const { return static_cast<std::size_t>(mass.size()); }
    bool sixth_order() const { return s.cols() == x.cols() && c.cols() == x.cols() && x.cols() > 0; }
};

struct HermiteForces {
    Eigen::Matrix3Xd acc, jerk; // 3 x active
    Eigen::Matrix3Xd snap;      // 3 x active, 6th order only
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

// Particle i of `s` predicted to time t (core/hermite_predict.hpp): to 3rd order in position, or
// to 5th with the acceleration `a` too when the state is 6th-order (a may then not be null).
inline void hermite_predict(const HermiteState& s, Eigen::Index i, double t, double* x, double* v, double* a = nullptr)
{
    if (s.sixth_order()) {
        double unused[3];
        hermite6_predict(t - s.t[i], s.x.col(i).data(), s.v.col(i).data(), s.a.col(i).data(), s.j.col(i).data(),
                         s.s.col(i).data(), s.c.col(i).data(), x, v, a ? a : unused);
        return;
    }
    hermite_predict(t - s.t[i], s.x.col(i).data(), s.v.col(i).data(), s.a.col(i).data(), s.j.col(i).data(), x, v);
}

} // namespace grove
