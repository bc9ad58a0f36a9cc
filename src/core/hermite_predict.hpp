// The Hermite predictor (Makino & Aarseth 1992): position and velocity of a particle dt after its
// own time, from its position, velocity, acceleration and jerk there,
//   x_p = x + v dt + a dt^2/2 + j dt^3/6,   v_p = v + a dt + j dt^2/2.
// One formula for the CPU engine, the GPU prediction kernels and the integrator's corrector, so
// all three round alike.
#pragma once

#include "core/host_device.hpp"

namespace grove {

HOST_DEVICE inline void hermite_predict(double dt, const double x[3], const double v[3], const double a[3],
                                        const double j[3], double xp[3], double vp[3])
{
    const double dt2 = dt * dt / 2, dt3 = dt2 * dt / 3;
    for (int d = 0; d < 3; ++d) {
        xp[d] = x[d] + dt * v[d] + dt2 * a[d] + dt3 * j[d];
        vp[d] = v[d] + dt * a[d] + dt2 * j[d];
    }
}

// The 6th-order scheme's predictor (Nitadori & Makino 2008): position to 5th order, velocity to
// 4th and acceleration to 3rd, from the snap s and crackle c at the particle's own time.
HOST_DEVICE inline void hermite6_predict(double dt, const double x[3], const double v[3], const double a[3],
                                         const double j[3], const double s[3], const double c[3], double xp[3],
                                         double vp[3], double ap[3])
{
    const double h2 = dt * dt / 2, h3 = h2 * dt / 3, h4 = h3 * dt / 4, h5 = h4 * dt / 5;
    for (int d = 0; d < 3; ++d) {
        xp[d] = x[d] + dt * v[d] + h2 * a[d] + h3 * j[d] + h4 * s[d] + h5 * c[d];
        vp[d] = v[d] + dt * a[d] + h2 * j[d] + h3 * s[d] + h4 * c[d];
        ap[d] = a[d] + dt * j[d] + h2 * s[d] + h3 * c[d];
    }
}

} // namespace grove
