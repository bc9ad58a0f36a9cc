// The leapfrog with hierarchical time steps: one bin is the shared leapfrog bit for bit; two
// particles in different bins follow the scheme's sequence of kicks and drifts; an eccentric
// Kepler orbit in bins keeps the shared step's accuracy with fewer force evaluations.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>

#include "core/galaxy_model.hpp"
#include "core/ic_models.hpp"
#include "core/particle_store.hpp"
#include "core/softening.hpp"
#include "integrators/block_leapfrog.hpp"
#include "integrators/leapfrog.hpp"
#include "support/test_support.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/tree_cpu.hpp"

using namespace grove;

namespace {

constexpr double kPi = 3.14159265358979323846;

double separation_error(const ParticleSet& p, const ParticleSet& start)
{
    return (p.pos.col(1) - p.pos.col(0) - (start.pos.col(1) - start.pos.col(0))).norm();
}

} // namespace

TEST_CASE("block time steps: every particle in bin 0 is the shared leapfrog, bit for bit", "[integrator][bins]")
{
    const ParticleSet start = make_plummer(500, 3);
    const GravityParams g{1.0, 0.01};
    DirectCpuEngine direct(g);
    TreeCpuEngine tree(TreeParams{}, g);
    for (ForceEngine* engine : {static_cast<ForceEngine*>(&direct), static_cast<ForceEngine*>(&tree)}) {
        INFO(engine->name());
        ParticleSet a = start, b = start;
        BlockLeapfrog block(*engine, g, 1.0 / 64, 1e6); // eta so large that every step wants dt_max
        block.start(a);
        ParticleStore store(b, false);
        Leapfrog shared(*engine, 1.0 / 64);
        shared.start(store);
        for (int s = 0; s < 10; ++s) {
            block.advance(a);
            shared.step(store);
        }
        CHECK(block.particles_per_bin()[0] == 500);
        CHECK(a.pos == b.pos);
        CHECK(a.vel == b.vel);
        CHECK(a.acc == b.acc);
        CHECK(a.time == b.time);
        CHECK(block.ticks_stepped() == 10);
    }
}

TEST_CASE("block time steps: two particles in two bins follow the scheme's kicks and drifts", "[integrator][bins]")
{
    // A light particle close to a heavy one, each softened by its type: the light one (type 3,
    // small eps) steps by dt_max / 2, the heavy one (type 1, large eps) by dt_max.
    ParticleSet p;
    p.resize(2);
    p.mass << 1.0, 1e-3;
    p.type = {1, 3};
    p.pos.col(0) << 0, 0, 0;
    p.pos.col(1) << 1, 0, 0;
    p.vel.col(1) << 0, 1, 0;
    GravityParams g{1.0, 0.1};
    parse_softening_types("halo=0.5,bulge=0.01", g, "--eps-type");
    const double dt_max = 0.05, eta = 0.06;
    DirectCpuEngine engine(g);
    BlockLeapfrog block(engine, g, dt_max, eta);
    ParticleSet q = p;
    block.start(q);
    block.advance(q);
    REQUIRE(int(block.bins()[0]) == 0);
    REQUIRE(int(block.bins()[1]) == 1);
    CHECK(block.ticks_stepped() == 2);
    CHECK(block.forces_computed() == 2 + 1 + 2); // start, the light one at dt_max / 2, both at dt_max

    // The same by hand: the pair's acceleration with eps^2 = (0.5^2 + 0.01^2) / 2.
    const double e2 = (0.25 + 1e-4) / 2;
    const auto acc = [&](const Eigen::Matrix3Xd& x, int i) {
        const Eigen::Vector3d d = x.col(1 - i) - x.col(i);
        return Eigen::Vector3d(p.mass[1 - i] * d / std::pow(d.squaredNorm() + e2, 1.5));
    };
    Eigen::Matrix3Xd x = p.pos, v = p.vel;
    const double h0 = dt_max / 2, h1 = dt_max / 4;
    v.col(0) += h0 * acc(x, 0); // opening kicks, each by half its step
    v.col(1) += h1 * acc(x, 1);
    x += (dt_max / 2) * v;      // drift to dt_max / 2
    v.col(1) += h1 * acc(x, 1); // the light one closes its step and opens the next
    v.col(1) += h1 * acc(x, 1);
    x += (dt_max / 2) * v; // drift to dt_max
    const Eigen::Vector3d a0 = acc(x, 0), a1 = acc(x, 1);
    v.col(0) += h0 * a0; // both close
    v.col(1) += h1 * a1;
    CHECK((q.pos - x).norm() <= 1e-14 * x.norm());
    CHECK((q.vel - v).norm() <= 1e-14 * v.norm());
    CHECK(q.time == Approx(dt_max).epsilon(1e-15));
}

