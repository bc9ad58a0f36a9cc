#include "core/ic_models.hpp"

#include <cmath>
#include <stdexcept>

namespace grove {

namespace {

constexpr double kPi = Rng::kPi;

void require_positive(double value, const char* name)
{
    if (!(value > 0) || !std::isfinite(value))
        throw std::invalid_argument(std::string(name) + " must be a finite number > 0");
}

// Zero total momentum, and (when `positions`) the centre of mass at the origin.
void centre(ParticleSet& p, bool positions = true)
{
    const double m = p.mass.sum();
    const Eigen::Vector3d com = p.pos * p.mass / m;
    const Eigen::Vector3d vcom = p.vel * p.mass / m;
    if (positions) p.pos.colwise() -= com;
    p.vel.colwise() -= vcom;
}

} // namespace

ParticleSet make_plummer(std::size_t n, std::uint64_t seed, double cutoff)
{
    if (n == 0) throw std::invalid_argument("plummer: N must be > 0");
    if (cutoff < 0 || !std::isfinite(cutoff)) throw std::invalid_argument("plummer: cutoff must be >= 0");
    const double a = 3 * kPi / 16; // Henon units for the untruncated sphere
    // Largest mass fraction to sample: M(r_cut) = r^3 / (r^2 + a^2)^(3/2).
    const double x_max = cutoff > 0 ? std::pow(cutoff * cutoff / (cutoff * cutoff + a * a), 1.5) : 1.0;
    ParticleSet p;
    p.resize(n, Component::Halo);
    p.units = nbody_units();
    Rng rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
        double x;
        do x = rng.uniform() * x_max;
        while (x <= 0);
        const double r = a / std::sqrt(std::pow(x, -2.0 / 3.0) - 1);
        // Speed: q = v / v_esc with density g(q) = q^2 (1 - q^2)^(7/2), max < 0.1.
        double q, y;
        do {
            q = rng.uniform();
            y = 0.1 * rng.uniform();
        } while (y > q * q * std::pow(1 - q * q, 3.5));
        const double v_escape = std::sqrt(2.0) * std::pow(r * r + a * a, -0.25);
        const auto c = static_cast<Eigen::Index>(i);
        p.pos.col(c) = rng.isotropic(r);
        p.vel.col(c) = rng.isotropic(q * v_escape);
        p.mass[c] = 1.0 / static_cast<double>(n);
    }
    centre(p);
    return p;
}

ParticleSet make_hernquist(std::size_t n, std::uint64_t seed, double mass, double scale, double G, double truncation)
{
    if (n == 0) throw std::invalid_argument("hernquist: N must be > 0");
    require_positive(mass, "hernquist: mass");
    require_positive(scale, "hernquist: scale radius");
    require_positive(G, "hernquist: G");
    if (truncation < 0 || !std::isfinite(truncation)) throw std::invalid_argument("hernquist: truncation must be >= 0");
    const double x_max = truncation > 0 ? std::pow(truncation / (truncation + scale), 2) : 1.0;
    const double v_g = std::sqrt(G * mass / scale);
    // Hernquist (1990) eq. 17 in units of M, a, v_g: f(q) with q^2 = -E a / (G M).
    auto df = [](double q) {
        const double q2 = q * q;
        if (q <= 0) return 0.0;
        if (q >= 1) return 0.0;
        return std::pow(1 - q2, -2.5) *
               (3 * std::asin(q) + q * std::sqrt(1 - q2) * (1 - 2 * q2) * (8 * q2 * q2 - 8 * q2 - 3));
    };
    ParticleSet p;
    p.resize(n, Component::Halo);
    Rng rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
        double x;
        do x = rng.uniform() * x_max;
        while (x <= 0);
        const double s = std::sqrt(x);
        const double r = scale * s / (1 - s);    // inverts M(r) = M r^2 / (r + a)^2
        const double psi = 1 / (1 + r / scale);  // -Phi in units of G M / a
        const double v_max = std::sqrt(2 * psi); // escape speed in units of v_g
        // Rejection from p(v) ∝ v^2 f(psi - v^2/2) with its maximum found on a grid.
        double peak = 0;
        for (int k = 1; k < 200; ++k) {
            const double v = v_max * k / 200;
            peak = std::max(peak, v * v * df(std::sqrt(psi - v * v / 2)));
        }
        peak *= 1.1;
        double v;
        for (;;) {
            v = v_max * rng.uniform();
            if (rng.uniform() * peak <= v * v * df(std::sqrt(std::max(0.0, psi - v * v / 2)))) break;
        }
        const auto c = static_cast<Eigen::Index>(i);
        p.pos.col(c) = rng.isotropic(r);
        p.vel.col(c) = rng.isotropic(v * v_g);
        p.mass[c] = mass / static_cast<double>(n);
    }
    // Momentum only: an untruncated sphere's farthest particle lies near r ~ 2aN, so its centre of
    // mass wanders by about a; the density centre is the origin by construction.
    centre(p, truncation > 0);
    return p;
}

ParticleSet make_uniform_cube(std::size_t n, std::uint64_t seed, bool random_masses)
{
    if (n == 0) throw std::invalid_argument("uniform: N must be > 0");
    ParticleSet p;
    p.resize(n, Component::Halo);
    p.units = nbody_units();
    Rng rng(seed);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<Eigen::Index>(i);
        p.pos.col(c) << rng.uniform(-1, 1), rng.uniform(-1, 1), rng.uniform(-1, 1);
        p.mass[c] = (random_masses ? rng.uniform(0.5, 1.5) : 1.0) / static_cast<double>(n);
    }
    return p;
}

} // namespace grove
