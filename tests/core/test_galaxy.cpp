// The galaxy model: the Eddington inversion against an analytic distribution function, its
// negativity check, sampled profiles against the analytic ones (Kolmogorov-Smirnov, fixed
// seed), virial equilibrium, disk kinematics, reproducibility and bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/diagnostics.hpp"
#include "core/eddington.hpp"
#include "core/galaxy_model.hpp"
#include "tree/direct_cpu.hpp"

using namespace grove;

namespace {

constexpr double kPi = Rng::kPi;

std::vector<double> log_grid(double lo, double hi, std::size_t n)
{
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = lo * std::pow(hi / lo, static_cast<double>(i) / (n - 1));
    return r;
}

double hernquist_rho(double r, double m, double a)
{
    return m * a / (2 * kPi * r * std::pow(r + a, 3));
}

double hernquist_drho(double r, double m, double a)
{
    return -hernquist_rho(r, m, a) * (1 / r + 3 / (r + a));
}

// Hernquist (1990) eq. 17 with G = M = a = 1.
double hernquist_df(double e)
{
    const double q = std::sqrt(e), q2 = e;
    return 1 / (std::sqrt(2.0) * std::pow(2 * kPi, 3) * std::pow(1 - q2, 2.5)) *
           (3 * std::asin(q) + q * std::sqrt(1 - q2) * (1 - 2 * q2) * (8 * q2 * q2 - 8 * q2 - 3));
}

// One-sample KS distance between values and a cumulative distribution.
template <class Cdf> double ks_distance(std::vector<double> x, Cdf cdf)
{
    std::sort(x.begin(), x.end());
    const double n = static_cast<double>(x.size());
    double d = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
        d = std::max({d, std::abs(cdf(x[i]) - i / n), std::abs(cdf(x[i]) - (i + 1) / n)});
    return d;
}

// 1% critical value of the one-sample KS statistic.
double ks_critical(std::size_t n)
{
    return 1.63 / std::sqrt(static_cast<double>(n));
}

std::vector<std::size_t> of_type(const ParticleSet& p, Component c)
{
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (p.type[i] == static_cast<std::uint8_t>(c)) out.push_back(i);
    return out;
}

} // namespace

TEST_CASE("Eddington inversion reproduces the analytic Hernquist distribution function", "[ic][galaxy]")
{
    const std::vector<double> r = log_grid(1e-4, 1e4, 3000);
    std::vector<double> rho(r.size()), drho(r.size());
    for (std::size_t i = 0; i < r.size(); ++i) {
        rho[i] = hernquist_rho(r[i], 1, 1);
        drho[i] = hernquist_drho(r[i], 1, 1);
    }
    const double inner = r[0] * r[0] / ((r[0] + 1) * (r[0] + 1));
    const RadialTable table = make_radial_table(r, rho, inner, 1.0);
    CHECK(table.psi_at(1.0) == Approx(0.5).epsilon(1e-4)); // Psi = G M / (r + a)
    const EddingtonDf df(table, rho, drho);
    CHECK(df.worst_negative_ratio() > -1e-6);
    for (double e : {0.05, 0.2, 0.5, 0.8, 0.95}) {
        INFO("E = " << e);
        CHECK(df.f(e) == Approx(hernquist_df(e)).epsilon(5e-3));
    }
    // The DF integrates back to the density it came from.
    for (double radius : {0.05, 0.5, 5.0}) {
        INFO("r = " << radius);
        CHECK(df.density_from_df(table.psi_at(radius)) == Approx(hernquist_rho(radius, 1, 1)).epsilon(5e-3));
    }
}

TEST_CASE("a cored component around a central mass has a negative DF, and it is reported", "[ic][galaxy]")
{
    // A light Plummer sphere (b = 1) around a compact heavy Hernquist (a = 0.01): rho -> const
    // while Psi ~ 1/r, so d^2 rho / d Psi^2 < 0 at large binding energy and f < 0 there.
    const std::vector<double> r = log_grid(1e-5, 1e4, 3000);
    std::vector<double> rho_total(r.size()), rho(r.size()), drho(r.size());
    const double mp = 0.01;
    for (std::size_t i = 0; i < r.size(); ++i) {
        const double s = 1 + r[i] * r[i];
        rho[i] = 3 * mp / (4 * kPi) * std::pow(s, -2.5);
        drho[i] = -5 * r[i] * rho[i] / s;
        rho_total[i] = rho[i] + hernquist_rho(r[i], 1, 0.01);
    }
    const RadialTable table = make_radial_table(r, rho_total, 1e-6, 1.0);
    const EddingtonDf df(table, rho, drho);
    CHECK(df.worst_negative_ratio() < -0.1);
    CHECK(df.worst_negative_radius() < 1.0);
}

