// The integrator interface in process: every integrator, stopped, saved through its state field
// list and resumed in a fresh object, continues bit-identically to an uninterrupted run.
#include <catch2/catch.hpp>

#include "core/ic_models.hpp"
#include "engines/engines.hpp"
#include "integrators/integrator.hpp"

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

TEST_CASE("integrators refuse engines they cannot run on", "[integrators]")
{
    IntegratorConfig c = config_for("hermite");
    c.engine.engine = "tree-cpu";
    CHECK_THROWS_WITH(make_integrator(c, engines()), Catch::Contains("--integrator hermite runs on direct"));
    c.integrator = "verlet";
    CHECK_THROWS_WITH(make_integrator(c, engines()), Catch::Contains("unknown --integrator 'verlet'"));
}
