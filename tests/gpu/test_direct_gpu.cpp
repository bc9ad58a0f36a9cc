// [gpu] The GPU direct engine against the CPU double engine, and its own invariants.
#include <catch2/catch.hpp>

#include <algorithm>

#include "gpu/device_info.h"
#include "gpu/direct_gpu.h"
#include "gpu/direct_multi_gpu.h"
#include "gpu/loop_ceiling.h"
#include "gpu/tree_gpu.h"
#include "support/test_support.hpp"
#include "tree/direct_cpu.hpp"

using namespace grove;

namespace {

double median_relative_error(const Eigen::Matrix3Xd& a, const Eigen::Matrix3Xd& ref)
{
    std::vector<double> e(static_cast<std::size_t>(ref.cols()));
    for (Eigen::Index i = 0; i < ref.cols(); ++i)
        e[static_cast<std::size_t>(i)] = (a.col(i) - ref.col(i)).norm() / ref.col(i).norm();
    std::nth_element(e.begin(), e.begin() + static_cast<long>(e.size() / 2), e.end());
    return e[e.size() / 2];
}

} // namespace

TEST_CASE("direct-gpu matches the CPU double engine in every precision", "[gpu][direct]")
{
    const std::size_t n = GENERATE(1, 2, 31, 32, 33, 1000, 100003);
    const bool clustered = GENERATE(false, true);
    const double eps = GENERATE(0.0, 1e-3);
    const ParticleSet p = clustered ? test::clustered_particles(n, 31) : test::random_particles(n, 31);
    const GravityParams gravity{1.0, eps};
    Forces ref;
    DirectCpuEngine(gravity).compute(p.pos, p.mass, ref);
    const struct {
        Precision precision;
        double bound;
    } cases[] = {{Precision::Float, 1e-5}, {Precision::Mixed, 1e-6}, {Precision::Double, 1e-12}};
    for (const auto& c : cases) {
        INFO("n = " << n << ", clustered = " << clustered << ", eps = " << eps << ", precision "
                    << precision_name(c.precision));
        DirectGpuEngine engine(gravity, c.precision);
        Forces f;
        engine.compute(p.pos, p.mass, f);
        REQUIRE(f.acc.allFinite());
        REQUIRE(f.pot.allFinite());
        if (n == 1) {
            CHECK(f.acc.norm() == 0);
            CHECK(f.pot[0] == 0);
            continue;
        }
        CHECK(median_relative_error(f.acc, ref.acc) <= c.bound);
        CHECK((f.pot - ref.pot).norm() <= 10 * c.bound * ref.pot.norm());
    }
}

TEST_CASE("direct-gpu with eps = 0: coincident particles are an error naming the pair, a particle skips only itself",
          "[gpu][direct]")
{
    ParticleSet p = test::random_particles(300, 5);
    const GravityParams unsoftened{1.0, 0.0};
    Forces ref, f;
    DirectCpuEngine(unsoftened).compute(p.pos, p.mass, ref); // apart: each particle skips only itself
    for (Precision prec : {Precision::Float, Precision::Mixed, Precision::Double}) {
        INFO("precision " << precision_name(prec));
        DirectGpuEngine engine(unsoftened, prec);
        engine.compute(p.pos, p.mass, f);
        CHECK(f.acc.allFinite());
        CHECK(median_relative_error(f.acc, ref.acc) <= 1e-5);
    }
    p.pos.col(250) = p.pos.col(40);
    p.pos.col(120) = p.pos.col(7); // the first pair (by target index) is 7 and 120
    for (Precision prec : {Precision::Float, Precision::Mixed, Precision::Double}) {
        INFO("precision " << precision_name(prec));
        DirectGpuEngine engine(unsoftened, prec);
        CHECK_THROWS_WITH(engine.compute(p.pos, p.mass, f), Catch::Contains("particles 7 and 120 are at the same"));
        CHECK_THROWS_WITH(engine.compute_subset(p.pos, p.mass, {3, 250}, f),
                          Catch::Contains("particles 250 and 40 are at the same"));
        engine.compute_subset(p.pos, p.mass, {3, 5}, f); // targets away from both pairs are fine
        CHECK(f.acc.allFinite());
        // A massless particle on top of another feels an infinite force but exerts none.
        ParticleSet q = p;
        q.mass[120] = 0;
        q.mass[7] = 0;
        q.mass[250] = 0;
        q.mass[40] = 0;
        engine.compute_subset(q.pos, q.mass, {3, 5}, f);
        CHECK(f.acc.allFinite());
    }
}

TEST_CASE("direct-gpu: active subsets, j-splits and repeated calls", "[gpu][direct]")
{
    const ParticleSet p = test::clustered_particles(40000, 8);
    const GravityParams gravity{1.0, 1e-3};
    for (Precision prec : {Precision::Float, Precision::Mixed, Precision::Double}) {
        INFO("precision " << precision_name(prec));
        DirectGpuEngine engine(gravity, prec);
        engine.set_splits(1);
        Forces full, again;
        engine.compute(p.pos, p.mass, full);
        engine.compute(p.pos, p.mass, again);
        CHECK(full.acc == again.acc); // bit-identical across calls
        CHECK(full.pot == again.pot);

        std::vector<std::int32_t> active;
        for (std::int32_t i = 7; i < 40000; i += 97) active.push_back(i);
        Forces subset;
        engine.compute_subset(p.pos, p.mass, active, subset);
        REQUIRE(subset.acc.cols() == static_cast<Eigen::Index>(active.size()));
        for (std::size_t k = 0; k < active.size(); ++k) {
            CHECK(subset.acc.col(static_cast<Eigen::Index>(k)) == full.acc.col(active[k]));
            CHECK(subset.pot[static_cast<Eigen::Index>(k)] == full.pot[active[k]]);
        }
        // Splitting the sources changes only the order of double-precision partial sums.
        for (int splits : {7, 64, 313}) {
            engine.set_splits(splits);
            Forces split;
            engine.compute_subset(p.pos, p.mass, active, split);
            CHECK(engine.last_splits() > 1);
            CHECK((split.acc - subset.acc).norm() <= 1e-12 * subset.acc.norm());
            CHECK((split.pot - subset.pot).norm() <= 1e-12 * subset.pot.norm());
        }
    }
}

