// Leapfrog in process: second-order convergence and time reversibility on a Kepler orbit.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/device_particles.hpp"
#include "core/ic_models.hpp"
#include "core/particle_order.hpp"
#include "core/particle_store.hpp"
#include "integrators/leapfrog.hpp"
#include "support/test_support.hpp"
#include "support/tree_order_check.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/tree_cpu.hpp"

using namespace grove;

namespace {

// Two bodies, masses 0.5 each, G = 1, relative orbit with semi-major axis 1 and eccentricity e,

double separation_error_after_one_period(double dt)
{
    ParticleSet p = test::kepler_pair(0.5);
    const ParticleSet start = p;
    DirectCpuEngine engine(GravityParams{1.0, 0.0});
    Leapfrog lf(engine, dt);
    ParticleStore store(p);
    lf.start(store);
    const auto steps = std::lround(2 * 3.14159265358979323846 / dt);
    for (long s = 0; s < steps; ++s) lf.step(store);
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
    ParticleSet p = test::kepler_pair(0.5);
    const ParticleSet start = p;
    DirectCpuEngine engine(GravityParams{1.0, 0.0});
    Leapfrog lf(engine, 1e-3);
    ParticleStore forth(p);
    lf.start(forth);
    for (int s = 0; s < 3000; ++s) lf.step(forth);
    p.vel = -p.vel;
    Leapfrog back(engine, 1e-3);
    ParticleStore backwards(p);
    back.start(backwards);
    for (int s = 0; s < 3000; ++s) back.step(backwards);
    CHECK((p.pos - start.pos).norm() < 1e-10);
    CHECK((p.vel + start.vel).norm() < 1e-10);
    CHECK_THROWS_WITH(Leapfrog(engine, -1), Catch::Contains("--dt"));
}

namespace {

// The same engine without its order: the leapfrog then keeps the caller's order throughout.
class WithoutOrder final : public ForceEngine {
  public:
    explicit WithoutOrder(ForceEngine& engine) : ForceEngine(engine.name()), engine_(engine) {}
    using ForceEngine::compute;
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override
    {
        engine_.compute(pos, mass, type, out);
    }

  private:
    ForceEngine& engine_;
};

// Two leapfrogs started and stepped side by side.
void start_and_step_both(Leapfrog& la, ParticleStore& a, Leapfrog& lb, ParticleStore& b, int steps)
{
    la.start(a);
    lb.start(b);
    for (int s = 0; s < steps; ++s) {
        la.step(a);
        lb.step(b);
    }
}

// An engine with an order of its own (the particles reversed) that hands its forces over in it,
// telling the store the order early (as tree-gpu does while its kernels run) or with the forces.
// fail_after_early: it throws after the early move instead, as an engine whose device failed would.
class ReversingEngine final : public ForceEngine {
  public:
    ReversingEngine(ForceEngine& engine, bool early) : ForceEngine(engine.name()), engine_(engine), early_(early) {}
    using ForceEngine::compute;
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override
    {
        engine_.compute(pos, mass, type, out);
    }
    void compute(ParticleStore& store) override
    {
        ParticleSet& p = store.host();
        Forces caller;
        engine_.compute(p.pos, p.mass, caller);
        if (!store.may_reorder()) {
            store.take_forces(caller);
            return;
        }
        const auto n = static_cast<std::uint32_t>(p.size());
        std::vector<std::uint32_t> order(n);
        for (std::uint32_t k = 0; k < n; ++k) order[k] = n - 1 - k;
        if (early_) {
            store.move_early(order);
            ++early_moves;
            if (fail_after_early) throw std::runtime_error("device failed");
        }
        Forces own;
        own.acc.resize(3, n);
        own.pot.resize(n);
        for (std::uint32_t k = 0; k < n; ++k) {
            own.acc.col(k) = caller.acc.col(order[k]);
            own.pot[k] = caller.pot[order[k]];
        }
        store.take_forces_in_order(own, order);
    }
    int early_moves = 0;
    bool fail_after_early = false;

