// The leapfrog's updates of one coordinate, written once for the host's loops (core/particle_store.cpp)
// and the device's kernels (gpu/tree_resident.cu), so that both sides compute the same expressions.
#pragma once

#include "core/host_device.hpp"

namespace grove {

// A kick: the velocity after h of acceleration a.
HOST_DEVICE inline double kicked(double v, double a, double h)
{
    return v + h * a;
}

// A drift: the position after dt at velocity v.
HOST_DEVICE inline double drifted(double x, double v, double dt)
{
    return x + dt * v;
}

// Where the next step's drift will take x, to first order: after a kick of dt by the acceleration a
// and a drift of dt. A tree engine builds its next tree from it while this step's forces are made.
HOST_DEVICE inline double predicted(double x, double v, double a, double dt)
{
    return x + dt * (v + dt * a);
}

} // namespace grove
