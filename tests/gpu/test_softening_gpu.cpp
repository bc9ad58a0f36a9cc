// [gpu] Softening by particle type on the GPU engines: direct-gpu in every precision and tree-gpu
// (its cells' mean h, its own order, a leapfrog on the host pipeline) against the CPU engines.
#include <catch2/catch.hpp>

#include "core/diagnostics.hpp"
#include "core/force_errors.hpp"
#include "core/ic_models.hpp"
#include "core/particle_store.hpp"
#include "core/softening.hpp"
#include "gpu/direct_gpu.h"
#include "gpu/hermite_gpu.h"
#include "gpu/tree_gpu.h"
#include "integrators/leapfrog.hpp"
#include "support/test_support.hpp"
#include "support/tree_order_check.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/hermite_cpu.hpp"
#include "tree/tree_cpu.hpp"

using namespace grove;

namespace {

// Types by turns, so that every cell mixes the three lengths.
ParticleSet typed(ParticleSet p)
{
    for (std::size_t i = 0; i < p.size(); ++i) p.type[i] = static_cast<std::uint8_t>(1 + i % 3);
    return p;
}

GravityParams by_type(double eps, const std::string& lengths)
{
    GravityParams g{1.0, eps};
    parse_softening_types(lengths, g, "--eps-type");
    return g;
}

} // namespace

TEST_CASE("direct-gpu softened by type equals direct-cpu in every precision", "[gpu][direct][softening]")
{
    const ParticleSet p = typed(test::random_particles(5003, 41));
    const GravityParams g = by_type(0.01, "halo=0.03,disk=0.004,bulge=0.001");
    Forces ref, one;
    DirectCpuEngine(g).compute(p.pos, p.mass, p.type, ref);
    DirectCpuEngine(GravityParams{1.0, 0.01}).compute(p.pos, p.mass, one);
    REQUIRE((one.acc - ref.acc).norm() > 1e-3 * ref.acc.norm()); // the lengths matter here
    const struct {
        Precision precision;
        double bound;
    } cases[] = {{Precision::Float, 1e-5}, {Precision::Mixed, 1e-6}, {Precision::Double, 1e-12}};
    for (const auto& c : cases) {
        INFO("precision " << precision_name(c.precision));
        DirectGpuEngine engine(g, c.precision);
        Forces f;
        engine.compute(p.pos, p.mass, p.type, f);
        CHECK(percentiles(relative_errors(f.acc, ref.acc), {50})[0] <= c.bound);
        CHECK((f.pot - ref.pot).norm() <= 10 * c.bound * ref.pot.norm());
        // Newton's third law pair by pair: the total force vanishes to the precision's rounding.
        Eigen::Vector3d total = Eigen::Vector3d::Zero();
        double scale = 0;
        for (Eigen::Index i = 0; i < f.acc.cols(); ++i) {
            total += p.mass[i] * f.acc.col(i);
            scale += p.mass[i] * f.acc.col(i).norm();
        }
        CHECK(total.norm() <= (c.precision == Precision::Double ? 1e-13 : 1e-6) * scale);
        Forces some;
        engine.compute_subset(p.pos, p.mass, p.type, {7, 4000}, some);
        CHECK((some.acc.col(1) - f.acc.col(4000)).norm() <= 1e-6 * f.acc.col(4000).norm());
        CHECK_THROWS_WITH(engine.compute(p.pos, p.mass, f), Catch::Contains("no types"));
    }
    // A type of length 0: its coincident pairs are an error, as with eps = 0, and others are not.
    ParticleSet q = typed(test::random_particles(64, 42));
    q.pos.col(3) = q.pos.col(6); // both type 1
    Forces f;
    CHECK_NOTHROW(DirectGpuEngine(by_type(0, "halo=0.01"), Precision::Double).compute(q.pos, q.mass, q.type, f));
    CHECK(f.acc.allFinite());
    CHECK_THROWS_WITH(DirectGpuEngine(by_type(0.01, "halo=0"), Precision::Double).compute(q.pos, q.mass, q.type, f),
                      Catch::Contains("same position"));
}

TEST_CASE("tree-gpu softened by type equals tree-cpu within float rounding", "[gpu][tree][softening]")
{
    const ParticleSet p = typed(test::random_particles(30000, 3));
    const int ncrit = GENERATE(8, 300);
    const TreeParams params{0.6, 64, ncrit};
    const GravityParams g = by_type(0.001, "halo=0.003,disk=0.0005");
    Forces cpu, gpu;
    TreeCpuEngine(params, g).compute(p.pos, p.mass, p.type, cpu);
    TreeGpuEngine engine(params, g);
    engine.compute(p.pos, p.mass, p.type, gpu);
    const std::vector<double> qa = percentiles(relative_errors(gpu.acc, cpu.acc), {50, 99.9});
    const std::vector<double> qp = percentiles(relative_errors(gpu.pot, cpu.pot), {50, 99.9});
    INFO("ncrit " << ncrit << ": acc p50 " << qa[0] << " p99.9 " << qa[1] << "; pot p50 " << qp[0] << " p99.9 "
                  << qp[1]);
    CHECK(qa[0] < 2e-6);
    CHECK(qa[1] < 1e-4);
    CHECK(qp[0] < 2e-6);
    CHECK(qp[1] < 1e-4);
    // And the direct sum's pair rule, at the tree's usual error.
    Forces ref;
    DirectGpuEngine(g, Precision::Double).compute(p.pos, p.mass, p.type, ref);
    CHECK(percentiles(relative_errors(gpu.acc, ref.acc), {50})[0] < 2e-3);
    CHECK_THROWS_WITH(engine.compute(p.pos, p.mass, gpu), Catch::Contains("no types"));
}

