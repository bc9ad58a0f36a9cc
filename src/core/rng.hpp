// The random stream of the model generators: std::mt19937_64 (its output is fixed by the
// standard) with our own transforms, because std:: distributions differ between standard
// libraries and a seed must give the same file on every machine.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include <Eigen/Core>

#include "core/host_device.hpp"

namespace grove {

// Uniform deviate in [0, 1) from 53 random bits.
HOST_DEVICE inline double uniform01(std::uint64_t bits)
{
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

struct Rng {
    static constexpr double kPi = 3.14159265358979323846;
    std::mt19937_64 engine;

    explicit Rng(std::uint64_t seed) : engine(seed) {}
    double uniform() { return uniform01(engine()); }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
    // In (0, 1): for logarithms and inverse cumulative functions that diverge at 0.
    double uniform_open()
    {
        double u;
        do u = uniform();
        while (u <= 0);
        return u;
    }
    // Standard normal deviate (Box-Muller; the second value is dropped so that the stream
    // position does not depend on call history).
    double normal() { return std::sqrt(-2 * std::log(uniform_open())) * std::cos(2 * kPi * uniform()); }
    // A random direction scaled to length r.
    Eigen::Vector3d isotropic(double r)
    {
        const double cos_theta = uniform(-1, 1);
        const double sin_theta = std::sqrt(std::max(0.0, 1 - cos_theta * cos_theta));
        const double phi = uniform(0, 2 * kPi);
        return r * Eigen::Vector3d(sin_theta * std::cos(phi), sin_theta * std::sin(phi), cos_theta);
    }
};

} // namespace grove
