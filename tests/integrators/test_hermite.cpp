// Hermite with block time steps on the CPU engine: the jerk against finite differences, a Kepler
// orbit over 100 periods against the analytic solution, energy on a Plummer sphere, and the
// block-step invariants.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "core/diagnostics.hpp"
#include "core/ic_models.hpp"
#include "integrators/block_schedule.hpp"
#include "integrators/hermite.hpp"
#include "support/test_support.hpp"
#include "tree/hermite_cpu.hpp"

using namespace grove;

namespace {

constexpr double kPi = 3.14159265358979323846;

HermiteState state_of(const ParticleSet& p)
{
    HermiteState s;
    s.x = p.pos;
    s.v = p.vel;
    s.a = Eigen::Matrix3Xd::Zero(3, p.pos.cols());
    s.j = s.a;
    s.t = Eigen::VectorXd::Zero(p.mass.size());
    s.mass = p.mass;
    return s;
}

// Relative orbit of a Kepler pair (G M = 1, a = 1, eccentricity e, pericentre at t = 0 on +x).
Eigen::Vector3d kepler_separation(double e, double t)
{
    const double mean = std::fmod(t, 2 * kPi);
    double E = mean;
    for (int k = 0; k < 50; ++k) E -= (E - e * std::sin(E) - mean) / (1 - e * std::cos(E));
    return {std::cos(E) - e, std::sqrt(1 - e * e) * std::sin(E), 0};
}

} // namespace

TEST_CASE("the Hermite jerk is the time derivative of the acceleration", "[hermite]")
{
    // Particles moving on straight lines x0 + v t: the jerk at t = 0 equals (a(h) - a(-h)) / 2h.
    const ParticleSet p = test::random_particles(200, 3);
    HermiteCpuEngine engine(GravityParams{1.0, 1e-2});
    HermiteState s = state_of(p);
    HermiteForces f0, fp, fm;
    const auto all = test::all_indices(p.size());
    engine.set_state(s);
    engine.evaluate(0.0, all, f0);
    const double h = 1e-5;
    engine.evaluate(h, all, fp); // a = j = 0 in the state: prediction is x0 + v t
    engine.evaluate(-h, all, fm);
    const Eigen::Matrix3Xd fd = (fp.acc - fm.acc) / (2 * h);
    CHECK((fd - f0.jerk).norm() < 1e-6 * f0.jerk.norm());
}

namespace {

struct KeplerResult {
    double energy_error, position_error;
};

// 100 periods of a Kepler pair (e = 0.5) with Hermite at accuracy eta.
KeplerResult kepler_100_periods(double eta)
{
    const double e = 0.5;
    ParticleSet p = test::kepler_pair(e);
    HermiteCpuEngine engine(GravityParams{1.0, 0.0});
    Hermite h(engine, HermiteParams{eta, eta, 1.0 / 8});
    h.start(p);
    const double e0 = compute_diagnostics(p, h.potentials()).total;
    const double t_end = 628.375; // 100.0 periods to 4e-5, a multiple of dt_max
    h.advance_to(t_end, p);
    const double e1 = compute_diagnostics(p, h.potentials()).total;
    const Eigen::Vector3d sep = p.pos.col(1) - p.pos.col(0);
    return {std::abs((e1 - e0) / e0), (sep - kepler_separation(e, t_end)).norm()};
}

} // namespace

TEST_CASE("Hermite follows a Kepler orbit (e = 0.5) for 100 periods, at fourth order", "[hermite]")
{
    const KeplerResult coarse = kepler_100_periods(0.01), fine = kepler_100_periods(0.0025);
    INFO("eta 0.01: |dE/E| " << coarse.energy_error << ", position " << coarse.position_error
                             << "; eta 0.0025: " << fine.energy_error << ", " << fine.position_error);
    // Measured at eta = 0.01: |dE/E| = 3.2e-5, separation off the analytic orbit by 0.023 (a
    // phase error) after 100 periods. Steps scale as sqrt(eta), so eta / 4 halves them; a
    // fourth-order scheme gains at least 2^4 = 16 (measured: 32 in energy, 35 in position; the
    // leading error terms partly cancel over a closed orbit).
    CHECK(coarse.energy_error < 5e-5);
    CHECK(coarse.position_error < 0.035);
    CHECK(coarse.energy_error / fine.energy_error > 13);
    CHECK(coarse.position_error / fine.position_error > 13);
}

