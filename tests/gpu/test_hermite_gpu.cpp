// [gpu] The Hermite engine on the GPU against the CPU double engine: acceleration, jerk and
// potential with on-device prediction, active subsets, j-splits, eps = 0, finite differences,
// and a short Hermite run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "core/diagnostics.hpp"
#include "core/force_errors.hpp"
#include "core/ic_models.hpp"
#include "core/particle_store.hpp"
#include "gpu/hermite_gpu.h"
#include "gpu/tree_gpu.h"
#include "integrators/hermite.hpp"
#include "integrators/leapfrog.hpp"
#include "support/test_support.hpp"
#include "tree/hermite_cpu.hpp"
#include "tree/tree_cpu.hpp"

using namespace grove;

namespace {

// A state with nonzero a, j and times t_i <= 0.01 so that the prediction matters.
HermiteState random_state(const ParticleSet& p, std::uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1), ut(0, 0.01);
    HermiteState s;
    const auto n = static_cast<Eigen::Index>(p.size());
    s.x = p.pos;
    s.v = p.vel;
    s.a.resize(3, n);
    s.j.resize(3, n);
    s.t.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        s.a.col(i) << u(rng), u(rng), u(rng);
        s.j.col(i) << u(rng), u(rng), u(rng);
        s.t[i] = ut(rng);
    }
    s.mass = p.mass;
    return s;
}

std::vector<std::int32_t> first(std::size_t k)
{
    std::vector<std::int32_t> a(k);
    for (std::size_t i = 0; i < k; ++i) a[i] = static_cast<std::int32_t>(i);
    return a;
}

double max_of(std::vector<double> v)
{
    return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

} // namespace

TEST_CASE("hermite on the GPU matches the CPU double engine", "[gpu][hermite]")
{
    const std::size_t n = GENERATE(1, 2, 31, 32, 33, 1000, 100003);
    const bool clustered = GENERATE(false, true);
    const ParticleSet p = clustered ? test::clustered_particles(n, 8) : test::random_particles(n, 8);
    const HermiteState s = random_state(p, 3);
    const GravityParams gravity{1.0, 1e-3};
    const auto active = first(std::min<std::size_t>(n, 1000));
    HermiteCpuEngine cpu(gravity);
    cpu.set_state(s);
    HermiteForces ref;
    cpu.evaluate(0.02, active, ref);
    for (const Precision prec : {Precision::Double, Precision::Mixed}) {
        HermiteGpuEngine gpu(gravity, prec);
        gpu.set_state(s);
        HermiteForces f;
        gpu.evaluate(0.02, active, f);
        const auto ea = relative_errors(f.acc, ref.acc), ej = relative_errors(f.jerk, ref.jerk);
        INFO("n " << n << " clustered " << clustered << " " << precision_name(prec) << ": acc median "
                  << percentiles(ea, {50})[0] << " max " << max_of(ea) << "; jerk median " << percentiles(ej, {50})[0]);
        if (n == 1) {
            CHECK(f.acc.norm() == 0);
            continue;
        }
        if (prec == Precision::Double) {
            CHECK(max_of(ea) < 1e-12);
            CHECK(percentiles(ej, {50})[0] < 1e-12);
            CHECK(max_of(relative_errors(f.pot, ref.pot)) < 1e-12);
        } else {
            CHECK(percentiles(ea, {50})[0] < 1e-6);
            CHECK(percentiles(ej, {50})[0] < 1e-5);
            CHECK(percentiles(relative_errors(f.pot, ref.pot), {50})[0] < 1e-6);
        }
    }
}

TEST_CASE("hermite on the GPU: subsets and j-splits and updates and eps = 0", "[gpu][hermite][hermite-small]")
{
    const ParticleSet p = test::random_particles(5000, 12);
    HermiteState s = random_state(p, 5);
    HermiteGpuEngine gpu(GravityParams{1.0, 0.0}, Precision::Double);
    gpu.set_state(s);
    HermiteForces full, sub, split;
    gpu.evaluate(0.02, first(5000), full);
    const std::vector<std::int32_t> some = {4999, 17, 2500, 0};
    gpu.evaluate(0.02, some, sub);
    for (std::size_t k = 0; k < some.size(); ++k)
        CHECK((sub.acc.col(static_cast<Eigen::Index>(k)) - full.acc.col(some[k])).norm() <=
              1e-13 * full.acc.col(some[k]).norm());
    gpu.set_splits(7);
    gpu.evaluate(0.02, some, split);
    CHECK(gpu.last_splits() == 7);
    CHECK((split.jerk - sub.jerk).norm() <= 1e-12 * sub.jerk.norm());
    // An update of a few particles equals a fresh upload of the whole state.
    s.x.col(17) += Eigen::Vector3d(0.1, 0, 0);
    s.t[17] = 0.015;
    gpu.update(s, {17});
    HermiteGpuEngine fresh(GravityParams{1.0, 0.0}, Precision::Double);
    fresh.set_state(s);
    HermiteForces a, b;
    gpu.set_splits(0);
    gpu.evaluate(0.02, some, a);
    fresh.evaluate(0.02, some, b);
    CHECK((a.acc - b.acc).norm() <= 1e-13 * b.acc.norm());
    // Coincident particles with eps = 0: an error naming the first pair (by target, then source),
    // in both precisions and at 6th order, never a NaN or a pair left out in silence; massless
    // particles on top of each other are no error.
    ParticleSet c = test::random_particles(300, 2);
    for (Eigen::Index i = 40; i < 100; ++i) c.pos.col(i) = Eigen::Vector3d(0.1, 0.2, 0.3);
    HermiteState cs = random_state(c, 1);
    cs.t.setZero();
    cs.a.setZero();
    cs.j.setZero();
    for (const Precision prec : {Precision::Double, Precision::Mixed}) {
        HermiteGpuEngine g(GravityParams{1.0, 0.0}, prec);
        g.set_state(cs);
        HermiteForces cf;
        CHECK_THROWS_WITH(g.evaluate(0.0, first(300), cf),
                          Catch::Contains("particles 40 and 41 are at the same position"));
        CHECK_THROWS_WITH(g.evaluate(0.0, {99, 7}, cf), Catch::Contains("particles 99 and 40"));
        g.evaluate(0.0, {7, 120}, cf); // targets away from the clump
        CHECK(cf.acc.allFinite());
    }
    HermiteState massless = cs;
    for (Eigen::Index i = 40; i < 100; ++i) massless.mass[i] = 0;
    for (const Precision prec : {Precision::Double, Precision::Mixed}) {
        HermiteGpuEngine g(GravityParams{1.0, 0.0}, prec);
        g.set_state(massless);
        HermiteForces cf;
        g.evaluate(0.0, first(300), cf);
        CHECK(cf.acc.allFinite());
        CHECK(cf.jerk.allFinite());
        CHECK(cf.pot.allFinite());
    }
    HermiteState six = cs;
    six.s = Eigen::Matrix3Xd::Zero(3, six.x.cols());
    six.c = six.s;
    HermiteGpuEngine g6(GravityParams{1.0, 0.0}, Precision::Double);
    g6.set_state(six);
    HermiteForces cf6;
    CHECK_THROWS_WITH(g6.evaluate(0.0, first(300), cf6), Catch::Contains("particles 40 and 41"));
}