  private:
    ForceEngine& engine_;
    bool early_;
};

} // namespace

namespace {

// 300 Plummer particles with masses, a type, extra columns and forces that show where each one
// went.
ParticleSet moved_particles_start()
{
    ParticleSet p = make_plummer(300, 4);
    for (Eigen::Index i = 0; i < 300; ++i) p.mass[i] *= 1 + 1e-3 * static_cast<double>(i);
    p.type[7] = 3;
    p.extra["Column"] = {2, std::vector<double>(600), {}};
    p.extra["Count"] = {1, {}, std::vector<std::uint64_t>(300)};
    for (std::size_t i = 0; i < 300; ++i) {
        p.extra["Column"].values[2 * i] = static_cast<double>(i);
        p.extra["Column"].values[2 * i + 1] = -static_cast<double>(i);
        p.extra["Count"].counts[i] = 1000 + i;
    }
    p.acc = p.pos * 2;
    p.pot = p.mass * 3;
    return p;
}

} // namespace

TEST_CASE("particles moved between steps return to their order exactly, after any number of moves",
          "[integrator][order]")
{
    ParticleSet p = moved_particles_start();
    const ParticleSet start = p;
    ParticleOrder order;
    CHECK_FALSE(order.restore(p));
    std::vector<std::uint32_t> shuffle(300), reverse(300);
    for (std::uint32_t k = 0; k < 300; ++k) {
        shuffle[k] = (k * 7 + 3) % 300;
        reverse[k] = 299 - k;
    }
    order.adopt(p, shuffle);
    CHECK(p.pos.col(1) == start.pos.col(10));
    CHECK(p.vel.col(1) == start.vel.col(10));
    CHECK(p.acc.col(1) == start.acc.col(10));
    CHECK(p.mass[2] == start.mass[17]);
    CHECK(p.pot[2] == start.pot[17]);
    CHECK(p.id == start.id); // until restore()
    order.adopt(p, reverse, ParticleOrder::Forces::replaced);
    CHECK(p.pos.col(299) == start.pos.col(3));
    CHECK(p.acc.col(299) == start.acc.col(296)); // where shuffle put it: left for the caller to replace
    CHECK(order.caller_index()[299] == 3);
    for (std::uint32_t k = 0; k < 300; ++k) { // what forces computed in the new order would be
        p.acc.col(k) = start.acc.col(order.caller_index()[k]);
        p.pot[k] = start.pot[order.caller_index()[k]];
    }
    CHECK(order.restore(p));
    CHECK_FALSE(order.moved());
    test::check_same_columns(p, start);
    CHECK(p.extra["Column"].values == start.extra.at("Column").values);
    CHECK(p.extra["Count"].counts == start.extra.at("Count").counts);
    CHECK_THROWS_WITH(order.adopt(p, std::vector<std::uint32_t>(5)), Catch::Contains("5 indices for 300"));

    // A kick folded into the move: v += dt a with a in the new order; non-finite values found.
    Eigen::Matrix3Xd a = Eigen::Matrix3Xd::Constant(3, 300, 2.0);
    CHECK(order.adopt(p, shuffle, ParticleOrder::Forces::replaced, {&a, 0.25}));
    CHECK(p.vel.col(1) == (start.vel.col(10).array() + 0.5).matrix());
    CHECK(p.pos.col(1) == start.pos.col(10));
    a(1, 7) = std::nan("");
    CHECK_FALSE(order.adopt(p, reverse, ParticleOrder::Forces::replaced, {&a, 0.25}));
    const Eigen::Matrix3Xd too_few = a.leftCols(5);
    CHECK_THROWS_WITH(order.adopt(p, shuffle, ParticleOrder::Forces::replaced, {&too_few, 0.25}),
                      Catch::Contains("differ in length"));
}

TEST_CASE("particles moved between steps in two parts, the particles first and the kick later, as in one move",
          "[integrator][order]")
{
    ParticleSet p = moved_particles_start();
    const ParticleSet start = p;
    ParticleOrder one, two;
    ParticleSet a = start, b = start;
    std::vector<std::uint32_t> shuffle(300);
    for (std::uint32_t k = 0; k < 300; ++k) shuffle[k] = (k * 11 + 5) % 300;
    const Eigen::Matrix3Xd kick = Eigen::Matrix3Xd::Constant(3, 300, 0.5);
    for (int round = 0; round < 2; ++round) { // the second round composes with the first
        CHECK(one.adopt(a, shuffle, ParticleOrder::Forces::replaced, {&kick, 0.125}));
        const Eigen::Matrix3Xd unmoved = b.vel;
        two.move_early(b, shuffle);
        CHECK(b.pos == a.pos);
        CHECK(b.mass == a.mass);
        bool moved_unkicked = true; // the velocities move now; the kick needs the forces
        for (Eigen::Index k = 0; k < 300; ++k)
            moved_unkicked = moved_unkicked && b.vel.col(k) == unmoved.col(shuffle[static_cast<std::size_t>(k)]);
        CHECK(moved_unkicked);
        CHECK(two.adopt(b, shuffle, ParticleOrder::Forces::replaced, {&kick, 0.125}));
        CHECK(b.pos == a.pos);
        CHECK(b.vel == a.vel);
        CHECK(two.caller_index() == one.caller_index());
        b.vel = start.vel; // keep both velocity arrays equal for the next round
        a.vel = start.vel;
    }
    // Undone when the forces never come; an adopt that moves the forces too is refused.
    ParticleSet c = start;
    ParticleOrder three;
    three.move_early(c, shuffle);
    three.undo_early(c);
    test::check_same_columns(c, start);
    three.move_early(c, shuffle);
    CHECK_THROWS_AS(three.adopt(c, shuffle), std::logic_error);
    CHECK_THROWS_AS(three.move_early(c, shuffle), std::logic_error);
    CHECK_THROWS_WITH(ParticleOrder().move_early(c, std::vector<std::uint32_t>(5)),
                      Catch::Contains("5 indices for 300"));
}

TEST_CASE("particles moved early, while the engine works, give the leapfrog the same orbits, and a failure leaves "
          "them as they were",
          "[integrator][order]")
{
    ParticleSet p = moved_particles_start();
    const ParticleSet start = p;
    DirectCpuEngine direct(GravityParams{1.0, 0.05});
    ReversingEngine with_forces(direct, false), early(direct, true);
    ParticleSet a = start, b = start;
    ParticleStore sa(a), sb(b);
    Leapfrog la(with_forces, 1.0 / 64), lb(early, 1.0 / 64);
    start_and_step_both(la, sa, lb, sb, 5);
    CHECK(early.early_moves == 5);
    CHECK(sa.host().pos == sb.host().pos);
    CHECK(a.vel == b.vel);
    CHECK(a.mass == b.mass);
    CHECK(sa.caller_index().size() == 300);
    CHECK(sa.caller_index() == sb.caller_index());
    early.fail_after_early = true;
    const ParticleSet before = b;
    CHECK_THROWS_WITH(lb.step(sb), Catch::Contains("device failed"));
    // The early move is undone; the opening half-kick and drift of the failed step remain, as
    // they would with any engine that fails.
    sb.host();
    CHECK(b.mass == before.mass);
    const double dt = 1.0 / 64;
    const Eigen::Matrix3Xd v_half = before.vel + 0.5 * dt * before.acc, x = before.pos + dt * v_half;
    CHECK((b.vel - v_half).cwiseAbs().maxCoeff() <= 1e-15);
    CHECK((b.pos - x).cwiseAbs().maxCoeff() <= 1e-15); // in the order they had, not the engine's
    sb.restore_order();
    CHECK(b.mass == start.mass); // masses move with the particles: back in the caller's order
    sa.restore_order();
    CHECK(a.pos != b.pos); // one step apart
}

TEST_CASE(
    "particles moved between steps into a tree's Morton order give the leapfrog the same orbits as the caller's order",
    "[integrator][order]")
{
    ParticleSet p = moved_particles_start();
    const ParticleSet start = p;
    // Rebuilt every step; refitted between builds (a refit must gather the moved particles);
    // the relative criterion from a first pass (whose estimate is in the caller's order).
    for (int config = 0; config < 3; ++config) {
        TreeParams params;
        params.theta = 0.6;
        params.build.nleaf = 8;
        params.build.ncrit = 16;
        params.rebuild_every = config == 1 ? 3 : 1;
        if (config == 2) params.mac = MacKind::relative;
        TreeCpuEngine moving(params, GravityParams{1.0, 0.05}), fixed(params, GravityParams{1.0, 0.05});
        WithoutOrder fixed_order(fixed);
        ParticleSet a = start, b = start;
        if (config == 2) a.acc.resize(3, 0), b.acc.resize(3, 0); // no estimate: a first pass
        ParticleStore sa(a), sb(b);
        Leapfrog la(moving, 1.0 / 64), lb(fixed_order, 1.0 / 64);
        start_and_step_both(la, sa, lb, sb, 7);
        INFO("configuration " << config);
        CHECK(sa.host().pos != b.pos); // the tree's order, not the caller's
        sa.restore_order();
        // The trees are the same but for the particles' order within equal keys: equal here.
        CHECK((a.pos - b.pos).cwiseAbs().maxCoeff() <= 1e-14);
        CHECK((a.vel - b.vel).cwiseAbs().maxCoeff() <= 1e-13);
        CHECK((a.acc - b.acc).cwiseAbs().maxCoeff() <= 1e-12);
        // And it continues from the restored order as from any caller's order.
        la.step(sa);
        lb.step(sb);
        sa.restore_order();
        CHECK((a.pos - b.pos).cwiseAbs().maxCoeff() <= 1e-14);
    }
}

TEST_CASE("look-ahead trees, built from the leapfrog's prediction and refitted, give the orbits of fresh builds",
          "[integrator][order][lookahead]")
{
    test::check_lookahead_orbits(
        make_plummer(2000, 9),
        [](const TreeParams& params) {
            return std::make_unique<TreeCpuEngine>(params, GravityParams{1.0, 0.02});
        },
        [](ForceEngine& e) { return static_cast<TreeCpuEngine&>(e).last_stats(); });
}

namespace {

// A device side kept in host memory: what the store hands it and asks of it, counted.
class RecordingDevice final : public DeviceParticles {
  public:
    void load(const ParticleSet& p, TypesRef) override
    {
        state = p;
        ++loads;
        loaded_ = true;
    }
    void kick_drift(double h, double dt) override
    {
        state.vel += h * state.acc;
        state.pos += dt * state.vel;
    }
    bool kick(double h) override
    {
        state.vel += h * state.acc;
        return state.vel.allFinite();
    }
    void store(ParticleSet& p) override
    {
        p.pos = state.pos;
        p.vel = state.vel;
        p.acc = state.acc;
        p.pot = state.pot;
        ++stores;
    }
    void unload() override { loaded_ = false; }
    bool loaded() const override { return loaded_; }
    bool diagnostics(const std::vector<double>& fractions, Diagnostics& out) override
    {
        if (!makes_diagnostics) return false;
        out = compute_diagnostics(state, state.pot, fractions);
        return true;
    }
    ParticleSet state;
    int loads = 0, stores = 0;
    bool makes_diagnostics = false;

