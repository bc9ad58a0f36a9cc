// Leapfrog in process: second-order convergence and time reversibility on a Kepler orbit.
#include <catch2/catch.hpp>

#include <cmath>

#include "integrators/leapfrog.hpp"
#include "tree/direct_cpu.hpp"

using namespace grove;

namespace {

// Two bodies, masses 0.5 each, G = 1, relative orbit with semi-major axis 1 and eccentricity e,
// started at pericentre; the period is 2 pi.
ParticleSet kepler(double e)
{
    ParticleSet p;
    p.resize(2);
    p.mass << 0.5, 0.5;
    const double rp = 1 - e, vp = std::sqrt((1 + e) / (1 - e)); // G (m1 + m2) = 1, a = 1
    p.pos.col(0) << -rp / 2, 0, 0;
    p.pos.col(1) << rp / 2, 0, 0;
    p.vel.col(0) << 0, -vp / 2, 0;
    p.vel.col(1) << 0, vp / 2, 0;
    return p;
}

double separation_error_after_one_period(double dt)
{
    ParticleSet p = kepler(0.5);
    const ParticleSet start = p;
    DirectCpuEngine engine(GravityParams{1.0, 0.0});
    Leapfrog lf(engine, dt);
    lf.start(p);
    const auto steps = std::lround(2 * 3.14159265358979323846 / dt);
    for (long s = 0; s < steps; ++s) lf.step(p);
    return (p.pos.col(1) - p.pos.col(0) - (start.pos.col(1) - start.pos.col(0))).norm();
}

} // namespace

TEST_CASE("leapfrog converges at second order on a Kepler orbit", "[integrator]")
{
    // dt = 2 pi / 2000 and half of it: the error after one period falls by about 4.
    const double e1 = separation_error_after_one_period(2 * 3.14159265358979323846 / 2000);
    const double e2 = separation_error_after_one_period(2 * 3.14159265358979323846 / 4000);
    INFO("errors " << e1 << " " << e2);
    CHECK(e1 / e2 == Approx(4.0).epsilon(0.1));
    CHECK(e1 < 1e-2);
}

TEST_CASE("leapfrog is time-reversible", "[integrator]")
{
    ParticleSet p = kepler(0.5);
    const ParticleSet start = p;
    DirectCpuEngine engine(GravityParams{1.0, 0.0});
    Leapfrog lf(engine, 1e-3);
    lf.start(p);
    for (int s = 0; s < 3000; ++s) lf.step(p);
    p.vel = -p.vel;
    Leapfrog back(engine, 1e-3);
    back.start(p);
    for (int s = 0; s < 3000; ++s) back.step(p);
    CHECK((p.pos - start.pos).norm() < 1e-10);
    CHECK((p.vel + start.vel).norm() < 1e-10);
    CHECK_THROWS_WITH(Leapfrog(engine, -1), Catch::Contains("--dt"));
}