TEST_CASE("galaxy: sampled profiles follow the analytic ones", "[ic][galaxy]")
{
    const GalaxyParams params;
    const std::size_t n = 16000;
    const ParticleSet p = make_galaxy(n, 5, params);
    const GalaxyProfiles prof = galaxy_profiles(params);
    const auto bulge = of_type(p, Component::Bulge), disk = of_type(p, Component::Disk),
               halo = of_type(p, Component::Halo);
    // Masses 1 : 1 : 4 and particle numbers in the same ratio.
    CHECK(bulge.size() == Approx(n / 6.0).margin(1));
    CHECK(disk.size() == Approx(n / 6.0).margin(1));
    CHECK(halo.size() + bulge.size() + disk.size() == n);
    CHECK(p.mass.maxCoeff() == Approx(p.mass.minCoeff()).epsilon(1e-3));
    CHECK(p.mass.sum() == Approx(24.0));

    auto values = [&](const std::vector<std::size_t>& sel, auto fn) {
        std::vector<double> v;
        for (std::size_t i : sel) v.push_back(fn(p.pos.col(static_cast<Eigen::Index>(i))));
        return v;
    };
    const auto radius = [](const auto& x) { return x.norm(); };
    const auto cyl = [](const auto& x) { return std::hypot(x[0], x[1]); };
    const auto height = [](const auto& x) { return std::abs(x[2]); };
    CHECK(ks_distance(values(bulge, radius), [&](double r) { return prof.bulge_mass_fraction(r); }) <
          ks_critical(bulge.size()));
    CHECK(ks_distance(values(halo, radius), [&](double r) { return prof.halo_mass_fraction(r); }) <
          ks_critical(halo.size()));
    CHECK(ks_distance(values(disk, cyl), [&](double r) { return prof.disk_mass_fraction(r); }) <
          ks_critical(disk.size()));
    CHECK(ks_distance(values(disk, height), [&](double z) { return prof.disk_height_fraction(z); }) <
          ks_critical(disk.size()));
    // The KS test can fail: a profile with a 10% longer disk scale length is rejected.
    CHECK(ks_distance(values(disk, cyl), [&](double r) { return prof.disk_mass_fraction(r / 1.1); }) >
          ks_critical(disk.size()));
}

TEST_CASE("galaxy: virial equilibrium, zero momentum, a rotating disk", "[ic][galaxy]")
{
    const ParticleSet p = make_galaxy(12000, 6, GalaxyParams{});
    Forces f;
    DirectCpuEngine(GravityParams{p.units.G, 0.0}).compute(p.pos, p.mass, f);
    const Diagnostics d = compute_diagnostics(p, f.pot);
    CHECK(std::abs(d.virial_ratio - 1) < 0.03);
    CHECK(d.momentum.norm() < 1e-10 * p.mass.sum());
    CHECK(d.centre_of_mass.norm() < 1e-12);
    // The disk rotates about +z; near 8 kpc at close to the circular speed (about 200 km/s).
    double lz = 0, mean_vphi = 0;
    int count = 0;
    for (std::size_t i : of_type(p, Component::Disk)) {
        const auto c = static_cast<Eigen::Index>(i);
        const double x = p.pos(0, c), y = p.pos(1, c), R = std::hypot(x, y);
        const double vphi = (x * p.vel(1, c) - y * p.vel(0, c)) / R;
        lz += x * p.vel(1, c) - y * p.vel(0, c);
        if (R > 7 && R < 9) {
            mean_vphi += vphi;
            ++count;
        }
    }
    CHECK(lz > 0);
    REQUIRE(count > 50);
    mean_vphi /= count;
    CHECK(mean_vphi > 170);
    CHECK(mean_vphi < 240);
}

TEST_CASE("galaxy: reproducible by seed; bad parameters are named", "[ic][galaxy]")
{
    const ParticleSet a = make_galaxy(600, 9, GalaxyParams{}), b = make_galaxy(600, 9, GalaxyParams{}),
                      c = make_galaxy(600, 10, GalaxyParams{});
    CHECK(a.pos == b.pos);
    CHECK(a.vel == b.vel);
    CHECK(a.pos != c.pos);
    GalaxyParams bad;
    bad.disk_mass = -1;
    CHECK_THROWS_WITH(make_galaxy(100, 1, bad), Catch::Contains("--disk-mass"));
    bad = GalaxyParams{};
    bad.halo_scale = 0;
    CHECK_THROWS_WITH(make_galaxy(100, 1, bad), Catch::Contains("--halo-scale"));
    bad = GalaxyParams{};
    bad.toomre_q = 20;
    CHECK_THROWS_WITH(make_galaxy(100, 1, bad), Catch::Contains("--disk-q") && Catch::Contains("cannot be reached"));
    CHECK_THROWS_WITH(make_galaxy(2, 1, GalaxyParams{}), Catch::Contains("N must be"));
}
