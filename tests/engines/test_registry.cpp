// The engine registry: names resolve, unknown names and GPU engines without a GPU give clear
// errors, and the engines it makes are the ones named.
#include <catch2/catch.hpp>

#include "core/device_list.hpp"
#include "engines/engines.hpp"
#include "tree/cpu_engines.hpp"

using namespace grove;

namespace {

// A registry with only the CPU engines, as a build without the GPU library has.
EngineRegistry cpu_only_registry()
{
    EngineRegistry r;
    register_cpu_engines(r);
    return r;
}

} // namespace

TEST_CASE("the registry has the CPU engines and resolves direct and tree", "[engines]")
{
    const EngineRegistry& r = engines();
    CHECK(r.has("direct-cpu"));
    CHECK(r.has("tree-cpu"));
    const std::string suffix = r.gpu_available() ? "-gpu" : "-cpu";
    CHECK(r.resolve("direct") == "direct" + suffix);
    CHECK(r.resolve("tree") == "tree" + suffix);
    CHECK(r.resolve("tree-cpu") == "tree-cpu");
    EngineConfig c;
    c.engine = "tree-cpu";
    CHECK(r.make_force(c)->name() == "tree-cpu");
    c.engine = "direct-cpu";
    CHECK(r.make_force(c)->name() == "direct-cpu");
    CHECK(r.make_hermite(c, "test")->name() == "direct-cpu");
    c.engine = "warp-drive";
    CHECK_THROWS_WITH(r.make_force(c), Catch::Contains("unknown engine 'warp-drive'"));
}

TEST_CASE("GPU engine names without a GPU, or without GPU engines, say why", "[engines]")
{
    // A registry as a build without the GPU library has it, and one whose GPU library sees no device.
    EngineRegistry cpu_only = cpu_only_registry();
    EngineConfig c;
    c.engine = "tree-gpu";
    CHECK_THROWS_WITH(cpu_only.make_force(c),
                      Catch::Contains("this build has no GPU engines") && Catch::Contains("use tree-cpu"));
    CHECK(cpu_only.resolve("direct") == "direct-cpu");

    EngineRegistry no_device = cpu_only_registry();
    no_device.set_device_count([] { return 0; });
    no_device.add(
        {"tree-gpu", true, [](const EngineConfig&) -> std::unique_ptr<ForceEngine> { return nullptr; }, nullptr});
    CHECK_THROWS_WITH(no_device.make_force(c), Catch::Contains("needs a CUDA GPU and none is visible"));
    CHECK(no_device.resolve("tree") == "tree-cpu");
}

TEST_CASE("device lists as --gpus and GROVE_DEVICES take them", "[engines]")
{
    CHECK(parse_device_list("") == std::vector<int>{});
    CHECK(parse_device_list("2") == std::vector<int>{2});
    CHECK(parse_device_list("0,3,1") == std::vector<int>{0, 3, 1});
    for (const char* bad : {"0,", ",1", "-1", "+1", "x", "1,x", "0 1", "5000"}) {
        INFO(bad);
        CHECK_FALSE(parse_device_list(bad).has_value());
    }
}

TEST_CASE("an engine configuration is checked once for the command line and Python alike", "[engines]")
{
    EngineConfig good;
    good.engine = "tree-cpu";
    CHECK_NOTHROW(good.validate());
    const auto refused = [&](auto change, const char* what) {
        EngineConfig c = good;
        change(c);
        CHECK_THROWS_WITH(c.validate(), Catch::Contains(what));
    };
    refused([](EngineConfig& c) { c.precision = "bogus"; }, "precision must be float, mixed or double");
    refused([](EngineConfig& c) { c.gravity.eps = 1e155; }, "square is finite"); // eps^2 overflows
    refused([](EngineConfig& c) { c.gravity.eps = -1; }, "eps");
    refused([](EngineConfig& c) { c.gravity.G = 0; }, "G must");
    refused([](EngineConfig& c) { c.theta = 2; }, "(0, 1.1547]");
    refused([](EngineConfig& c) { c.mac = "relative", c.alpha = 2; }, "(0, 1]");
    refused([](EngineConfig& c) { c.mac = "barnes"; }, "geometric");
    refused([](EngineConfig& c) { c.nleaf = 0; }, "nleaf");
    refused([](EngineConfig& c) { c.ncrit = -1; }, "ncrit");
    refused([](EngineConfig& c) { c.rebuild_every = 0; }, "rebuild_every");
}
