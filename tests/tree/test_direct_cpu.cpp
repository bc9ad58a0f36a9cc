// The CPU direct engine against hand-computed values and Newton's third law.
#include <catch2/catch.hpp>

#include "support/test_support.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/gravity.hpp"

using namespace grove;

TEST_CASE("two bodies: hand-computed accelerations and potentials", "[direct]")
{
    Eigen::Matrix3Xd pos(3, 2);
    pos << 0, 2, 0, 0, 0, 0; // x = 0 and x = 2
    Eigen::VectorXd mass(2);
    mass << 1, 3;
    Forces f;
    DirectCpuEngine(GravityParams{2.0, 0.0}).compute(pos, mass, f);
    // a_0 = G m_1 / r^2 = 2*3/4 toward +x; a_1 = G m_0 / r^2 = 2/4 toward -x.
    CHECK(f.acc(0, 0) == Approx(1.5).epsilon(1e-15));
    CHECK(f.acc(0, 1) == Approx(-0.5).epsilon(1e-15));
    CHECK(f.acc(1, 0) == 0);
    CHECK(f.pot[0] == Approx(-3.0).epsilon(1e-15)); // -G m_1 / r
    CHECK(f.pot[1] == Approx(-1.0).epsilon(1e-15));

    // With softening eps = 1: r^2 -> 5.
    DirectCpuEngine(GravityParams{1.0, 1.0}).compute(pos, mass, f);
    CHECK(f.acc(0, 0) == Approx(3 * 2 / std::pow(5.0, 1.5)).epsilon(1e-14));
    CHECK(f.pot[1] == Approx(-1 / std::sqrt(5.0)).epsilon(1e-14));
}

TEST_CASE("three bodies: equilateral triangle", "[direct]")
{
    // Unit masses on a unit-side triangle: each feels sqrt(3) toward the centroid, phi = -2.
    Eigen::Matrix3Xd pos(3, 3);
    pos << 0, 1, 0.5, 0, 0, std::sqrt(3.0) / 2, 0, 0, 0;
    Eigen::VectorXd mass = Eigen::VectorXd::Ones(3);
    Forces f;
    DirectCpuEngine(GravityParams{}).compute(pos, mass, f);
    const Eigen::Vector3d centroid = pos.rowwise().mean();
    for (Eigen::Index i = 0; i < 3; ++i) {
        CHECK(f.acc.col(i).norm() == Approx(std::sqrt(3.0)).epsilon(1e-14));
        CHECK(f.acc.col(i).normalized().dot((centroid - pos.col(i)).normalized()) == Approx(1.0).epsilon(1e-14));
        CHECK(f.pot[i] == Approx(-2.0).epsilon(1e-14));
    }
}

TEST_CASE("Newton's third law: total force vanishes", "[direct]")
{
    const std::size_t n = GENERATE(2, 31, 33, 500);
    const ParticleSet p = test::clustered_particles(n, 5);
    Forces f;
    DirectCpuEngine(GravityParams{1.0, 0.01}).compute(p.pos, p.mass, f);
    Eigen::Vector3d total = Eigen::Vector3d::Zero();
    double scale = 0;
    for (Eigen::Index i = 0; i < p.pos.cols(); ++i) {
        total += p.mass[i] * f.acc.col(i);
        scale += p.mass[i] * f.acc.col(i).norm();
    }
    CHECK(total.norm() <= 1e-12 * scale);
}

TEST_CASE("eps = 0: coincident particles are an error, never NaN; a particle never acts on itself", "[direct]")
{
    Eigen::Matrix3Xd pos(3, 3);
    pos << 0, 0, 1, 0, 0, 0, 0, 0, 0; // particles 0 and 1 coincide
    Eigen::VectorXd mass = Eigen::VectorXd::Ones(3);
    Forces f;
    CHECK_THROWS_WITH(DirectCpuEngine(GravityParams{1.0, 0.0}).compute(pos, mass, f),
                      Catch::Contains("particles 0 and 1 are at the same position"));
    // Softened, the same pair is finite; without softening, apart, each skips only itself.
    DirectCpuEngine(GravityParams{1.0, 0.01}).compute(pos, mass, f);
    CHECK(f.acc.allFinite());
    pos(0, 1) = -1;
    DirectCpuEngine(GravityParams{1.0, 0.0}).compute(pos, mass, f);
    CHECK(f.acc(0, 0) == Approx(0.0)); // pulled equally from -1 and +1
    CHECK(f.pot[0] == Approx(-2.0));

    // One isolated particle with softening: no self-potential -m/eps.
    Eigen::Matrix3Xd one = Eigen::Matrix3Xd::Zero(3, 1);
    Eigen::VectorXd m1 = Eigen::VectorXd::Ones(1);
    DirectCpuEngine(GravityParams{1.0, 0.1}).compute(one, m1, f);
    CHECK(f.pot[0] == 0);
    CHECK(f.acc.col(0).norm() == 0);
}

TEST_CASE("p2p_jerk matches the derivative of p2p along a straight-line motion", "[direct]")
{
    // d(t) = d0 + dv t; jerk = d a / dt, checked by a central difference.
    const double d0[3] = {0.3, -0.2, 0.5}, dv[3] = {0.1, 0.4, -0.3}, m = 2, eps2 = 0.01, h = 1e-5;
    auto acc_at = [&](double t) {
        return p2p(Accum<double>{}, d0[0] + dv[0] * t, d0[1] + dv[1] * t, d0[2] + dv[2] * t, m, eps2);
    };
    const auto j = p2p_jerk(AccumJerk<double>{}, d0[0], d0[1], d0[2], dv[0], dv[1], dv[2], m, eps2);
    const auto ap = acc_at(h), am = acc_at(-h);
    CHECK(j.jx == Approx((ap.ax - am.ax) / (2 * h)).epsilon(1e-7));
    CHECK(j.jy == Approx((ap.ay - am.ay) / (2 * h)).epsilon(1e-7));
    CHECK(j.jz == Approx((ap.az - am.az) / (2 * h)).epsilon(1e-7));
    CHECK(j.ax == acc_at(0).ax);
}
