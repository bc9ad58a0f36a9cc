// The 6th-order Hermite scheme (Nitadori & Makino 2008) on the CPU engine: the snap against a
// finite difference of the jerk, sixth-order convergence with shared steps, a Kepler binary with
// e = 0.9 and no softening for 100 periods, block steps on a Plummer sphere against the 4th order,
// and the zero-softening errors.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/diagnostics.hpp"
#include "core/ic_models.hpp"
#include "integrators/hermite.hpp"
#include "support/test_support.hpp"
#include "tree/hermite_cpu.hpp"

using namespace grove;

namespace {

constexpr double kPi = 3.14159265358979323846;

HermiteState sixth_state(const ParticleSet& p, const Eigen::Matrix3Xd& a)
{
    HermiteState s;
    s.x = p.pos;
    s.v = p.vel;
    s.a = a;
    s.j = Eigen::Matrix3Xd::Zero(3, p.pos.cols());
    s.s = s.j;
    s.c = s.j;
    s.t = Eigen::VectorXd::Zero(p.mass.size());
    s.mass = p.mass;
    return s;
}

double energy_error(Hermite& h, ParticleSet& p, double t_end)
{
    h.start(p);
    const double e0 = compute_diagnostics(p, h.potentials()).total;
    h.advance_to(t_end, p);
    return std::abs((compute_diagnostics(p, h.potentials()).total - e0) / e0);
}

} // namespace

TEST_CASE("the snap is the time derivative of the jerk", "[hermite6]")
{
    // Particles on parabolas x0 + v t + a t^2 / 2 (a arbitrary): the engine predicts exactly that
    // path, and d(jerk)/dt along it is the snap of the same x0, v, a.
    const ParticleSet p = test::random_particles(150, 5);
    Eigen::Matrix3Xd a = Eigen::Matrix3Xd::Random(3, p.pos.cols()) * 0.5;
    HermiteCpuEngine engine(GravityParams{1.0, 1e-2});
    engine.set_state(sixth_state(p, a));
    const auto all = test::all_indices(p.size());
    HermiteForces f0, fp, fm;
    engine.evaluate(0.0, all, f0);
    const double h = 1e-5;
    engine.evaluate(h, all, fp);
    engine.evaluate(-h, all, fm);
    REQUIRE(f0.snap.cols() == f0.acc.cols());
    CHECK(((fp.acc - fm.acc) / (2 * h) - f0.jerk).norm() < 1e-6 * f0.jerk.norm());
    CHECK(((fp.jerk - fm.jerk) / (2 * h) - f0.snap).norm() < 1e-6 * f0.snap.norm());
}

TEST_CASE("hermite6 converges at sixth order with shared steps", "[hermite6]")
{
    // A large eta makes every step dt_max: shared steps of a known size.
    std::vector<double> errors;
    for (const double dt : {1.0 / 64, 1.0 / 128, 1.0 / 256}) {
        ParticleSet p = make_plummer(256, 4);
        HermiteCpuEngine engine(GravityParams{1.0, 0.1});
        Hermite h(engine, HermiteParams{1e6, 1e6, dt, 0x1.0p-40, 6});
        errors.push_back(energy_error(h, p, 0.25));
    }
    const double slope1 = std::log2(errors[0] / errors[1]), slope2 = std::log2(errors[1] / errors[2]);
    INFO("|dE/E| " << errors[0] << ", " << errors[1] << ", " << errors[2] << ": slopes " << slope1 << ", " << slope2);
    const double slope = std::log2(errors[0] / errors[2]) / 2;
    CHECK(slope > 5.5);
    CHECK(slope < 6.5);
}

TEST_CASE("hermite6 keeps a Kepler binary (e = 0.9, no softening) for 100 periods", "[hermite6]")
{
    // Units with G = 1, a = 1 and period 1: total mass 4 pi^2. Start at apocentre.
    const double e = 0.9, mass = 4 * kPi * kPi;
    ParticleSet p;
    p.resize(2);
    p.mass << mass / 2, mass / 2;
    const double ra = 1 + e, va = std::sqrt(mass * (1 - e) / (1 + e));
    p.pos.col(0) << -ra / 2, 0, 0;
    p.pos.col(1) << ra / 2, 0, 0;
    p.vel.col(0) << 0, -va / 2, 0;
    p.vel.col(1) << 0, va / 2, 0;
    HermiteCpuEngine engine(GravityParams{1.0, 0.0});
    Hermite h(engine, HermiteParams{0.1, 0.01, 1.0 / 64, 0x1.0p-40, 6});
    h.start(p);
    const double e0 = compute_diagnostics(p, h.potentials()).total;
    h.advance_to(100.0, p);
    const double e1 = compute_diagnostics(p, h.potentials()).total;
    // The phase after 100 periods: the mean anomaly of the relative orbit, 0 at apocentre = pi.
    const Eigen::Vector3d r = p.pos.col(1) - p.pos.col(0), v = p.vel.col(1) - p.vel.col(0);
    const double rn = r.norm(), a = 1 / (2 / rn - v.squaredNorm() / mass);
    const double ecc_cos = 1 - rn / a, ecc_sin = r.dot(v) / std::sqrt(mass * a);
    const double E = std::atan2(ecc_sin, ecc_cos), ecc = std::hypot(ecc_cos, ecc_sin);
    double mean = E - ecc * std::sin(E) - kPi; // apocentre
    mean = std::remainder(mean, 2 * kPi);
    const double period_error = std::abs(mean) / (2 * kPi * 100);
    INFO("|dE/E| " << std::abs((e1 - e0) / e0) << ", period error " << period_error << ", " << h.block_steps()
                   << " block steps");
    CHECK(std::abs((e1 - e0) / e0) < 1e-8);
    CHECK(period_error < 1e-8);
}

TEST_CASE("hermite6 on a Plummer sphere: 1e-10 with fewer force evaluations than the 4th order", "[hermite6][slow]")
{
    auto run = [](int order, double eta, long long& evaluations) {
        ParticleSet p = make_plummer(1024, 11);
        HermiteCpuEngine engine(GravityParams{1.0, 1.0 / 64});
        Hermite h(engine, HermiteParams{eta, 0.01, 1.0 / 16, 0x1.0p-40, order});
        const double de = energy_error(h, p, 1.0);
        evaluations = h.particle_steps();
        return de;
    };
    long long n6 = 0, n4 = 0;
    const double de6 = run(6, 0.15, n6);
    const double de4 = run(4, 0.0004, n4);
    INFO("hermite6 eta 0.15: |dE/E| " << de6 << " with " << n6 << " particle steps; hermite eta 0.0004: " << de4
                                      << " with " << n4);
    CHECK(de6 <= 1e-10);
    CHECK(n6 < n4);
    CHECK(de6 <= de4); // and the 4th order is no more accurate for all its work
}

TEST_CASE("zero softening: two particles at one place are an error, not NaN", "[hermite6]")
{
    ParticleSet p = test::random_particles(10, 2);
    p.pos.col(3) = p.pos.col(7);
    for (const int order : {4, 6}) {
        INFO("order " << order);
        HermiteCpuEngine engine(GravityParams{1.0, 0.0});
        Hermite h(engine, HermiteParams{0.01, 0.01, 1.0 / 16, 0x1.0p-40, order});
        CHECK_THROWS_WITH(h.start(p), Catch::Contains("same position"));
    }
}
