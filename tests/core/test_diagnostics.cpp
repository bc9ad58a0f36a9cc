// Diagnostics on cases with known answers.
#include <catch2/catch.hpp>

#include "core/diagnostics.hpp"
#include "core/galaxy_model.hpp"
#include "parallel/distributed_diagnostics.hpp"
#include "tree/direct_cpu.hpp"

using namespace grove;

TEST_CASE("diagnostics of a circular binary", "[diagnostics]")
{
    // Equal masses m = 1 at x = +-1 (separation 2), G = 1: circular speed v^2 = G m / (4 * 1) = 1/4.
    ParticleSet p;
    p.resize(2);
    p.pos << 1, -1, 0, 0, 0, 0;
    p.vel << 0, 0, 0.5, -0.5, 0, 0;
    p.mass << 1, 1;
    Forces f;
    DirectCpuEngine(GravityParams{}).compute(p.pos, p.mass, f);
    const Diagnostics d = compute_diagnostics(p, f.pot, {0.5, 1.0});
    CHECK(d.kinetic == Approx(0.25));
    CHECK(d.potential == Approx(-0.5)); // -G m m / r
    CHECK(d.total == Approx(-0.25));
    CHECK(d.virial_ratio == Approx(1.0));
    CHECK(d.momentum.norm() == Approx(0.0).margin(1e-15));
    CHECK(d.angular_momentum.z() == Approx(1.0)); // 2 * (1 * 1 * 0.5)
    CHECK(d.centre_of_mass.norm() == Approx(0.0).margin(1e-15));
    CHECK(d.lagrangian_radii[1] == Approx(1.0));
}

TEST_CASE("Lagrangian radii of evenly spaced radii", "[diagnostics]")
{
    // Equal masses at radii 1..100 along a line: half the mass lies within r = 50.
    const int n = 100;
    Eigen::Matrix3Xd pos = Eigen::Matrix3Xd::Zero(3, n);
    for (int i = 0; i < n; ++i) pos(0, i) = i + 1;
    const Eigen::VectorXd mass = Eigen::VectorXd::Ones(n);
    const auto r = lagrangian_radii(pos, mass, Eigen::Vector3d::Zero(), {0.1, 0.5, 0.9});
    CHECK(r[0] == Approx(10));
    CHECK(r[1] == Approx(50));
    CHECK(r[2] == Approx(90));
    CHECK_THROWS(lagrangian_radii(pos, mass, Eigen::Vector3d::Zero(), {1.5}));
}

TEST_CASE("the diagnostics over ranks (here one) are one process's, the radii bracketed by histograms", "[diagnostics]")
{
    const ParticleSet p = make_galaxy(60000, 4, GalaxyParams{}); // dense centre, far outskirts
    Eigen::VectorXd pot = Eigen::VectorXd::LinSpaced(static_cast<Eigen::Index>(p.size()), -2.0, -1.0);
    const std::vector<double> fractions = {0.01, 0.1, 0.5, 0.9, 1.0};
    const Diagnostics a = compute_diagnostics(p, pot, fractions);
    const Diagnostics b = compute_diagnostics(p, pot, Communicator::world(), fractions);
    CHECK(b.total == Approx(a.total).epsilon(1e-13));
    CHECK(b.virial_ratio == Approx(a.virial_ratio).epsilon(1e-13));
    CHECK((b.angular_momentum - a.angular_momentum).norm() <= 1e-12 * a.angular_momentum.norm());
    REQUIRE(b.lagrangian_radii.size() == a.lagrangian_radii.size());
    for (std::size_t k = 0; k < fractions.size(); ++k) {
        INFO("fraction " << fractions[k]);
        // The enclosed mass is summed in another order: the interpolation between the two particles
        // that bracket the fraction moves by rounding (most at 1, where the sum meets the total).
        CHECK(b.lagrangian_radii[k] == Approx(a.lagrangian_radii[k]).epsilon(1e-9));
    }
}