TEST_CASE("direct-gpu on several devices: the targets' shares give the one-device forces", "[gpu][direct]")
{
    // Two engines on device 0 stand for two GPUs: the split, the threads and the merge are what
    // is tested; a machine with more GPUs runs them on different ones.
    const int visible = cuda_device_count();
    const std::vector<int> devices = visible > 1 ? std::vector<int>{0, 1, 0} : std::vector<int>{0, 0, 0};
    const ParticleSet p = test::clustered_particles(30001, 3);
    for (Precision prec : {Precision::Float, Precision::Double}) {
        INFO("precision " << precision_name(prec));
        DirectGpuEngine one(GravityParams{1.0, 1e-3}, prec);
        MultiGpuDirectEngine many(GravityParams{1.0, 1e-3}, prec, devices);
        Forces a, b;
        one.compute(p.pos, p.mass, a);
        many.compute(p.pos, p.mass, b);
        REQUIRE(b.acc.cols() == a.acc.cols());
        CHECK((b.acc - a.acc).norm() <= 1e-6 * a.acc.norm()); // the shares' j-splits round differently
        CHECK((b.pot - a.pot).norm() <= 1e-6 * a.pot.norm());
        const std::vector<std::int32_t> few = {5, 30000, 17, 2}; // a few, not sorted
        many.compute_subset(p.pos, p.mass, few, b);
        for (std::size_t k = 0; k < few.size(); ++k)
            CHECK((b.acc.col(static_cast<Eigen::Index>(k)) - a.acc.col(few[k])).norm() <=
                  1e-6 * a.acc.col(few[k]).norm());
        many.compute_subset(p.pos, p.mass, {7}, b); // fewer targets than devices
        CHECK((b.acc.col(0) - a.acc.col(7)).norm() <= 1e-6 * a.acc.col(7).norm());
        const PhaseTimes times = many.last_phase_times();
        CHECK(times.size() == 3);
    }
    // A device's error reaches the caller.
    ParticleSet q = p;
    q.pos.col(29000) = q.pos.col(28000);
    MultiGpuDirectEngine unsoftened(GravityParams{1.0, 0.0}, Precision::Double, devices);
    Forces f;
    CHECK_THROWS_WITH(unsoftened.compute(q.pos, q.mass, f), Catch::Contains("particles 28000 and 29000"));
}

// A run's error sample (direct-gpu over every GPU) beside a tree on the current device: the tree's
// next call ran on the last device the direct engine had made current, with its buffers on the
// first, and the kernel stopped on an illegal address.
TEST_CASE("direct-gpu on other devices leaves the caller's device current for tree-gpu", "[gpu][direct]")
{
    if (cuda_device_count() < 2) GROVE_SKIP_TEST("one GPU visible: no other device to switch to");
    select_cuda_device(0);
    const ParticleSet p = test::clustered_particles(20000, 4);
    TreeGpuEngine tree(TreeParams{}, GravityParams{1.0, 1e-3});
    Forces before, after, f;
    tree.compute(p.pos, p.mass, before);
    {
        MultiGpuDirectEngine many(GravityParams{1.0, 1e-3}, Precision::Float, {0, 1});
        CHECK(current_cuda_device() == 0);
        DirectGpuEngine other(GravityParams{1.0, 1e-3}, Precision::Float, 1);
        CHECK(current_cuda_device() == 0);
        other.compute(p.pos, p.mass, f);
        CHECK(current_cuda_device() == 0);
        many.compute(p.pos, p.mass, f);
        CHECK(current_cuda_device() == 0);
    }
    CHECK(current_cuda_device() == 0); // after their destructors too
    tree.compute(p.pos, p.mass, after);
    CHECK(after.acc == before.acc);
}

TEST_CASE("direct-gpu: the inner loops alone stay under their instruction-count limits", "[gpu][direct]")
{
    // A loop faster than its limit means the PTX counts (gpu/kernel_costs.hpp) or the device's
    // figures are wrong; one far below it (under half) means the loop kernels no longer run the
    // formula they claim to (a dead loop would be far faster, a broken one far slower).
    const DeviceSummary dev = describe_device();
    const double fp32_peak = static_cast<double>(dev.sm_count) * dev.fp32_lanes_per_sm * dev.clock_ghz * 1e9;
    const auto direct = measure_direct_loop_ceilings();
    REQUIRE(direct.size() == 3);
    for (int k = 0; k < 2; ++k) {
        CHECK(direct[k].rate < 1.02 * dev.limit(kDirectFloatCost));
        CHECK(direct[k].rate > 0.5 * dev.limit(kDirectFloatCost));
    }
    CHECK(direct[2].rate < 1.02 * fp32_peak);
    CHECK(direct[2].rate > 0.5 * fp32_peak);
    const auto hermite = measure_hermite_loop_ceilings();
    REQUIRE(hermite.size() == 1);
    CHECK(hermite[0].rate < 1.02 * dev.limit(kHermiteMixedCost));
    CHECK(hermite[0].rate > 0.5 * dev.limit(kHermiteMixedCost));
}