TEST_CASE("block time steps: an eccentric Kepler orbit in bins, as accurate as the shared step at fewer forces",
          "[integrator][bins]")
{
    const ParticleSet start = test::kepler_pair(0.9);
    const GravityParams g{1.0, 1e-3};
    DirectCpuEngine engine(g);
    const double dt_max = 2 * kPi / 64; // one period in 64 dt_max
    const auto shared_run = [&](int substeps) {
        ParticleSet q = start;
        ParticleStore store(q, false);
        Leapfrog shared(engine, dt_max / substeps);
        shared.start(store);
        for (int s = 0; s < 64 * substeps; ++s) shared.step(store);
        return q;
    };
    const auto block_run = [&](double eta, ParticleSet& p) {
        p = start;
        auto run = std::make_unique<BlockLeapfrog>(engine, g, dt_max, eta);
        run->start(p);
        for (int s = 0; s < 64; ++s) run->advance(p);
        return run;
    };
    const ParticleSet reference = shared_run(4096); // the softened orbit, to well below the errors here
    ParticleSet p, r;
    const auto block = block_run(0.005, p);
    const auto finer = block_run(0.005 / 4, r);
    const ParticleSet shared = shared_run(256); // the block run's shortest step, everywhere
    const double e_block = separation_error(p, reference), e_finer = separation_error(r, reference);
    const double e_shared = separation_error(shared, reference);
    int shortest = 0;
    const auto bins = block->particles_per_bin();
    for (int k = 0; k <= kMaxBin; ++k)
        if (bins[static_cast<std::size_t>(k)] > 0) shortest = k;
    INFO("block: error " << e_block << " in " << block->ticks_stepped() << " ticks, " << block->forces_computed()
                         << " forces, shortest bin at the end " << shortest << "; eta / 4: " << e_finer << " in "
                         << finer->forces_computed() << " forces; shared at dt_max / 256: " << e_shared);
    // The shared step's accuracy within a few times, at a fraction of its forces.
    CHECK(e_block < 4 * e_shared);
    CHECK(block->forces_computed() < 2 * 64 * 256 / 4);
    // Every step a quarter (eta / 4: steps halved, as dt ~ sqrt(eta)) cuts the error by about 4.
    CHECK(e_block / e_finer > 2.5);
}

TEST_CASE("block time steps on a store without a device are those on its particle set, bit for bit",
          "[integrator][bins]")
{
    const ParticleSet start = make_plummer(300, 4);
    const GravityParams g{1.0, 0.02};
    TreeCpuEngine engine(TreeParams{0.6, {8, 16}}, g);
    ParticleSet a = start, b = start;
    BlockLeapfrog on_set(engine, g, 1.0 / 32, 0.02), on_store(engine, g, 1.0 / 32, 0.02);
    on_set.start(a);
    on_store.start(b);
    ParticleStore store(b, false);
    for (int k = 0; k < 3; ++k) {
        on_set.advance(a);
        on_store.advance(store);
    }
    CHECK(on_set.ticks_stepped() > 3); // several bins
    CHECK(on_set.particles_per_bin() == on_store.particles_per_bin());
    CHECK(a.pos == store.host().pos);
    CHECK(a.vel == b.vel);
    CHECK(a.time == b.time);
}

TEST_CASE("block time steps count each kind of tick: how many, the particles due, the time", "[integrator][bins]")
{
    const ParticleSet start = make_plummer(300, 4);
    const GravityParams g{1.0, 0.02};
    TreeCpuEngine engine(TreeParams{0.6, {8, 16}}, g);
    ParticleSet p = start;
    BlockLeapfrog block(engine, g, 1.0 / 32, 0.02);
    block.start(p);
    for (int k = 0; k < 3; ++k) block.advance(p);
    long long ticks = 0, due = 0;
    int kinds = 0;
    for (const auto& c : block.tick_costs()) {
        ticks += c.ticks;
        due += c.due;
        kinds += c.ticks > 0;
        CHECK(c.seconds >= 0);
    }
    CHECK(block.tick_costs()[0].ticks == 3); // one tick per dt_max has every bin due
    CHECK(block.tick_costs()[0].due == 3 * 300);
    CHECK(kinds > 1);
    CHECK(ticks == block.ticks_stepped());
    CHECK(due == block.forces_computed() - 300); // start() computed every particle's forces
}

TEST_CASE("block time steps: what they refuse", "[integrator][bins]")
{
    DirectCpuEngine engine(GravityParams{1.0, 0.01});
    CHECK_THROWS_WITH(BlockLeapfrog(engine, GravityParams{1.0, 0.01}, 0.0, 0.02), Catch::Contains("--dt-max"));
    CHECK_THROWS_WITH(BlockLeapfrog(engine, GravityParams{1.0, 0.01}, 0.01, -1), Catch::Contains("--eta"));
    CHECK_THROWS_WITH(BlockLeapfrog(engine, GravityParams{1.0, 0.0}, 0.01, 0.02), Catch::Contains("softening > 0"));
    CHECK_THROWS_WITH(BlockLeapfrog(engine, GravityParams{1.0, 0.01}, 0.01, 0.02, -0.1), Catch::Contains("--eta-dyn"));
    CHECK_THROWS_WITH(BlockLeapfrog(engine, GravityParams{1.0, 0.01}, 0.01, 0.02, std::nan("")),
                      Catch::Contains("--eta-dyn"));
    BlockLeapfrog block(engine, GravityParams{1.0, 0.01}, 0.01, 0.02);
    ParticleSet p = test::kepler_pair(0.5);
    CHECK_THROWS_WITH(block.advance(p), Catch::Contains("before start"));
}