TEST_CASE("tree-gpu softened by type: its own order carries the types along", "[gpu][tree][softening]")
{
    test::check_forces_in_own_order(typed(test::clustered_particles(20000, 13)), [](const TreeParams& params) {
        return std::make_unique<TreeGpuEngine>(params, by_type(0.01, "halo=0.02,disk=0.005,bulge=0.002"));
    });
}

TEST_CASE("tree-gpu softened by type: resident and host-pipeline leapfrogs follow tree-cpu's", "[gpu][tree][softening]")
{
    const ParticleSet start = typed(make_plummer(4000, 8));
    const GravityParams g = by_type(0.02, "halo=0.05,disk=0.01");
    TreeParams params{0.5, {32, 64}};
    params.lookahead = true;
    TreeGpuEngine resident(params, g);
    REQUIRE(resident.device_particles() != nullptr);
    params.resident = false;
    TreeGpuEngine host(params, g);
    REQUIRE(host.device_particles() == nullptr);
    params.lookahead = false;
    TreeCpuEngine cpu(params, g);
    ParticleSet a = start, b = start, c = start;
    ParticleStore sa(a), sb(b), sc(c);
    Leapfrog la(resident, 1.0 / 128), lb(host, 1.0 / 128), lc(cpu, 1.0 / 128);
    la.start(sa);
    lb.start(sb);
    lc.start(sc);
    for (int s = 0; s < 32; ++s) {
        la.step(sa);
        lb.step(sb);
        lc.step(sc);
    }
    CHECK(la.is_resident());
    CHECK(sa.on_device());
    CHECK_FALSE(lb.is_resident());
    sa.restore_order();
    sb.restore_order();
    sc.restore_order();
    CHECK(a.id == start.id);
    const double e0 = compute_diagnostics(c, c.pot).total;
    for (const ParticleSet* q : {&a, &b}) {
        CHECK((q->pos - c.pos).norm() <= 1e-4 * c.pos.norm());
        CHECK((q->pot - c.pot).norm() <= 1e-4 * c.pot.norm());
        CHECK(std::abs(compute_diagnostics(*q, q->pot).total - e0) <= 1e-4 * std::abs(e0));
    }
    // The resident steps' last forces have the tree's usual error under the pair rule.
    Forces ref;
    DirectGpuEngine(g, Precision::Double).compute(a.pos, a.mass, a.type, ref);
    CHECK(percentiles(relative_errors(a.acc, ref.acc), {50})[0] < 2e-3);
    CHECK(percentiles(relative_errors(a.pot, ref.pot), {50})[0] < 2e-4);
}

TEST_CASE("Hermite on direct-gpu softened by type equals direct-cpu's, 4th and 6th order", "[gpu][hermite][softening]")
{
    const ParticleSet p = typed(test::random_particles(4000, 51));
    const GravityParams g = by_type(0.01, "halo=0.03,disk=0.004,bulge=0.001");
    HermiteState s;
    s.x = p.pos;
    s.v = p.vel;
    s.a = Eigen::Matrix3Xd::Random(3, p.pos.cols());
    s.j = Eigen::Matrix3Xd::Random(3, p.pos.cols());
    s.t = Eigen::VectorXd::Zero(p.pos.cols());
    s.mass = p.mass;
    s.type = p.type;
    std::vector<std::int32_t> active;
    for (std::int32_t i = 0; i < 4000; i += 3) active.push_back(i);
    for (const bool sixth : {false, true}) {
        if (sixth) {
            s.s = Eigen::Matrix3Xd::Random(3, p.pos.cols()) * 0.1;
            s.c = Eigen::Matrix3Xd::Random(3, p.pos.cols()) * 0.01;
        }
        HermiteCpuEngine cpu(g);
        cpu.set_state(s);
        HermiteForces ref;
        cpu.evaluate(0.01, active, ref);
        for (const Precision prec : {Precision::Double, Precision::Mixed}) {
            if (sixth && prec == Precision::Mixed) continue; // hermite6 runs in double
            INFO((sixth ? "6th" : "4th") << " order, " << precision_name(prec));
            HermiteGpuEngine gpu(g, prec);
            gpu.set_state(s);
            HermiteForces f;
            gpu.evaluate(0.01, active, f);
            const double bound = prec == Precision::Double ? 1e-12 : 1e-5;
            CHECK(percentiles(relative_errors(f.acc, ref.acc), {50})[0] < bound);
            CHECK(percentiles(relative_errors(f.jerk, ref.jerk), {50})[0] < 10 * bound);
            CHECK(percentiles(relative_errors(f.pot, ref.pot), {50})[0] < bound);
            if (sixth) CHECK((f.snap - ref.snap).norm() <= 1e-11 * ref.snap.norm());
        }
    }
    // One softening for the engine: the by-type sums differ from it.
    HermiteGpuEngine one(GravityParams{1.0, 0.01}, Precision::Double);
    HermiteState plain = s;
    plain.s.resize(3, 0);
    plain.c.resize(3, 0);
    one.set_state(plain);
    HermiteForces a, b;
    one.evaluate(0.01, active, a);
    HermiteGpuEngine typed_engine(g, Precision::Double);
    typed_engine.set_state(plain);
    typed_engine.evaluate(0.01, active, b);
    CHECK((a.acc - b.acc).norm() > 1e-3 * b.acc.norm());
    plain.type.clear();
    CHECK_THROWS_WITH(typed_engine.set_state(plain), Catch::Contains("no types"));
}
