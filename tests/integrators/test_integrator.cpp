// The integrator interface in process: every integrator, stopped, saved through its state field
// list and resumed in a fresh object, continues bit-identically to an uninterrupted run.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/checkpoint.hpp"
#include "core/galaxy_model.hpp"
#include "core/ic_models.hpp"
#include "core/time_bins.hpp"
#include "engines/engines.hpp"
#include "integrators/integrator.hpp"
#include "support/potential_check.hpp"

using namespace grove;

namespace {

// "leapfrog-relative": the leapfrog on the tree's relative criterion, whose opening decisions read
// the previous step's accelerations (which the resumed run must take from the saved particles).
IntegratorConfig config_for(const std::string& variant)
{
    IntegratorConfig c;
    const std::string name = variant == "hermite" || variant == "hermite6" ? variant : "leapfrog";
    c.integrator = name;
    c.engine.engine = name != "leapfrog" ? "direct-cpu" : "tree-cpu";
    if (variant == "leapfrog-relative") c.engine.mac = "relative";
    c.engine.gravity = {1.0, 1.0 / 64};
    c.dt = 1.0 / 128;
    c.dt_max = 1.0 / 64;
    c.eta = 0.02;
    return c;
}

} // namespace

TEST_CASE("integrators resume from their saved state field list bit-identically", "[integrators]")
{
    for (const std::string name : {"leapfrog", "leapfrog-relative", "hermite", "hermite6"}) {
        INFO(name);
        const IntegratorConfig c = config_for(name);
        ParticleSet start = make_plummer(512, 3);
        const double dt = name == "hermite" || name == "hermite6" ? c.dt_max : c.dt;

        ParticleSet straight = start;
        auto a = make_integrator(c, engines());
        a->start(straight);
        for (int s = 1; s <= 8; ++s) a->advance_to(s * dt, straight);

        ParticleSet first = start;
        auto b = make_integrator(c, engines());
        b->start(first);
        for (int s = 1; s <= 4; ++s) b->advance_to(s * dt, first);
        ParticleSet snapshot = first;
        const IntegratorState saved = b->save(snapshot);
        if (name == "hermite6") CHECK(saved.field("crackle").cols() == 512);
        if (name == "hermite" || name == "hermite6") {
            CHECK(saved.field("jerk").rows() == 3);
            CHECK(saved.field("particle_time").cols() == 512);
            CHECK(saved.counter("block_steps") > 0);
        } else {
            CHECK(saved.fields.empty()); // the particles carry the leapfrog's forces
        }

        auto resumed = make_integrator(c, engines());
        resumed->resume(saved, snapshot);
        for (int s = 5; s <= 8; ++s) resumed->advance_to(s * dt, snapshot);
        CHECK(snapshot.pos == straight.pos);
        CHECK(snapshot.vel == straight.vel);
        CHECK(snapshot.time == straight.time);
    }
}

TEST_CASE("block steps paused within a dt_max, checkpointed there and resumed, go on bit for bit",
          "[integrators][bins]")
{
    // A galaxy's particles over several bins, the dynamical time's cap on (its profile, made at
    // the dt_max's start, is part of the state), paused at the fifth tick of the second dt_max.
    const ParticleSet start = make_galaxy(3000, 7, GalaxyParams{});
    const std::string path = (std::filesystem::path(GROVE_TEST_SCRATCH) / "block_within.hdf5").string();
    for (const std::string variant : {"tree-cpu", "tree-cpu relative", "direct-cpu"}) {
        INFO(variant);
        IntegratorConfig c;
        c.timestep = "block";
        c.engine.engine = variant == "direct-cpu" ? "direct-cpu" : "tree-cpu";
        if (variant == "tree-cpu relative") c.engine.mac = "relative";
        c.engine.gravity = {start.units.G, 0.05};
        c.dt_max = 0.004;
        c.eta = 0.02;
        c.eta_dyn = 0.2;

        ParticleSet straight = start;
        auto a = make_integrator(c, engines());
        a->start(straight);
        a->advance_to(c.dt_max, straight);
        a->advance_to(2 * c.dt_max, straight);

        ParticleSet paused = start;
        auto b = make_integrator(c, engines());
        b->start(paused);
        b->advance_to(c.dt_max, paused);
        int asked = 0;
        b->pause_when([&] { return ++asked == 5; });
        b->advance_to(2 * c.dt_max, paused);
        REQUIRE(b->within_interval());
        CHECK(paused.time > c.dt_max);
        CHECK(paused.time < 2 * c.dt_max);
        {
            // The potentials a checkpoint there keeps are every particle's where it is now, not
            // those of each particle's last due tick.
            const std::vector<double> q = test::potential_error_percentiles(paused, c.engine.gravity);
            INFO("potentials at the pause against the direct sum: p50 " << q[0] << ", max " << q[1]);
            CHECK(q[0] < 1e-4);
            CHECK(q[1] < 2e-3);
        }
        Checkpoint written;
        written.particles = paused;
        written.integrator = b->save(written.particles);
        write_checkpoint(path, written);
        const Checkpoint back = read_checkpoint(path);
        CHECK(back.integrator.counter("tick") > 0);
        CHECK(back.integrator.array("mass_profile").size() == 4 + kProfilePoints);

        // Going on in the same process, and from the checkpoint in a fresh integrator: both as if
        // never paused.
        b->advance_to(2 * c.dt_max, paused);
        CHECK_FALSE(b->within_interval());
        ParticleSet restarted = back.particles;
        auto r = make_integrator(c, engines());
        r->resume(back.integrator, restarted);
        CHECK(r->within_interval());
        r->advance_to(2 * c.dt_max, restarted);
        CHECK_FALSE(r->within_interval());
        for (const ParticleSet* p : {&paused, &restarted}) {
            CHECK(p->pos == straight.pos);
            CHECK(p->vel == straight.vel);
            CHECK(p->acc == straight.acc);
            CHECK(p->time == straight.time);
        }
        CHECK(r->log_counts() == a->log_counts());
        CHECK(r->summary() == a->summary()); // the same ticks and forces counted
        int occupied = 0;
        for (const auto& [name, count] : a->log_counts()) occupied += count > 0;
        CHECK(occupied >= 3); // bins spread, or the pause tests little

        // A checkpoint's state that cannot be a pause's is refused.
        IntegratorState bad = back.integrator;
        for (auto& [name, value] : bad.counters)
            if (name == "tick") value = 3; // no multiple of the shortest bin's step
        ParticleSet again = back.particles;
        CHECK_THROWS_WITH(make_integrator(c, engines())->resume(bad, again), Catch::Contains("do not fit its tick"));
    }
}

TEST_CASE("integrators refuse engines they cannot run on", "[integrators]")
{
    IntegratorConfig c = config_for("hermite");
    c.engine.engine = "tree-cpu";
    CHECK_THROWS_WITH(make_integrator(c, engines()), Catch::Contains("--integrator hermite runs on direct"));
    c.integrator = "verlet";
    CHECK_THROWS_WITH(make_integrator(c, engines()), Catch::Contains("unknown --integrator 'verlet'"));
}
