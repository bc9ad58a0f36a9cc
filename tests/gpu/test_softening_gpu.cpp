// [gpu] Softening by particle type on the GPU engines: direct-gpu in every precision and tree-gpu
// (its cells' mean h, its own order, a leapfrog on the host pipeline) against the CPU engines.
#include <catch2/catch.hpp>

#include "core/diagnostics.hpp"
#include "core/force_errors.hpp"
#include "core/ic_models.hpp"
#include "core/particle_store.hpp"
#include "core/softening.hpp"
#include "gpu/direct_gpu.h"
#include "gpu/tree_gpu.h"
#include "integrators/leapfrog.hpp"
#include "support/test_support.hpp"
#include "support/tree_order_check.hpp"
#include "tree/direct_cpu.hpp"
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

TEST_CASE("tree-gpu softened by type: a leapfrog on the host pipeline follows tree-cpu's", "[gpu][tree][softening]")
{
    const ParticleSet start = typed(make_plummer(4000, 8));
    const GravityParams g = by_type(0.02, "halo=0.05,disk=0.01");
    TreeParams params{0.5, {32, 64}};
    params.lookahead = true;
    TreeGpuEngine gpu(params, g);
    CHECK(gpu.device_particles() == nullptr); // no resident steps by type
    params.lookahead = false;
    TreeCpuEngine cpu(params, g);
    ParticleSet a = start, b = start;
    ParticleStore sa(a), sb(b);
    Leapfrog la(gpu, 1.0 / 128), lb(cpu, 1.0 / 128);
    la.start(sa);
    lb.start(sb);
    for (int s = 0; s < 32; ++s) {
        la.step(sa);
        lb.step(sb);
    }
    sa.restore_order();
    sb.restore_order();
    CHECK(a.id == start.id);
    CHECK((a.pos - b.pos).norm() <= 1e-4 * b.pos.norm());
    const double e0 = compute_diagnostics(b, b.pot).total;
    CHECK(std::abs(compute_diagnostics(a, a.pot).total - e0) <= 1e-4 * std::abs(e0));
}