TEST_CASE("Hermite on a Plummer sphere: energy, and the block-step invariants", "[hermite]")
{
    ParticleSet p = make_plummer(1024, 11);
    HermiteCpuEngine engine(GravityParams{1.0, 1.0 / 256});
    Hermite h(engine, HermiteParams{0.01, 0.01, 1.0 / 16});
    h.start(p);
    const double e0 = compute_diagnostics(p, h.potentials()).total;
    // Invariants over the first block steps: steps are powers of two, times are multiples of them;
    // each block step advances exactly the particles whose next time is the earliest (the
    // schedule's groups against a scan of all of them).
    for (int b = 0; b < 300; ++b) {
        const Eigen::VectorXd t0 = h.state().t, next = t0 + h.steps();
        const double earliest = next.minCoeff();
        REQUIRE(h.block_step() == earliest);
        for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(p.size()); ++i)
            REQUIRE(h.state().t[i] == (next[i] == earliest ? earliest : t0[i]));
        for (Eigen::Index i = 0; i < static_cast<Eigen::Index>(p.size()); ++i) {
            const double dt = h.steps()[i], l = std::log2(dt);
            REQUIRE(l == std::floor(l));
            REQUIRE(dt <= 1.0 / 16);
            REQUIRE(std::fmod(h.state().t[i], dt) == 0);
        }
    }
    h.advance_to(1.0, p);
    const double e1 = compute_diagnostics(p, h.potentials()).total;
    INFO("|dE/E| " << std::abs((e1 - e0) / e0) << " after " << h.block_steps() << " block steps, " << h.particle_steps()
                   << " particle steps");
    // Measured: 2.5e-9 (double precision, eta = 0.01); GRAPE-era codes reported ~1e-7.
    CHECK(std::abs((e1 - e0) / e0) < 5e-9);
    CHECK(p.time == 1.0);
}

TEST_CASE("the block schedule gives the particles at the earliest next time, in index order", "[hermite]")
{
    // Few and many particles per time (the comparison sort and the bitmap), times of a block
    // scheme: multiples of powers of two.
    for (const int n : {10, 3000, 40000}) {
        std::mt19937 rng(static_cast<unsigned>(n));
        std::uniform_int_distribution<int> level(0, 3), phase(0, 7);
        Eigen::VectorXd t(n), dt(n);
        for (int i = 0; i < n; ++i) {
            dt[i] = std::ldexp(1.0, -level(rng));
            t[i] = dt[i] * phase(rng);
        }
        BlockSchedule schedule;
        schedule.reset(t, dt);
        std::vector<std::int32_t> active;
        for (int step = 0; step < 20; ++step) {
            const Eigen::VectorXd next = t + dt;
            const double earliest = next.minCoeff();
            std::vector<std::int32_t> expected;
            for (int i = 0; i < n; ++i)
                if (next[i] == earliest) expected.push_back(i);
            INFO("n " << n << ", step " << step);
            REQUIRE(schedule.next_time() == earliest);
            REQUIRE(schedule.take_next(active) == earliest);
            REQUIRE(active == expected);
            for (const std::int32_t i : active) { // advance them, some to another step
                t[i] = earliest;
                dt[i] = std::ldexp(1.0, -level(rng));
                while (std::fmod(t[i], dt[i]) != 0) dt[i] /= 2;
                schedule.put(i, t[i] + dt[i]);
            }
        }
    }
    BlockSchedule empty;
    CHECK(empty.next_time() == std::numeric_limits<double>::infinity());
    CHECK_THROWS_WITH(empty.put(0, std::nan("")), Catch::Contains("no finite next time"));
}
