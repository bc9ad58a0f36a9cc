// The force engine behind the GRAPE-compatible libraries (grape/): a memory of j-particles, each
// with its own time and the Taylor coefficients a GRAPE-6 predictor uses, predicted to a common
// time; i-particles given explicitly (position, velocity, name, neighbour radius); results are
// acceleration, jerk and potential from every j-particle but the one of the same name, the
// nearest neighbour by unsoftened distance, and optionally the neighbours within each i's radius.
// CPU engine: tree/grape_cpu.hpp (double). A GPU engine plugs in through the registry.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/host_device.hpp"

namespace grove {

// One j-particle as GRAPE-6 takes it: the predictor's coefficients a/2, j/6 and s/18.
struct GrapeJParticle {
    double x[3] = {0, 0, 0}, v[3] = {0, 0, 0};
    double a2[3] = {0, 0, 0}, j6[3] = {0, 0, 0}, k18[3] = {0, 0, 0};
    double t = 0, mass = 0;
    std::int64_t name = -1; // the client's index; -1: an empty slot (mass 0, never a neighbour)
};

// GRAPE-6's predictor dt after the particle's time: x + v dt + a2 dt^2 + j6 dt^3 + (3/4) k18 dt^4 and
// v + 2 a2 dt + 3 j6 dt^2 + 3 k18 dt^3 (k18 = s/18, so these are s/24 and s/6: the Taylor terms).
// One formula for the CPU engine and the GPU prediction kernel (gpu/grape.cu).
HOST_DEVICE inline void grape6_predict(double dt, const double x[3], const double v[3], const double a2[3],
                                       const double j6[3], const double k18[3], double xp[3], double vp[3])
{
    for (int d = 0; d < 3; ++d) {
        xp[d] = x[d] + dt * (v[d] + dt * (a2[d] + dt * (j6[d] + dt * 0.75 * k18[d])));
        vp[d] = v[d] + dt * (2 * a2[d] + dt * (3 * j6[d] + dt * 3 * k18[d]));
    }
}

inline void grape6_predict(const GrapeJParticle& p, double t, double x[3], double v[3])
{
    grape6_predict(t - p.t, p.x, p.v, p.a2, p.j6, p.k18, x, v);
}

struct GrapeIParticles {
    std::vector<double> x, v;       // 3 per particle
    std::vector<std::int64_t> name; // skipped as a source when a j-particle has the same name
    std::vector<double> h2;         // neighbour radius squared (unsoftened distance)
    std::size_t size() const { return name.size(); }
};

struct GrapeResults {
    std::vector<double> acc, jerk, pot; // 3, 3, 1 per i; G = 1; potential negative
    std::vector<std::int64_t> nearest;  // name of the nearest other j-particle (-1 if none)
    std::vector<double> nearest_r2;     // its unsoftened squared distance
    // With neighbours asked for: i's neighbours' names, sorted, at
    // neighbours[offset[i] .. offset[i] + count[i]); count[i] is the true number even when it
    // exceeded the capacity, in which case only the capacity's worth is stored and
    // overflowed[i] is set.
    std::vector<std::int64_t> neighbours;
    std::vector<std::int64_t> offset, count;
    std::vector<std::uint8_t> overflowed;
};

class GrapeEngine {
  public:
    virtual ~GrapeEngine() = default;
    virtual std::string name() const = 0;
    // The j-memory holds `slots` particles (empty ones have mass 0 and name -1).
    virtual void resize(std::size_t slots) = 0;
    virtual std::size_t size() const = 0;
    virtual void set(std::size_t slot, const GrapeJParticle& p) = 0;
    // Forces on the i-particles from j-slots [0, nj) predicted to time t, softening eps2 (0 allowed:
    // two particles of different names at the same place throw std::runtime_error naming them).
    // neighbour_capacity > 0 also fills the neighbour lists, at most that many per i.
    virtual void evaluate(double t, std::size_t nj, const GrapeIParticles& i, double eps2,
                          std::size_t neighbour_capacity, GrapeResults& out) = 0;
};

} // namespace grove
