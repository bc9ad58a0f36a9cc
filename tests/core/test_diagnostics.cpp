// Diagnostics on cases with known answers.
#include <catch2/catch.hpp>

#include "core/diagnostics.hpp"
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