  private:
    bool loaded_ = false;
};

} // namespace

TEST_CASE("a particle store applies the steps where the state lives and keeps the caller's order",
          "[integrator][store]")
{
    ParticleSet start = make_plummer(200, 3);
    start.acc = -start.pos;
    start.pot = -start.mass;

    SECTION("on the host: the kick folded into a move equals the kick after it")
    {
        ParticleSet a = start, b = start;
        ParticleStore folded(a), apart(b);
        std::vector<std::uint32_t> order(200);
        for (std::uint32_t k = 0; k < 200; ++k) order[k] = (k * 13 + 7) % 200;
        const std::vector<std::uint32_t> expected = order;
        folded.kick_drift(0.125, 0.25);
        apart.kick_drift(0.125, 0.25);
        CHECK(folded.last_drift() == 0.25);
        Forces f{Eigen::Matrix3Xd::Constant(3, 200, 0.5), Eigen::VectorXd::Constant(200, -1.0)}, g = f;
        std::vector<std::uint32_t> taken = order;
        folded.take_forces_in_order(f, taken);
        CHECK(folded.kick(0.125));
        apart.move_early(order);
        apart.take_forces_in_order(g, order);
        CHECK(apart.kick(0.125));
        CHECK(folded.host().vel == apart.host().vel);
        CHECK(a.pos == b.pos);
        CHECK(folded.caller_index() == expected);
        // The store is back in the caller's order, and tells engines so.
        const std::uint64_t epoch = folded.order_epoch();
        folded.restore_order();
        CHECK(folded.order_epoch() != epoch);
        const Eigen::Matrix3Xd v_half = start.vel + 0.125 * start.acc;
        CHECK((a.pos - (start.pos + 0.25 * v_half)).cwiseAbs().maxCoeff() <= 1e-15);
        CHECK((a.vel - (v_half + 0.125 * Eigen::Matrix3Xd::Constant(3, 200, 0.5))).cwiseAbs().maxCoeff() <= 1e-15);
        CHECK(a.pot == Eigen::VectorXd::Constant(200, -1.0));
        // A non-finite velocity is found by the kick, moved or not.
        a.vel(1, 3) = std::nan("");
        CHECK_FALSE(folded.kick(0.1));
        // Forces for another number of particles, or in an order held, are refused.
        Forces few{Eigen::Matrix3Xd::Zero(3, 5), Eigen::VectorXd::Zero(5)};
        CHECK_THROWS_AS(folded.take_forces(few), std::logic_error);
        const ParticleStore::OrderHold hold(folded);
        CHECK_FALSE(folded.may_reorder());
        std::vector<std::uint32_t> again = expected;
        CHECK_THROWS_AS(folded.take_forces_in_order(f, again), std::logic_error);
    }

    SECTION("on a device: loaded at the first drift, brought back on request, dropped at an output")
    {
        ParticleSet a = start;
        RecordingDevice device;
        ParticleStore store(a);
        store.place_on(&device);
        CHECK_FALSE(store.on_device());
        store.kick_drift(0.125, 0.25);
        CHECK(device.loads == 1);
        CHECK(store.on_device());
        CHECK(a.pos == start.pos); // the host's copy is not touched by the steps
        // Diagnostics where the device makes them, without a copy back; else the caller's.
        Diagnostics d;
        CHECK_FALSE(store.device_diagnostics(kLogFractions, d));
        device.makes_diagnostics = true;
        REQUIRE(store.device_diagnostics(kLogFractions, d));
        CHECK(d.total == compute_diagnostics(device.state, device.state.pot).total);
        CHECK(d.lagrangian_radii.size() == 3);
        CHECK(device.stores == 0);
        CHECK(store.kick(0.125));
        store.advance_time(0.25);
        CHECK(store.time() == start.time + 0.25);
        ParticleSet& host = store.host();
        CHECK(device.stores == 1);
        CHECK(host.pos == device.state.pos);
        store.host(); // current: no second copy
        CHECK(device.stores == 1);
        store.restore_order();
        CHECK_FALSE(store.on_device());
        store.load_on_device(); // a new load, from the host's state, as after a restart
        CHECK(device.loads == 2);
        CHECK(store.on_device());
        store.load_on_device(); // loaded already: nothing more
        store.kick_drift(0.125, 0.25);
        CHECK(device.loads == 2);
        store.place_on(nullptr); // back on the host, with the device's state
        CHECK(device.stores == 2);
        CHECK(a.pos == device.state.pos);
        // A second store placed on a device that holds the first one's state loads its own.
        ParticleSet b = start;
        ParticleStore first(a), second(b);
        first.place_on(&device);
        first.kick_drift(0.125, 0.25);
        second.place_on(&device);
        CHECK_FALSE(device.loaded());
        second.kick_drift(0.125, 0.25);
        const Eigen::Matrix3Xd expected = start.pos + 0.25 * (start.vel + 0.125 * start.acc); // b's, one step on
        CHECK((device.state.pos - expected).cwiseAbs().maxCoeff() <= 1e-15);
        CHECK(second.on_device());
    }
}
