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

} // namespace grove