TEST_CASE("tree-cpu forces on a subset are compute()'s for those particles, bit for bit", "[tree][bins]")
{
    // The groups that hold a target walk as they do for all particles, so the targets' lists and
    // their errors are the shared step's (a box of the targets alone would accept cells the
    // criterion allows for them but the whole group's walk opens: measured, 1.4x the median error).
    const ParticleSet p = make_plummer(5000, 17);
    std::vector<std::int32_t> targets;
    for (std::int32_t i = 0; i < 5000; i += 7) targets.push_back(i);
    targets.push_back(4999);
    for (const bool by_type : {false, true}) {
        INFO("by type " << by_type);
        GravityParams g{1.0, 0.01};
        ParticleSet q = p;
        if (by_type) {
            parse_softening_types("halo=0.02,disk=0.005", g, "--eps-type");
            for (std::size_t i = 0; i < q.size(); ++i) q.type[i] = static_cast<std::uint8_t>(1 + i % 2);
        }
        TreeCpuEngine all(TreeParams{}, g), some(TreeParams{}, g);
        REQUIRE(some.computes_subsets());
        Forces f, s;
        all.compute(q.pos, q.mass, q.type, f);
        some.compute_subset(q.pos, q.mass, q.type, targets, s);
        REQUIRE(s.acc.cols() == static_cast<Eigen::Index>(targets.size()));
        for (std::size_t k = 0; k < targets.size(); ++k) {
            REQUIRE(s.acc.col(static_cast<Eigen::Index>(k)) == f.acc.col(targets[k]));
            REQUIRE(s.pot[static_cast<Eigen::Index>(k)] == f.pot[targets[k]]);
        }
        CHECK_THROWS_AS(some.compute_subset(q.pos, q.mass, q.type, {5000}, s), std::out_of_range);
    }
    // A block run on tree-cpu computes only the due particles' forces.
    ParticleSet r = make_plummer(2000, 18);
    const GravityParams g{1.0, 0.01};
    TreeCpuEngine engine(TreeParams{}, g);
    BlockLeapfrog block(engine, g, 1.0 / 16, 0.01);
    block.start(r);
    block.advance(r);
    const auto bins = block.particles_per_bin();
    INFO("ticks " << block.ticks_stepped() << ", forces " << block.forces_computed());
    CHECK(block.forces_computed() < 2000 * (1 + block.ticks_stepped()));
    CHECK(block.forces_computed() >= 2000 * 2); // the start and the end of the dt_max at least
}

TEST_CASE("block time steps: the dynamical time's cap shortens the steps at a galaxy's centre", "[integrator][bins]")
{
    // A galaxy's bulge centre: |a| falls to zero within the softening while the orbits there are
    // the shortest, so GADGET's criterion alone gives the centre steps too long for its orbits
    // (bench/results/step.md). The cap moves those particles to shorter bins and leaves the
    // others where they were.
    const ParticleSet start = make_galaxy(4000, 3, GalaxyParams{});
    const GravityParams g{start.units.G, 0.05};
    TreeCpuEngine engine(TreeParams{0.5, {16, 32}}, g);
    const double dt_max = 0.004, eta = 0.02, eta_dyn = 0.1;
    ParticleSet a = start, b = start;
    BlockLeapfrog plain(engine, g, dt_max, eta), capped(engine, g, dt_max, eta, eta_dyn);
    plain.start(a);
    capped.start(b);
    REQUIRE(a.acc == b.acc);
    const Eigen::Vector3d centre = b.pos * b.mass / b.mass.sum();
    const double r_centre = 0.3; // where the bulge's orbits are shortest
    int deeper = 0, deeper_outside = 0;
    for (std::size_t i = 0; i < start.size(); ++i) {
        const int k0 = plain.bins()[i], k1 = capped.bins()[i];
        REQUIRE(k1 >= k0);
        const auto c = static_cast<Eigen::Index>(i);
        const double r = (b.pos.col(c) - centre).norm();
        if (k1 > k0) ++(r < r_centre ? deeper : deeper_outside);
    }
    INFO("particles moved to a shorter bin: " << deeper << " within r = " << r_centre << ", " << deeper_outside
                                              << " outside");
    CHECK(deeper > 0);
    CHECK(deeper_outside <= deeper);
    // A dt_max with the cap: more forces at the centre only, and the dynamical time's bins kept.
    plain.advance(a);
    capped.advance(b);
    CHECK(capped.forces_computed() > plain.forces_computed());
    CHECK(capped.forces_computed() < 2 * plain.forces_computed());
    const auto bins = capped.particles_per_bin();
    long long total = 0;
    for (long long c : bins) total += c;
    CHECK(total == static_cast<long long>(start.size()));
}
