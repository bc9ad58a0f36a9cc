// Initial conditions: profiles against the analytic mass functions (Kolmogorov-Smirnov with a
// fixed seed), equilibrium (virial ratio, energy) and reproducibility.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/diagnostics.hpp"
#include "core/ic_models.hpp"
#include "tree/direct_cpu.hpp"

using namespace grove;

namespace {

// KS distance between the sampled radii and the analytic cumulative mass fraction.
template <class Cdf> double ks_distance(const ParticleSet& p, Cdf cdf)
{
    std::vector<double> r(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) r[i] = p.pos.col(static_cast<Eigen::Index>(i)).norm();
    std::sort(r.begin(), r.end());
    double d = 0;
    const double n = static_cast<double>(r.size());
    for (std::size_t i = 0; i < r.size(); ++i)
        d = std::max({d, std::abs(cdf(r[i]) - i / n), std::abs(cdf(r[i]) - (i + 1) / n)});
    return d;
}

// 1% critical value of the one-sample KS statistic: 1.63 / sqrt(N).
double ks_critical(std::size_t n)
{
    return 1.63 / std::sqrt(static_cast<double>(n));
}

} // namespace

TEST_CASE("Plummer sphere: profile, virial equilibrium and energy", "[ic]")
{
    const std::size_t n = 10000;
    const ParticleSet p = make_plummer(n, 3);
    const double a = 3 * 3.14159265358979323846 / 16;
    // The recentring shifts radii by ~1/sqrt(N) of a; the KS test still holds at this N.
    CHECK(ks_distance(p, [&](double r) { return std::pow(r * r / (r * r + a * a), 1.5); }) < ks_critical(n));
    Forces f;
    DirectCpuEngine(GravityParams{}).compute(p.pos, p.mass, f);
    const Diagnostics d = compute_diagnostics(p, f.pot);
    CHECK(std::abs(d.virial_ratio - 1) < 0.02);
    CHECK(std::abs(d.total + 0.25) < 0.02 * 0.25);
    CHECK(d.momentum.norm() < 1e-14);
    CHECK(d.centre_of_mass.norm() < 1e-14);
}

TEST_CASE("Hernquist sphere: profile and virial equilibrium", "[ic]")
{
    const std::size_t n = 10000;
    const ParticleSet p = make_hernquist(n, 4, 2.0, 0.5, 1.0);
    CHECK(ks_distance(p, [&](double r) { return r * r / ((r + 0.5) * (r + 0.5)); }) < ks_critical(n));
    CHECK(p.mass.sum() == Approx(2.0));
    Forces f;
    DirectCpuEngine(GravityParams{1.0, 0.0}).compute(p.pos, p.mass, f);
    const Diagnostics d = compute_diagnostics(p, f.pot);
    // The cuspy centre and the far tail make the finite-N virial ratio noisier than Plummer's.
    CHECK(std::abs(d.virial_ratio - 1) < 0.05);
    // E = W / 2 = -G M^2 / (12 a) for the untruncated sphere.
    CHECK(d.total == Approx(-4.0 / 6.0).epsilon(0.05));
}

TEST_CASE("same seed, same model; different seeds, different samples", "[ic]")
{
    const ParticleSet a = make_plummer(500, 9), b = make_plummer(500, 9), c = make_plummer(500, 10);
    CHECK(a.pos == b.pos);
    CHECK(a.vel == b.vel);
    CHECK(a.pos != c.pos);
    CHECK_THROWS_WITH(make_plummer(0, 1), Catch::Contains("N must be > 0"));
    CHECK_THROWS_WITH(make_hernquist(10, 1, -1, 1, 1), Catch::Contains("mass must be"));
    CHECK_THROWS_WITH(make_hernquist(10, 1, 1, 0, 1), Catch::Contains("scale radius must be"));
    const ParticleSet u = make_uniform_cube(1000, 2, true);
    CHECK(u.pos.cwiseAbs().maxCoeff() <= 1.0);
    CHECK(u.mass.minCoeff() >= 0.5 / 1000);
}