TEST_CASE("a Hermite run on the GPU follows the CPU run", "[gpu][hermite]")
{
    ParticleSet a = make_plummer(1024, 21), b = a;
    HermiteCpuEngine cpu(GravityParams{1.0, 1.0 / 256});
    HermiteGpuEngine gpu(GravityParams{1.0, 1.0 / 256}, Precision::Double);
    Hermite ha(cpu, HermiteParams{}), hb(gpu, HermiteParams{});
    ha.start(a);
    hb.start(b);
    ha.advance_to(0.125, a);
    hb.advance_to(0.125, b);
    INFO("block steps " << ha.block_steps() << " / " << hb.block_steps());
    CHECK(ha.block_steps() == hb.block_steps());
    CHECK((a.pos - b.pos).norm() < 1e-9 * a.pos.norm());
    const double ea = compute_diagnostics(a, ha.potentials()).total;
    const double eb = compute_diagnostics(b, hb.potentials()).total;
    CHECK(eb == Approx(ea).epsilon(1e-10));
}

TEST_CASE("a leapfrog run on tree-gpu follows the same run on tree-cpu", "[gpu][leapfrog]")
{
    // Over a few steps the trajectories differ by the engines' force differences (float against
    // double, ~1e-6 relative), not more.
    ParticleSet a = make_plummer(4096, 5), b = a;
    TreeCpuEngine cpu(TreeParams{0.5, {64, 64}}, GravityParams{1.0, 0.01});
    TreeGpuEngine gpu(TreeParams{0.5, {64, 64}}, GravityParams{1.0, 0.01});
    Leapfrog la(cpu, 1e-3), lb(gpu, 1e-3);
    ParticleStore sa(a), sb(b);
    la.start(sa);
    lb.start(sb);
    for (int s = 0; s < 20; ++s) {
        la.step(sa);
        lb.step(sb);
    }
    sa.restore_order(); // each store keeps its engine's order between outputs
    sb.restore_order();
    const double moved = (a.pos - make_plummer(4096, 5).pos).norm();
    INFO("position difference " << (a.pos - b.pos).norm() << " of a displacement " << moved);
    CHECK((a.pos - b.pos).norm() < 1e-4 * moved);
    CHECK((a.vel - b.vel).norm() < 1e-5 * a.vel.norm());
}

TEST_CASE("hermite6 on the GPU: acceleration, jerk and snap equal the CPU engine's", "[gpu][hermite6]")
{
    const ParticleSet p = test::random_particles(6000, 21);
    HermiteState s = random_state(p, 22);
    s.s = Eigen::Matrix3Xd::Random(3, s.x.cols()) * 0.1;
    s.c = Eigen::Matrix3Xd::Random(3, s.x.cols()) * 0.01;
    HermiteCpuEngine cpu(GravityParams{1.0, 0.01});
    HermiteGpuEngine gpu(GravityParams{1.0, 0.01}, Precision::Double);
    cpu.set_state(s);
    gpu.set_state(s);
    for (const std::size_t count : {std::size_t{7}, p.size()}) {
        INFO(count << " active");
        std::vector<std::int32_t> active(count);
        for (std::size_t k = 0; k < count; ++k) active[k] = static_cast<std::int32_t>((k * 37) % p.size());
        HermiteForces a, b;
        cpu.evaluate(0.02, active, a);
        gpu.evaluate(0.02, active, b);
        REQUIRE(b.snap.cols() == a.snap.cols());
        CHECK((b.acc - a.acc).norm() <= 1e-12 * a.acc.norm());
        CHECK((b.jerk - a.jerk).norm() <= 1e-12 * a.jerk.norm());
        CHECK((b.snap - a.snap).norm() <= 1e-11 * a.snap.norm());
        CHECK((b.pot - a.pot).norm() <= 1e-12 * a.pot.norm());
    }
    HermiteGpuEngine mixed(GravityParams{1.0, 0.01}, Precision::Mixed);
    CHECK_THROWS_WITH(mixed.set_state(s), Catch::Contains("double precision"));
}
