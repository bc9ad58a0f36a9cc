// [gpu] The GPU tree engine against the host walk of the same float tree (lists identical), the
// CPU tree engine (forces within float rounding) and direct summation (accuracy), plus its own
// invariants: coverage, degenerate inputs, repeatability.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/diagnostics.hpp"
#include "core/force_errors.hpp"
#include "core/galaxy_model.hpp"
#include "core/ic_models.hpp"
#include "core/particle_store.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "core/softening.hpp"
#include "engines/engines.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/tree_gpu.h"
#include "integrators/block_leapfrog.hpp"
#include "integrators/integrator.hpp"
#include "integrators/leapfrog.hpp"
#include "support/potential_check.hpp"
#include "support/test_support.hpp"
#include "support/tree_checks.hpp"
#include "support/tree_order_check.hpp"
#include "tree/build.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/float_tree.hpp"
#include "tree/locally_essential.hpp"
#include "tree/tree_cpu.hpp"
#include "tree/walk.hpp"

using namespace grove;

namespace {

// The same offsets, and in each group the same entries in the same order: the device's warps
// write what the host's walk in rounds visits, in its order (tree/walk.hpp, gpu/tree_walk.cu).
void check_same_lists(const InteractionLists& gpu, const InteractionLists& ref)
{
    REQUIRE(gpu.node_offset == ref.node_offset);
    REQUIRE(gpu.leaf_offset == ref.leaf_offset);
    CHECK(gpu.node_list == ref.node_list);
    CHECK(gpu.leaf_list == ref.leaf_list);
}

} // namespace

TEST_CASE("tree-gpu lists equal the host walk of the same float tree, group by group", "[gpu][tree]")
{
    const bool clustered = GENERATE(false, true);
    const OpeningCriterion criterion =
        GENERATE(OpeningCriterion::geometric(0.3), OpeningCriterion::geometric(0.75), OpeningCriterion::geometric(1.5),
                 OpeningCriterion::relative(1e-2), OpeningCriterion::relative(1e-4));
    INFO(mac_name(criterion.kind) << " " << criterion.parameter());
    const ParticleSet p = clustered ? test::clustered_particles(20000, 7) : test::random_particles(20000, 7);
    const Octree tree = build_octree(p.pos, p.mass, BuildParams{16, 32});
    TreeGpuEngine engine(TreeParams{0.5, {16, 32}}, GravityParams{});
    // The relative criterion's estimate: the exact accelerations, given to both walks.
    Forces exact;
    DirectCpuEngine(GravityParams{}).compute(p.pos, p.mass, exact);
    AccelerationEstimate estimate;
    estimate.set(exact.acc, 1.0);
    engine.set_acceleration_estimate(exact.acc);
    engine.upload(tree);
    Forces f;
    engine.evaluate(criterion, f);
    const InteractionLists gpu = engine.download_lists();
    FloatTree host(tree);
    const InteractionLists ref =
        test::lists_in_rounds(set_opening_criterion(host, host.view(), criterion, tree.groups, estimate.magnitudes()));
    CHECK(engine.last_walk_passes() == 2);
    check_same_lists(gpu, ref);
    // The same evaluation again walks once, into the room the first walk measured (unless that
    // room would take more than four times the lists' memory, as the relative criterion's most
    // uneven lists can): same lists, same forces bit for bit.
    Forces again;
    engine.evaluate(criterion, again);
    if (criterion.kind == MacKind::geometric) CHECK(engine.last_walk_passes() == 1);
    CHECK(engine.last_walk_passes() <= 2);
    check_same_lists(engine.download_lists(), ref);
    CHECK(again.acc == f.acc);
    CHECK(again.pot == f.pot);
}

TEST_CASE("tree-gpu: a one-pass walk whose lists outgrow their room walks again in two passes", "[gpu][tree]")
{
    // Small groups first (short lists), then the same particles in groups eight times larger
    // under the same criterion: the one-pass walk cuts the longer lists, sees it and repeats the
    // evaluation with both passes.
    const OpeningCriterion criterion = OpeningCriterion::geometric(0.5);
    TreeGpuEngine engine(TreeParams{0.5, {16, 16}}, GravityParams{1.0, 1e-3});
    const ParticleSet p = test::clustered_particles(20000, 5);
    const Octree small_tree = build_octree(p.pos, p.mass, BuildParams{16, 16});
    const Octree big_tree = build_octree(p.pos, p.mass, BuildParams{16, 128});
    Forces f, fresh;
    engine.upload(small_tree);
    engine.evaluate(criterion, f);
    engine.evaluate(criterion, f);
    REQUIRE(engine.last_walk_passes() == 1);
    engine.upload(big_tree);
    engine.evaluate(criterion, f);
    CHECK(engine.last_walk_passes() == 3);
    TreeGpuEngine other(TreeParams{0.5, {16, 128}}, GravityParams{1.0, 1e-3});
    other.upload(big_tree);
    other.evaluate(criterion, fresh);
    CHECK(f.acc == fresh.acc);
    CHECK(f.pot == fresh.pot);
    FloatTree host(big_tree);
    const InteractionLists ref =
        test::lists_in_rounds(set_opening_criterion(host, host.view(), criterion, big_tree.groups, {}));
    check_same_lists(engine.download_lists(), ref);
    // The room has grown: the next evaluation walks once again.
    engine.evaluate(criterion, f);
    CHECK(engine.last_walk_passes() == 1);
    CHECK(f.acc == fresh.acc);
}

TEST_CASE("tree-gpu: long walks write the host walk's lists, into their room, the pool or two passes", "[gpu][tree]")
{
    // The relative criterion with the exact |a|, then with |a| = 0 for a few particles: their
    // groups open every cell, so that their walks run far past the others and their lists past
    // any room the last walk measured.
    const ParticleSet p = test::clustered_particles(20000, 11);
    const Octree tree = build_octree(p.pos, p.mass, BuildParams{16, 32});
    const OpeningCriterion criterion = OpeningCriterion::relative(1e-3);
    Forces exact;
    DirectCpuEngine(GravityParams{}).compute(p.pos, p.mass, exact);
    Eigen::Matrix3Xd stalled = exact.acc;
    for (Eigen::Index i = 0; i < 40; ++i) stalled.col(i * 499).setZero();
    const auto reference = [&](const Eigen::Matrix3Xd& acc) {
        AccelerationEstimate estimate;
        estimate.set(acc, 1.0);
        FloatTree host(tree);
        return test::lists_in_rounds(
            set_opening_criterion(host, host.view(), criterion, tree.groups, estimate.magnitudes()));
    };
    const InteractionLists ref_exact = reference(exact.acc), ref_stalled = reference(stalled);
    TreeGpuEngine engine(TreeParams{0.5, {16, 32}}, GravityParams{});
    engine.upload(tree);
    Forces first, f;
    // Two passes (nothing measured yet), then one: no walk is long.
    engine.set_acceleration_estimate(exact.acc);
    engine.evaluate(criterion, first);
    CHECK(engine.last_walk_passes() == 2);
    check_same_lists(engine.download_lists(), ref_exact);
    engine.set_acceleration_estimate(exact.acc);
    engine.evaluate(criterion, f);
    CHECK(engine.last_walk_passes() == 1);
    check_same_lists(engine.download_lists(), ref_exact);
    CHECK(f.acc == first.acc);
    // The stalled groups' lists outgrow the pool the last walk measured: the one pass sees it and
    // the evaluation is made again in two passes.
    engine.set_acceleration_estimate(stalled);
    engine.evaluate(criterion, first);
    CHECK(engine.last_walk_passes() == 3);
    check_same_lists(engine.download_lists(), ref_stalled);
    // Now the pool has room for them: one pass, the long lists in the pool.
    engine.set_acceleration_estimate(stalled);
    engine.evaluate(criterion, f);
    CHECK(engine.last_walk_passes() == 1);
    check_same_lists(engine.download_lists(), ref_stalled);
    CHECK(f.acc == first.acc);
    CHECK(f.pot == first.pot);
    const std::size_t groups = tree.groups.size();
    std::int64_t longest = 0;
    for (std::size_t g = 0; g < groups; ++g) {
        const auto k = static_cast<std::int32_t>(g);
        longest = std::max(longest, ref_stalled.node_count(k) + ref_stalled.leaf_count(k));
    }
    const std::int64_t entries = ref_stalled.node_offset[groups] + ref_stalled.leaf_offset[groups];
    CHECK(longest > 3 * entries / static_cast<std::int64_t>(groups));
}

TEST_CASE("tree-gpu: every particle sees N-1 sources through its lists", "[gpu][tree]")
{
    const double theta = GENERATE(0.01, 0.5, 1.0, 4.0);
    const ParticleSet p = test::clustered_particles(5000, 9);
    const Octree tree = build_octree(p.pos, p.mass, BuildParams{8, 16});
    TreeGpuEngine engine(TreeParams{theta, {8, 16}}, GravityParams{});
    engine.upload(tree);
    Forces f;
    engine.evaluate(OpeningCriterion::geometric(theta), f);
    const InteractionLists lists = engine.download_lists();
    for (std::size_t g = 0; g < tree.groups.size(); ++g) {
        std::int64_t seen = 0;
        for (auto k = lists.node_offset[g]; k < lists.node_offset[g + 1]; ++k) {
            const ParticleRange r = tree.range[static_cast<std::size_t>(lists.node_list[static_cast<std::size_t>(k)])];
            seen += r.end - r.begin;
        }
        for (auto k = lists.leaf_offset[g]; k < lists.leaf_offset[g + 1]; ++k) {
            const ParticleRange r = tree.range[static_cast<std::size_t>(lists.leaf_list[static_cast<std::size_t>(k)])];
            seen += r.end - r.begin;
        }
        INFO("group " << g << " theta " << theta);
        REQUIRE(seen == static_cast<std::int64_t>(p.size())); // N-1 others plus itself in its own leaf
    }
}

TEST_CASE("tree-gpu: lists evaluated in stretches sum to the whole lists' forces, the same bits every time",
          "[gpu][tree]")
{
    // A block tick's few pieces have their lists cut into stretches, each a warp's, summed in a
    // fixed order. Same lists, so the sums differ from the whole lists' by float rounding only;
    // more stretches than a list has entries leave some empty. eps 0 takes the leaf kernel's
    // guarded pairs, as an unsoftened run does.
    const bool clustered = GENERATE(false, true);
    const double eps = GENERATE(0.0, 1e-3);
    const ParticleSet p = clustered ? test::clustered_particles(20000, 4) : test::random_particles(20000, 4);
    const Octree tree = build_octree(p.pos, p.mass, BuildParams{16, 32});
    TreeGpuEngine engine(TreeParams{0.5, {16, 32}}, GravityParams{1.0, eps});
    engine.upload(tree);
    Forces f;
    engine.evaluate(OpeningCriterion::geometric(0.5), f);
    const std::vector<float> whole = engine.sum_last_lists(1);
    for (const int segments : {2, 3, 16, 1000}) {
        const std::vector<float> split = engine.sum_last_lists(segments);
        REQUIRE(split.size() == whole.size());
        double worst_acc = 0, worst_pot = 0;
        for (std::size_t i = 0; i < p.size(); ++i) {
            const float* a = &whole[4 * i];
            const float* b = &split[4 * i];
            const double norm = std::sqrt(double(a[0]) * a[0] + double(a[1]) * a[1] + double(a[2]) * a[2]);
            const double diff = std::sqrt(double(a[0] - b[0]) * (a[0] - b[0]) + double(a[1] - b[1]) * (a[1] - b[1]) +
                                          double(a[2] - b[2]) * (a[2] - b[2]));
            worst_acc = std::max(worst_acc, diff / norm);
            worst_pot = std::max(worst_pot, std::abs(double(a[3]) - b[3]) / std::abs(double(a[3])));
        }
        INFO(segments << " stretches: largest relative difference, acc " << worst_acc << ", pot " << worst_pot);
        // Each stretch's sum is rounded to float once more: the worst particle (an acceleration
        // that nearly cancels) moves by about 1e-5 at a thousand stretches (the H100).
        const double bound = 1e-5 * std::sqrt(1.0 + segments / 16.0);
        CHECK(worst_acc < bound);
        CHECK(worst_pot < bound);
        CHECK(worst_acc > 0); // the stretches were summed apart, or this tests nothing
        CHECK(engine.sum_last_lists(segments) == split);
    }
    // Groups wider than a stretch's targets are refused, not summed wrong.
    const Octree wide = build_octree(p.pos, p.mass, BuildParams{16, 64});
    TreeGpuEngine wide_engine(TreeParams{0.5, {16, 64}}, GravityParams{1.0, eps});
    wide_engine.upload(wide);
    wide_engine.evaluate(OpeningCriterion::geometric(0.5), f);
    CHECK_THROWS_AS(wide_engine.sum_last_lists(2), std::invalid_argument);
    CHECK(wide_engine.sum_last_lists(1).size() == 4 * p.size());
}

TEST_CASE("tree-gpu forces equal the CPU tree engine within float rounding", "[gpu][tree]")
{
    const double eps = GENERATE(0.0, 1e-3);
    const int ncrit = GENERATE(8, 64, 300); // 300: groups beyond one warp's 128 targets
    // Random points: float positions resolve every separation to ~1e-7 relative. (The clustered
    // set's 1e-4-wide clump sits at x = 0.7, where a float ulp is 6e-8: its pairs differ from the
    // double engine by ~1e-3 from the positions alone, whatever the tree does.)
    const ParticleSet p = test::random_particles(30000, 3);
    const TreeParams params{0.6, 64, ncrit};
    Forces cpu, gpu;
    TreeCpuEngine(params, GravityParams{1.0, eps}).compute(p.pos, p.mass, cpu);
    TreeGpuEngine(params, GravityParams{1.0, eps}).compute(p.pos, p.mass, gpu);
    const std::vector<double> qa = percentiles(relative_errors(gpu.acc, cpu.acc), {50, 99.9});
    const std::vector<double> qp = percentiles(relative_errors(gpu.pot, cpu.pot), {50, 99.9});
    INFO("eps " << eps << " ncrit " << ncrit << ": acc p50 " << qa[0] << " p99.9 " << qa[1] << "; pot p50 " << qp[0]
                << " p99.9 " << qp[1]);
    CHECK(qa[0] < 2e-6);
    CHECK(qa[1] < 1e-4); // a few float-versus-double opening decisions at the boundary
    CHECK(qp[0] < 2e-6);
    CHECK(qp[1] < 1e-4);
}

TEST_CASE("tree-gpu evaluates a domain's tree with other domains' LETs appended as tree-cpu does", "[gpu][tree][let]")
{
    // Three Morton domains of random points; each domain's forest (its tree, then the LETs the
    // other two send it) evaluated by both engines, and the forests' forces against one tree's;
    // with one softening, and softened by type (a third of the points each of three lengths).
    const ParticleSet p = test::random_particles(30000, 5);
    const TreeParams params{0.6, 64, 64};
    std::vector<std::uint8_t> all_types(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) all_types[i] = static_cast<std::uint8_t>(1 + i % 3);
    GravityParams by_type{1.0, 1e-3};
    by_type.eps_type[1] = 3e-3;
    by_type.eps_type[3] = 5e-4;
    const Octree whole = build_octree(p.pos, p.mass, params.build);
    std::vector<Octree> trees;
    std::vector<std::vector<std::int32_t>> index;
    std::vector<std::vector<std::uint8_t>> types;
    for (int k = 0; k < 3; ++k) {
        std::vector<std::int32_t> mine;
        for (std::size_t s = p.size() * k / 3; s < p.size() * (k + 1) / 3; ++s)
            mine.push_back(static_cast<std::int32_t>(whole.order[s]));
        Eigen::VectorXd m(static_cast<Eigen::Index>(mine.size()));
        std::vector<std::uint8_t> t(mine.size());
        for (std::size_t i = 0; i < mine.size(); ++i) {
            m[static_cast<Eigen::Index>(i)] = p.mass[mine[i]];
            t[i] = all_types[static_cast<std::size_t>(mine[i])];
        }
        trees.push_back(build_octree(select_columns(p.pos, mine), m, params.build));
        index.push_back(mine);
        types.push_back(t);
    }
    for (const GravityParams& gravity : {GravityParams{1.0, 1e-3}, by_type}) {
        const bool typed = gravity.per_type();
        INFO((typed ? "softened by type" : "one softening"));
        Forces one, exact;
        TreeCpuEngine(params, gravity).compute(p.pos, p.mass, typed ? TypesRef(all_types) : TypesRef{}, one);
        DirectCpuEngine(gravity).compute(p.pos, p.mass, typed ? TypesRef(all_types) : TypesRef{}, exact);
        TreeCpuEngine cpu_engine(params, gravity);
        TreeGpuEngine gpu_engine(params, gravity);
        Forces gpu_all;
        gpu_all.acc.setZero(3, static_cast<Eigen::Index>(p.size()));
        // What each domain sends softened by type: its tree's moments of h, its types in tree order.
        std::vector<SofteningMoments<double>> moments(3);
        std::vector<std::vector<std::uint8_t>> sorted(3);
        for (std::size_t j = 0; j < 3 && typed; ++j) {
            make_softening_moments(trees[j], half_squared_softening(gravity, TypesRef(types[j]), types[j].size(), "t"),
                                   moments[j]);
            for (std::size_t s = 0; s < trees[j].particles.size(); ++s)
                sorted[j].push_back(types[j][trees[j].order[s]]);
        }
        for (int k = 0; k < 3; ++k) {
            // The CPU's forest from LETs in full, the GPU's from compact ones, as the ranks send them.
            Octree forest = trees[static_cast<std::size_t>(k)], compact_forest = forest;
            const std::vector<DomainBox> boxes = domain_boxes(forest);
            LetFormat compact;
            compact.compact = true;
            compact.origin = boxes.front().box.centre;
            for (std::size_t j = 0; j < 3; ++j)
                if (j != static_cast<std::size_t>(k)) {
                    const LetSoftening softening{&moments[j], &sorted[j]};
                    std::vector<char> wire, compact_wire;
                    make_let(trees[j], boxes, params.opening(), wire, LetFormat{}, typed ? &softening : nullptr);
                    append_let(forest, let_bytes(wire.data(), wire.size()));
                    make_let(trees[j], boxes, params.opening(), compact_wire, compact, typed ? &softening : nullptr);
                    append_let(compact_forest, let_bytes(compact_wire.data(), compact_wire.size()));
                }
            std::vector<std::uint8_t> forest_types = types[static_cast<std::size_t>(k)];
            forest_types.insert(forest_types.end(), forest.appended_types.begin(), forest.appended_types.end());
            const TypesRef forest_typed = typed ? TypesRef(forest_types) : TypesRef{};
            Forces cpu, gpu;
            cpu_engine.load(forest, forest_typed);
            cpu_engine.evaluate_loaded(params.opening(), cpu);
            gpu_engine.load(compact_forest, forest_typed);
            gpu_engine.evaluate_loaded(params.opening(), gpu);
            const auto n = static_cast<Eigen::Index>(index[static_cast<std::size_t>(k)].size());
            const std::vector<double> qa =
                percentiles(relative_errors(gpu.acc.leftCols(n).eval(), cpu.acc.leftCols(n).eval()), {50, 99.9});
            INFO("domain " << k << ": acc p50 " << qa[0] << " p99.9 " << qa[1]);
            CHECK(qa[0] < 2e-6);
            CHECK(qa[1] < 1e-4);
            for (Eigen::Index i = 0; i < n; ++i)
                gpu_all.acc.col(index[static_cast<std::size_t>(k)][i]) = gpu.acc.col(i);
        }
        // The domains' forces are as accurate as the one tree's. (Not its forces: each tree's frame
        // has an offset of its own, so their cells, and their errors, differ.)
        const std::vector<double> domains = percentiles(relative_errors(gpu_all.acc, exact.acc), {50, 99}),
                                  whole = percentiles(relative_errors(one.acc, exact.acc), {50, 99});
        INFO("p50, p99 of the domains " << domains[0] << ", " << domains[1] << "; of one tree " << whole[0] << ", "
                                        << whole[1]);
        CHECK(domains[0] < 1.25 * whole[0]);
        CHECK(domains[1] < 1.25 * whole[1]);
    }
}

TEST_CASE("tree-gpu accuracy on the sample galaxy", "[gpu][tree][accuracy]")
{
    const ParticleSet p = read_snapshot(test::data_path("galaxy_16k.hdf5"));
    const GravityParams gravity{p.units.G, 0.05};
    Forces direct;
    DirectCpuEngine(gravity).compute(p.pos, p.mass, direct);
    // The CPU tree's bounds (tests/test_tree.cpp): float arithmetic adds ~1e-6 to each.
    const struct {
        double theta, p50, p90, p99;
    } cases[] = {{0.3, 2.5e-5, 7e-5, 1.4e-4}, {0.5, 1.3e-4, 3.4e-4, 7e-4}, {0.75, 5e-4, 1.3e-3, 2.8e-3}};
    const Octree tree = build_octree(p.pos, p.mass, BuildParams{64, 64});
    TreeGpuEngine engine(TreeParams{0.5, {64, 64}}, gravity);
    engine.upload(tree);
    for (const auto& c : cases) {
        Forces f;
        engine.evaluate(OpeningCriterion::geometric(c.theta), f);
        const std::vector<double> q = percentiles(relative_errors(f.acc, direct.acc), {50, 90, 99});
        INFO("theta " << c.theta << ": p50 " << q[0] << " p90 " << q[1] << " p99 " << q[2]);
        CHECK(q[0] < c.p50);
        CHECK(q[1] < c.p90);
        CHECK(q[2] < c.p99);
    }
}

TEST_CASE("tree-gpu: degenerate inputs and repeatability", "[gpu][tree]")
{
    TreeGpuEngine engine(TreeParams{0.5, {8, 8}}, GravityParams{1.0, 0.0});
    Forces f;
    SECTION("no particles")
    {
        engine.compute(Eigen::Matrix3Xd(3, 0), Eigen::VectorXd(0), f);
        CHECK(f.acc.cols() == 0);
    }
    SECTION("one particle feels nothing")
    {
        engine.compute(Eigen::Matrix3Xd::Ones(3, 1), Eigen::VectorXd::Ones(1), f);
        CHECK(f.acc.norm() == 0);
        CHECK(f.pot[0] == 0);
    }
    SECTION("one group equals direct summation")
    {
        const ParticleSet p = test::random_particles(7, 2);
        Forces ref;
        DirectCpuEngine(GravityParams{1.0, 0.0}).compute(p.pos, p.mass, ref);
        engine.compute(p.pos, p.mass, f);
        CHECK((f.acc - ref.acc).norm() < 1e-5 * ref.acc.norm());
    }
    SECTION("coincident particles with eps = 0 give no NaN")
    {
        ParticleSet p = test::random_particles(500, 4);
        for (Eigen::Index i = 0; i < 300; ++i) p.pos.col(i) = Eigen::Vector3d(0.25, -0.5, 0.125);
        engine.compute(p.pos, p.mass, f);
        CHECK(f.acc.allFinite());
        CHECK(f.pot.allFinite());
        // The tree drops the pairs at zero distance (the direct engines refuse them): its total
        // potential is that of the 200 scattered particles, the 300 coincident ones feeling only them.
        double pot = 0;
        for (Eigen::Index i = 0; i < p.pos.cols(); ++i)
            for (Eigen::Index j = 0; j < p.pos.cols(); ++j) {
                const double r = (p.pos.col(i) - p.pos.col(j)).norm();
                if (r > 0) pot -= p.mass[j] / r;
            }
        CHECK(f.pot.sum() == Approx(pot).epsilon(1e-3));
    }
    SECTION("all particles at one point")
    {
        Eigen::Matrix3Xd pos = Eigen::Matrix3Xd::Constant(3, 200, 3.0);
        engine.compute(pos, Eigen::VectorXd::Ones(200), f);
        CHECK(f.acc.norm() == 0);
        CHECK(f.pot.norm() == 0);
    }
    SECTION("repeated calls are bit-identical")
    {
        const ParticleSet p = test::clustered_particles(20000, 5);
        Forces a, b;
        engine.compute(p.pos, p.mass, a);
        engine.compute(p.pos, p.mass, b);
        CHECK(a.acc == b.acc);
        CHECK(a.pot == b.pot);
    }
    SECTION("phase times: pack and upload after upload(), every phase plus the rest after compute()")
    {
        const ParticleSet p = test::clustered_particles(50000, 6);
        const Octree tree = build_octree(p.pos, p.mass, BuildParams{8, 8});
        engine.upload(tree);
        auto has = [](const PhaseTimes& times, const char* name) {
            return std::any_of(times.begin(), times.end(), [&](const auto& t) { return t.first == name; });
        };
        const PhaseTimes uploaded = engine.last_phase_times();
        REQUIRE(uploaded.size() == 2);
        CHECK(has(uploaded, "pack"));
        CHECK(has(uploaded, "upload"));
        CHECK(uploaded[0].second + uploaded[1].second > 0);
        const auto start = std::chrono::steady_clock::now();
        engine.compute(p.pos, p.mass, f);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const PhaseTimes all = engine.last_phase_times();
        double sum = 0;
        for (const auto& [name, seconds] : all) {
            CHECK(seconds >= 0);
            sum += seconds;
        }
        for (const char* name : {"keys", "sort", "build", "pack", "upload", "pass 2", "leaves", "convert", "other"})
            CHECK(has(all, name));
        CHECK(sum <= wall);
        CHECK(sum >= 0.9 * wall); // "other" makes the phases add up to the call
    }
}

TEST_CASE("device and pinned buffers grow with headroom and name what did not fit", "[gpu][buffers]")
{
    gpu::DeviceBuffer<double> d;
    d.reserve(800, "test");
    CHECK(d.capacity() == 900); // n + n/8, so a run's next slightly larger tree reuses it
    const double* first = d.data();
    d.reserve(850, "test");
    CHECK(d.data() == first);
    d.reserve(901, "test");
    CHECK(d.capacity() >= 901);
    // 2^60 bytes fit nowhere: a clear error that names the buffer, and the device still works.
    CHECK_THROWS_WITH(d.reserve(std::size_t{1} << 57, "test lists"),
                      Catch::Contains("out of GPU memory") && Catch::Contains("test lists"));
    CHECK(cudaGetLastError() == cudaSuccess);
    d.reserve(10, "test");
    CHECK(d.capacity() >= 10);
    gpu::PinnedBuffer<float> h;
    h.reserve(1000, "test");
    h[999] = 1.5f;
    CHECK(h[999] == 1.5f);
    CHECK_THROWS_WITH(h.reserve(std::size_t{1} << 58, "test host"), Catch::Contains("test host"));
}

TEST_CASE("tree-gpu shares of the groups add up to the whole, bit for bit", "[gpu][tree]")
{
    const ParticleSet p = test::clustered_particles(30000, 12);
    Forces whole;
    TreeGpuEngine(TreeParams{0.5, {16, 32}}, GravityParams{1.0, 0.01}).compute(p.pos, p.mass, whole);
    for (const int count : {2, 3}) {
        INFO(count << " shares");
        std::vector<std::unique_ptr<TreeGpuEngine>> shares;
        for (int index = 0; index < count; ++index) {
            shares.push_back(std::make_unique<TreeGpuEngine>(TreeParams{0.5, {16, 32}}, GravityParams{1.0, 0.01}));
            shares.back()->set_share(index, count);
        }
        // First equal particle counts, then shares cut to equal costs by the first round's lists.
        std::vector<double> costs(p.size(), 0.0);
        for (int round = 0; round < 2; ++round) {
            INFO("round " << round);
            Eigen::Matrix3Xd acc = Eigen::Matrix3Xd::Zero(3, p.pos.cols());
            Eigen::VectorXd pot = Eigen::VectorXd::Zero(p.mass.size());
            std::vector<double> next(p.size(), 0.0);
            for (auto& engine : shares) {
                if (round == 1) engine->set_share_costs(costs);
                Forces part;
                engine->compute(p.pos, p.mass, part);
                acc += part.acc;
                pot += part.pot;
                const std::vector<double> mine = engine->last_particle_costs();
                REQUIRE(mine.size() == p.size());
                for (std::size_t i = 0; i < mine.size(); ++i) next[i] += mine[i];
            }
            CHECK(acc == whole.acc);
            CHECK(pot == whole.pot);
            for (double c : next) REQUIRE(c > 0); // every particle's cost from exactly one share
            costs = next;
        }
    }
}

TEST_CASE("tree-gpu forces in its own order are compute()'s permuted by the order it hands over", "[gpu][tree]")
{
    test::check_forces_in_own_order(test::clustered_particles(20000, 13), [](const TreeParams& params) {
        return std::make_unique<TreeGpuEngine>(params, GravityParams{1.0, 0.01});
    });
}

TEST_CASE("tree-gpu with look-ahead: refitted trees built from the leapfrog's prediction, the orbits of fresh builds",
          "[gpu][tree][lookahead]")
{
    test::check_lookahead_orbits(
        make_plummer(2000, 9),
        [](const TreeParams& params) {
            return std::make_unique<TreeGpuEngine>(params, GravityParams{1.0, 0.02});
        },
        [](ForceEngine& e) { return static_cast<TreeGpuEngine&>(e).loaded_statistics(); });
}

namespace {

// The resident leapfrog's tests: a Plummer sphere, a look-ahead tree, a step of 1/128.
struct ResidentCase {
    ParticleSet start = make_plummer(20000, 4);
    TreeParams params = lookahead_params();
    GravityParams gravity{1.0, 0.02};
    double dt = 1.0 / 128;
    static TreeParams lookahead_params()
    {
        TreeParams p{0.5, {64, 64}};
        p.lookahead = true;
        return p;
    }
};

} // namespace

TEST_CASE("tree-gpu resident leapfrog: the host pipeline's orbits, the caller's order back, outputs change nothing",
          "[gpu][tree][resident]")
{
    const ResidentCase rc;
    const ParticleSet& start = rc.start;
    const TreeParams& params = rc.params;
    const GravityParams& gravity = rc.gravity;
    const double dt = rc.dt;
    TreeGpuEngine on_host(params, gravity), resident(params, gravity), resident_synced(params, gravity),
        resident_output(params, gravity), resident_restarted(params, gravity);
    Leapfrog a_lf(on_host, dt, false), b_lf(resident, dt), c_lf(resident_synced, dt), d_lf(resident_output, dt),
        r_lf(resident_restarted, dt);
    REQUIRE(!a_lf.is_resident());
    REQUIRE(b_lf.is_resident());
    ParticleSet a = start, b = start, c = start, d = start, restarted;
    ParticleStore sa(a), sb(b), sc(c), sd(d), sr(restarted);
    a_lf.start(sa);
    b_lf.start(sb);
    c_lf.start(sc);
    d_lf.start(sd);
    // The resident engine's first forces are evaluated on the device (no tree on the host path),
    // from the structure of the same build as the host pipeline's: equal to float rounding.
    const auto phase_named = [](const PhaseTimes& times, const std::string& name) {
        return std::any_of(times.begin(), times.end(), [&](const auto& t) { return t.first == name; });
    };
    CHECK(phase_named(on_host.last_phase_times(), "build"));
    CHECK_FALSE(phase_named(resident.last_phase_times(), "build"));
    CHECK_FALSE(sb.on_device());
    CHECK((a.acc - b.acc).norm() < 1e-6 * a.acc.norm());
    CHECK((a.pot - b.pot).norm() < 1e-6 * a.pot.norm());
    for (int s = 0; s < 16; ++s) {
        a_lf.step(sa);
        b_lf.step(sb);
        c_lf.step(sc);
        d_lf.step(sd);
        if (s > 9) r_lf.step(sr);
        if (s == 5) sc.host(); // a diagnostics line: the run goes on as if there were none
        if (s == 9) {          // a snapshot with a checkpoint, from which a second run restarts
            sd.restore_order();
            restarted = d;
            r_lf.resume(sr);
        }
    }
    CHECK(sb.on_device());
    CHECK_FALSE(sa.on_device());
    // A diagnostics line made on the device: the host's sums of the same state, to rounding.
    Diagnostics on_device;
    REQUIRE(sb.device_diagnostics({0.1, 0.5, 0.9, 1.0}, on_device));
    const Diagnostics here = compute_diagnostics(sb.host(), b.pot, {0.1, 0.5, 0.9, 1.0});
    CHECK(on_device.mass == Approx(here.mass).epsilon(1e-13));
    CHECK(on_device.kinetic == Approx(here.kinetic).epsilon(1e-12));
    CHECK(on_device.potential == Approx(here.potential).epsilon(1e-12));
    CHECK(on_device.total == Approx(here.total).epsilon(1e-12));
    const double mv = (b.vel.colwise().norm().transpose().array() * b.mass.array()).sum();
    const double mxv = mv * b.pos.colwise().norm().maxCoeff();
    CHECK((on_device.momentum - here.momentum).norm() < 1e-13 * mv);
    CHECK((on_device.angular_momentum - here.angular_momentum).norm() < 1e-13 * mxv);
    CHECK((on_device.centre_of_mass - here.centre_of_mass).norm() < 1e-13 * b.pos.colwise().norm().maxCoeff());
    REQUIRE(on_device.lagrangian_radii.size() == 4);
    for (int f = 0; f < 4; ++f) CHECK(on_device.lagrangian_radii[f] == Approx(here.lagrangian_radii[f]).epsilon(1e-12));
    CHECK_THROWS_AS(sb.device_diagnostics({0.5, 1.5}, on_device), std::invalid_argument);
    sa.restore_order();
    sb.restore_order();
    sc.restore_order();
    sd.restore_order();
    sr.restore_order();
    CHECK(b.time == a.time);
    test::check_same_columns(c, b); // bit for bit
    CHECK(restarted.time == d.time);
    test::check_same_columns(restarted, d);
    CHECK((d.pos - b.pos).norm() < 1e-4 * (b.pos - start.pos).norm()); // the reload changed only the trees
    // The host pipeline's first tree is a fresh build, the resident one's a refitted look-ahead
    // structure: their forces differ by the tree's error from the first step on, and the orbits by
    // that much times dt^2.
    const double moved = (a.pos - start.pos).norm();
    INFO("position difference " << (a.pos - b.pos).norm() << " of a displacement " << moved);
    CHECK((a.pos - b.pos).norm() < 1e-4 * moved);
    CHECK((a.vel - b.vel).norm() < 1e-5 * a.vel.norm());
    CHECK((a.acc - b.acc).norm() < 1e-3 * a.acc.norm());
    CHECK((a.pot - b.pot).norm() < 1e-4 * a.pot.norm());
    // In the caller's order: the positions started there.
    CHECK((b.pos - start.pos).norm() < 2 * moved);
    const double ea = compute_diagnostics(a, a.pot).total, eb = compute_diagnostics(b, b.pot).total;
    CHECK(std::abs(ea - eb) < 1e-6 * std::abs(ea));
    // The resident forces are those of the positions: a fresh evaluation agrees to the tree's error.
    Forces fresh;
    TreeGpuEngine(TreeParams{0.5, {64, 64}}, gravity).compute(b.pos, b.mass, fresh);
    CHECK((fresh.acc - b.acc).norm() < 1e-3 * b.acc.norm());
    // The steps leave the potentials out; storing makes them from the last step's lists.
    CHECK((fresh.pot - b.pot).norm() < 1e-4 * b.pot.norm());
}

TEST_CASE("tree-gpu resident leapfrog: a non-finite velocity, a handful of particles, and where it may run",
          "[gpu][tree][resident]")
{
    const ResidentCase rc;
    const auto& [start, params, gravity, dt] = rc;
    // A non-finite velocity stops the step with the leapfrog's error, not a crash or a NaN orbit.
    ParticleSet e = start;
    TreeGpuEngine broken(params, gravity);
    Leapfrog e_lf(broken, dt);
    ParticleStore se(e);
    e_lf.start(se);
    e.vel(0, 7) = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_WITH(e_lf.step(se), Catch::Contains("non-finite"));

    // A handful of particles (one leaf, one group) and a single one: the host pipeline's orbits.
    for (const std::size_t n : {1, 2, 5}) {
        ParticleSet few = make_plummer(std::max<std::size_t>(n, 2), 6);
        if (n == 1) {
            few.resize(1);
            few.mass[0] = 1;
            few.pos.col(0) << 0.1, 0.2, 0.3;
            few.vel.col(0) << 0.5, 0, 0;
        }
        ParticleSet few_host = few;
        TreeGpuEngine few_engine(params, gravity), few_host_engine(params, gravity);
        Leapfrog f_lf(few_engine, dt), h_lf(few_host_engine, dt, false);
        REQUIRE(f_lf.is_resident());
        ParticleStore sf(few), sh(few_host);
        f_lf.start(sf);
        h_lf.start(sh);
        for (int s = 0; s < 4; ++s) {
            f_lf.step(sf);
            h_lf.step(sh);
        }
        sf.restore_order();
        sh.restore_order();
        INFO("N = " << n);
        CHECK((few.pos - few_host.pos).norm() <= 1e-6 * few_host.pos.norm());
        CHECK((few.vel - few_host.vel).norm() <= 1e-6 * std::max(1.0, few_host.vel.norm()));
    }

    // Only where the whole step can run on the device.
    TreeParams reuse = params, no_lookahead = params;
    reuse.rebuild_every = 4;
    no_lookahead.lookahead = false;
    CHECK(TreeGpuEngine(reuse, gravity).device_particles() == nullptr);
    CHECK(TreeGpuEngine(no_lookahead, gravity).device_particles() == nullptr);
    // A store that holds the caller's order stays on the host.
    ParticleSet g = start;
    ParticleStore held(g, false);
    TreeGpuEngine held_engine(params, gravity);
    Leapfrog g_lf(held_engine, dt);
    g_lf.start(held);
    g_lf.step(held);
    CHECK_FALSE(held.on_device());
    CHECK(held.caller_index().empty());
}

TEST_CASE("tree-gpu resident leapfrog: a step whose one-pass walk outgrows its room kicks once, after the walk again",
          "[gpu][tree][resident]")
{
    // The room of a one-pass walk is the last walk's under the same criterion: after steps of a few
    // hundred particles, the first step of twenty thousand cuts its lists and is evaluated again.
    // The closing kick queued behind the cut evaluation must leave the velocities as they were.
    const ResidentCase rc;
    const auto& [start, params, gravity, dt] = rc;
    TreeGpuEngine reused(params, gravity), fresh(params, gravity);
    {
        ParticleSet few = make_plummer(512, 9);
        Leapfrog lf(reused, dt);
        ParticleStore s(few);
        lf.start(s);
        for (int k = 0; k < 3; ++k) lf.step(s);
        REQUIRE(s.on_device());
        s.restore_order();
    }
    ParticleSet a = start;
    {
        Leapfrog lf(fresh, dt);
        ParticleStore s(a);
        lf.start(s); // a's forces
        s.restore_order();
    }
    ParticleSet b = a;
    Leapfrog a_lf(fresh, dt), b_lf(reused, dt);
    ParticleStore sa(a), sb(b);
    a_lf.resume(sa);
    b_lf.resume(sb);
    a_lf.step(sa);
    b_lf.step(sb);
    REQUIRE(sb.on_device());
    CHECK(reused.last_walk_passes() == 3);
    CHECK(fresh.last_walk_passes() != 3);
    // The next step's tree is the first look-ahead tree, refitted: its walk measures its lists in
    // two passes (its cells grew; the room came from a tree built from the positions themselves),
    // and the step after it walks once into what they measured, with nothing made again.
    a_lf.step(sa);
    b_lf.step(sb);
    CHECK(reused.last_walk_passes() == 2);
    CHECK(fresh.last_walk_passes() == 2);
    a_lf.step(sa);
    b_lf.step(sb);
    CHECK(reused.last_walk_passes() != 3);
    CHECK(fresh.last_walk_passes() != 3);
    sa.restore_order();
    sb.restore_order();
    test::check_same_columns(b, a); // the same lists, so bit for bit
}

TEST_CASE("tree-gpu resident leapfrog with one particle flung far away: the lists of the sphere without it",
          "[gpu][tree][resident]")
{
    // At 10^6 the bounding cube's finest cells are 1 wide, and 4 ulps of the largest coordinate
    // are about 0.5: without the keys' frame and the local pads every group at the centre would
    // take most of the sphere's particles one by one. (The float tree's origin, the centre of
    // mass, moves by 50: positions at the centre keep 4e-6 of their float precision.)
    const ResidentCase rc;
    ParticleSet far = rc.start;
    far.pos.col(0) = Eigen::Vector3d(1e6, -2e5, 3e5);
    far.vel.col(0).setZero();
    const auto run = [&](ParticleSet p) {
        TreeGpuEngine resident(rc.params, rc.gravity);
        Leapfrog lf(resident, rc.dt);
        ParticleStore store(p);
        lf.start(store);
        REQUIRE(lf.is_resident());
        for (int s = 0; s < 3; ++s) lf.step(store);
        REQUIRE(store.on_device());
        store.restore_order();
        const TreeStats st = resident.loaded_statistics();
        Forces exact;
        DirectCpuEngine(rc.gravity).compute(p.pos, p.mass, exact);
        const std::vector<double> e = percentiles(relative_errors(p.acc, exact.acc), {50, 99});
        return std::make_pair(st.node_interactions_per_particle + st.leaf_interactions_per_particle, e);
    };
    const auto [with, e_with] = run(far);
    const auto [without, e_without] = run(rc.start);
    INFO("interactions per particle " << with << " against " << without << "; p50 / p99 " << e_with[0] << " / "
                                      << e_with[1] << " against " << e_without[0] << " / " << e_without[1]);
    CHECK(with < 1.3 * without);
    CHECK(e_with[0] < 2 * e_without[0]);
    CHECK(e_with[1] < 3 * e_without[1]);
}

TEST_CASE("tree-gpu resident leapfrog with the relative criterion: the last step's |a| scales the groups",
          "[gpu][tree][resident]")
{
    const ResidentCase rc;
    TreeParams relative = rc.params;
    relative.mac = MacKind::relative;
    relative.alpha = 1e-4;
    TreeGpuEngine on_host(relative, rc.gravity), resident(relative, rc.gravity), geometric(rc.params, rc.gravity);
    Leapfrog a_lf(on_host, rc.dt, false), b_lf(resident, rc.dt), c_lf(geometric, rc.dt);
    REQUIRE(b_lf.is_resident());
    ParticleSet a = rc.start, b = rc.start, c = rc.start;
    ParticleStore sa(a), sb(b), sc(c);
    a_lf.start(sa);
    b_lf.start(sb);
    c_lf.start(sc);
    for (int s = 0; s < 5; ++s) {
        a_lf.step(sa);
        b_lf.step(sb);
        c_lf.step(sc);
    }
    sb.restore_order();
    const Eigen::Matrix3Xd last_acc = b.acc; // what the next step's scales come from
    b_lf.step(sb);
    c_lf.step(sc);
    REQUIRE(sb.on_device());
    sb.restore_order();
    sc.restore_order();
    // The host pipeline on the same positions with the same |a|: its own tree, so the lists are not
    // the resident step's, but their errors and lengths are those of the same criterion.
    Forces exact, from_host;
    DirectCpuEngine(rc.gravity).compute(b.pos, b.mass, exact);
    TreeParams one_off = relative;
    one_off.lookahead = false;
    TreeGpuEngine fresh(one_off, rc.gravity);
    fresh.set_acceleration_estimate(last_acc);
    fresh.compute(b.pos, b.mass, from_host);
    const auto errors = [&](const Eigen::Matrix3Xd& acc) {
        return percentiles(relative_errors(acc, exact.acc), {50, 99, 100});
    };
    const std::vector<double> e_resident = errors(b.acc), e_host = errors(from_host.acc);
    const std::vector<double> e_geometric = errors(c.acc);
    INFO("p50 / p99 / max: resident " << e_resident[0] << " / " << e_resident[1] << " / " << e_resident[2] << ", host "
                                      << e_host[0] << " / " << e_host[1] << " / " << e_host[2]
                                      << ", resident at theta 0.5 " << e_geometric[1]);
    for (int q = 0; q < 3; ++q) {
        CHECK(e_resident[q] < 1.5 * e_host[q]);
        CHECK(e_host[q] < 1.5 * e_resident[q]);
    }
    CHECK(e_resident[1] < 0.2 * e_geometric[1]); // the criterion in force is not theta's
    const TreeStats s_resident = resident.loaded_statistics(), s_host = fresh.loaded_statistics();
    const double i_resident = s_resident.node_interactions_per_particle + s_resident.leaf_interactions_per_particle;
    const double i_host = s_host.node_interactions_per_particle + s_host.leaf_interactions_per_particle;
    INFO("interactions per particle: resident " << i_resident << ", host " << i_host);
    CHECK(std::abs(i_resident - i_host) < 0.1 * i_host);
    CHECK(i_resident < 0.7 * static_cast<double>(b.size())); // not a direct sum
    // The orbits of the host pipeline, to the tree's error.
    sa.restore_order();
    a_lf.step(sa);
    sa.restore_order();
    const double moved = (a.pos - rc.start.pos).norm();
    CHECK((a.pos - b.pos).norm() < 1e-4 * moved);
}

TEST_CASE("tree-gpu in batches of lists: the forces of one batch, bit for bit, in every walk", "[gpu][tree][batches]")
{
    const ParticleSet p = test::clustered_particles(20000, 5);
    const Octree tree = build_octree(p.pos, p.mass, BuildParams{16, 64});
    const GravityParams gravity{1.0, 1e-3};
    for (const OpeningCriterion criterion : {OpeningCriterion::geometric(0.5), OpeningCriterion::relative(1e-3)}) {
        TreeGpuEngine whole(TreeParams{0.5, {16, 64}}, gravity);
        Forces ref;
        whole.upload(tree);
        whole.evaluate(criterion, ref);
        REQUIRE(whole.last_list_batches() == 1);
        const TreeStats s = whole.statistics(tree).lists;
        const double entries = (s.nodes_per_group + s.leaves_per_group) * static_cast<double>(s.num_groups);
        // A third of the lists; a few groups' worth; 4 bytes, so that every batch holds one group.
        for (const double bytes : {entries * 4 / 3, 4.0 * 8 * (s.nodes_per_group + s.leaves_per_group), 4.0}) {
            INFO("list budget " << bytes << " bytes, criterion " << static_cast<int>(criterion.kind));
            TreeParams params{0.5, {16, 64}};
            params.list_memory = static_cast<std::uint64_t>(bytes);
            TreeGpuEngine batched(params, gravity);
            batched.upload(tree);
            for (int walk = 0; walk < 2; ++walk) { // two passes, then one into the measured room
                Forces f;
                batched.evaluate(criterion, f);
                CHECK(batched.last_walk_passes() == (walk == 0 ? 2 : 1));
                CHECK(batched.last_list_batches() > 1);
                if (bytes == 4.0) CHECK(batched.last_list_batches() == s.num_groups);
                CHECK(f.acc == ref.acc);
                CHECK(f.pot == ref.pot);
            }
            CHECK_THROWS_WITH(batched.download_lists(), Catch::Contains("batches"));
        }
    }
}

TEST_CASE("tree-gpu resident leapfrog in batches of lists: the orbits and potentials of one batch",
          "[gpu][tree][resident][batches]")
{
    const ResidentCase rc;
    TreeParams small = rc.params;
    small.list_memory = 1 << 20; // a few of the 20000 particles' groups at a time
    TreeGpuEngine whole(rc.params, rc.gravity), batched(small, rc.gravity);
    Leapfrog a_lf(whole, rc.dt), b_lf(batched, rc.dt);
    ParticleSet a = rc.start, b = rc.start;
    ParticleStore sa(a), sb(b);
    a_lf.start(sa);
    b_lf.start(sb);
    for (int s = 0; s < 8; ++s) {
        a_lf.step(sa);
        b_lf.step(sb);
        CHECK(batched.last_list_batches() > 1);
        CHECK(whole.last_list_batches() == 1);
    }
    REQUIRE(sb.on_device());
    sa.restore_order();
    sb.restore_order(); // the potentials made again batch by batch
    test::check_same_columns(a, b);
}

TEST_CASE("tree-gpu: a device limit bounds the lists and names what does not fit", "[gpu][tree][batches]")
{
    const ParticleSet p = test::clustered_particles(20000, 5);
    const GravityParams gravity{1.0, 1e-3};
    Forces ref, f;
    DeviceMemory used;
    { // gone before the next engine: the limit counts every buffer of the process
        TreeGpuEngine whole(TreeParams{0.5, {16, 64}}, gravity);
        whole.compute(p.pos, p.mass, ref);
        used = whole.device_memory();
    }
    CHECK(used.lists > 0);
    CHECK(used.held > used.lists);
    // Room for everything but the lists, and a little for them: batches. A limit keeps the reserve
    // a device of its size keeps for the rest of a step (512 MiB below 8 GiB, and a float4 a
    // particle).
    TreeParams params{0.5, {16, 64}};
    params.device_memory =
        (used.held - used.lists) + used.lists / 4 + (std::size_t{512} << 20) + p.size() * sizeof(float4);
    TreeGpuEngine limited(params, gravity);
    limited.compute(p.pos, p.mass, f);
    CHECK(limited.last_list_batches() > 1);
    CHECK(f.acc == ref.acc);
    CHECK(limited.device_memory().lists <= used.lists / 2);
}

namespace {

// Device memory taken from the engines' budget for a test's span, outside every DeviceBuffer.
struct MemoryBlock {
    void* data = nullptr;
    explicit MemoryBlock(std::size_t bytes) { REQUIRE(cudaMalloc(&data, bytes) == cudaSuccess); }
    ~MemoryBlock() { cudaFree(data); }
    MemoryBlock(const MemoryBlock&) = delete;
    MemoryBlock& operator=(const MemoryBlock&) = delete;
};

std::size_t free_device_bytes()
{
    std::size_t free_bytes = 0, total_bytes = 0;
    REQUIRE(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
    return free_bytes;
}

} // namespace

TEST_CASE("tree-gpu: lists that fit in what two batches' buffers hold take it, with little memory free beside",
          "[gpu][tree][batches]")
{
    // A walk in two batches leaves two list buffers. A later walk whose lists fit in what they
    // hold, in one buffer, must have the others give their memory back before that one grows:
    // with little memory free, growing beside the other buffer's memory runs out.
    const ParticleSet p = make_plummer(1 << 20, 3);
    const GravityParams gravity{1.0, 0.01};
    const Octree tree = build_octree(p.pos, p.mass, BuildParams{16, 64});
    const TreeParams params{0.5, {16, 64}};
    const OpeningCriterion first = OpeningCriterion::geometric(0.8), wide = OpeningCriterion::geometric(0.4),
                           later = OpeningCriterion::geometric(0.6);
    Forces ref, f;
    std::size_t later_lists = 0;
    {
        TreeGpuEngine unhindered(params, gravity);
        unhindered.upload(tree);
        unhindered.evaluate(later, ref);
        later_lists = unhindered.device_memory().lists;
    }
    TreeGpuEngine engine(params, gravity);
    engine.upload(tree);
    engine.evaluate(first, f); // every buffer but the lists sized, the lists short
    // The wide walk's budget (what is free and what the lists hold, less the reserve for the rest
    // of a step: the engine's rule) set to 1.2 times the later walk's lists: two batches.
    std::size_t total_bytes = 0, free_bytes = 0;
    REQUIRE(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
    const std::size_t reserve =
        std::max<std::size_t>(total_bytes / 16, std::size_t{512} << 20) + p.size() * sizeof(float4);
    const std::size_t held = engine.device_memory().lists, room = later_lists + later_lists / 5;
    REQUIRE(room > held);
    REQUIRE(free_bytes > reserve + (room - held));
    {
        const MemoryBlock block(free_bytes - reserve - (room - held));
        engine.evaluate(wide, f);
    }
    REQUIRE(engine.last_list_batches() >= 2);
    REQUIRE(engine.device_memory().lists >= later_lists);
    // Then 32 MiB free beside the lists.
    const MemoryBlock block(free_device_bytes() - (std::size_t{32} << 20));
    engine.evaluate(later, f);
    CHECK(engine.last_list_batches() == 1);
    CHECK(f.acc == ref.acc);
    CHECK(f.pot == ref.pot);
}

namespace {

// For two runs a and b from `start`: each particle's distance between the runs over its
// displacement in run a, sorted.
std::vector<double> sorted_position_differences(const ParticleSet& start, const ParticleSet& a, const ParticleSet& b)
{
    std::vector<double> moved(start.size());
    for (Eigen::Index i = 0; i < start.pos.cols(); ++i)
        moved[static_cast<std::size_t>(i)] =
            (a.pos.col(i) - b.pos.col(i)).norm() / (a.pos.col(i) - start.pos.col(i)).norm();
    std::sort(moved.begin(), moved.end());
    return moved;
}

} // namespace

TEST_CASE("tree-gpu block time steps: tree-cpu's bins and orbits, to float rounding", "[gpu][tree][bins]")
{
    // A galaxy's particles spread over several bins. Both engines walk the same host-built tree;
    // the GPU sums in float, so a particle whose step lies at a bin's edge may choose the
    // neighbouring bin, and its orbit then differs by a step's error: few may.
    const ParticleSet start = make_galaxy(6000, 5, GalaxyParams{});
    const GravityParams g{start.units.G, 0.05};
    const TreeParams params{0.5, {32, 64}};
    TreeCpuEngine cpu(params, g);
    TreeGpuEngine gpu(params, g);
    ParticleSet a = start, b = start;
    BlockLeapfrog on_cpu(cpu, g, 0.004, 0.025), on_gpu(gpu, g, 0.004, 0.025);
    on_cpu.start(a);
    on_gpu.start(b);
    for (int k = 0; k < 2; ++k) {
        on_cpu.advance(a);
        on_gpu.advance(b);
    }
    REQUIRE(a.time == b.time);
    const auto bins_cpu = on_cpu.particles_per_bin(), bins_gpu = on_gpu.particles_per_bin();
    int occupied = 0;
    for (long long c : bins_cpu) occupied += c > 0;
    CHECK(occupied >= 4); // the case spans bins, or it tests nothing
    std::size_t other_bin = 0;
    for (std::size_t i = 0; i < start.size(); ++i) other_bin += on_cpu.bins()[i] != on_gpu.bins()[i];
    const std::vector<double> moved = sorted_position_differences(start, a, b);
    const double ea = compute_diagnostics(a, a.pot).total, eb = compute_diagnostics(b, b.pot).total;
    INFO("particles in another bin " << other_bin << "; position differences over displacements: p50 "
                                     << moved[moved.size() / 2] << ", p99 " << moved[moved.size() * 99 / 100]
                                     << "; energies " << ea << ", " << eb << "; ticks " << on_cpu.ticks_stepped()
                                     << ", " << on_gpu.ticks_stepped());
    CHECK(other_bin <= start.size() / 200);
    CHECK(on_cpu.ticks_stepped() == on_gpu.ticks_stepped());
    CHECK(moved[moved.size() / 2] < 1e-7);
    CHECK(moved[moved.size() * 99 / 100] < 2e-4);
    CHECK(std::abs(ea - eb) < 1e-5 * std::abs(ea));
}

TEST_CASE("tree-gpu block time steps on the device: the host path's bins and orbits", "[gpu][tree][bins][resident]")
{
    // The device keeps the bins, drifts everyone, walks only the groups holding a due particle and
    // refits the tree between rebuilds; the host path computes every particle's forces from a tree
    // built at each tick. The trees differ (a refitted tree's cells overlap), so the forces differ
    // by the tree's own error, not by rounding: few particles may change bin, orbits stay close.
    // Under the relative criterion each walked group is scaled by its due particles' smallest |a|
    // on the device, by all its particles' on the host. With softening by type, the bins'
    // criterion takes each particle's own length on both. The dynamical time's cap reads a profile
    // the device makes from its particles, the host from its own.
    const ParticleSet start = make_galaxy(20000, 5, GalaxyParams{});
    struct Case {
        const char* name;
        MacKind mac;
        bool by_type;
        double eta_dyn;
    };
    for (const Case c :
         {Case{"theta 0.5", MacKind::geometric, false, 0}, Case{"alpha 1e-3", MacKind::relative, false, 0},
          Case{"theta 0.5, softening by type", MacKind::geometric, true, 0},
          Case{"theta 0.5, the dynamical time's cap", MacKind::geometric, false, 0.1}}) {
        INFO(c.name);
        GravityParams g{start.units.G, 0.05};
        if (c.by_type) {
            g.eps_type[1] = 0.1;  // halo
            g.eps_type[3] = 0.02; // bulge
        }
        TreeParams params{0.5, {32, 64}};
        params.mac = c.mac;
        params.lookahead = true; // the resident store's condition
        TreeGpuEngine host_engine(params, g), device_engine(params, g);
        REQUIRE(device_engine.device_particles() != nullptr);
        REQUIRE(device_engine.device_particles()->time_bins() != nullptr);
        ParticleSet a = start, b = start;
        BlockLeapfrog on_host(host_engine, g, 0.004, 0.025, c.eta_dyn),
            on_device(device_engine, g, 0.004, 0.025, c.eta_dyn);
        on_host.start(a);
        on_device.start(b);
        ParticleStore store(b, false);
        store.place_on(device_engine.device_particles());
        for (int k = 0; k < 2; ++k) {
            on_host.advance(a);
            on_device.advance(store);
        }
        store.host();
        REQUIRE(a.time == b.time);
        const auto bins_host = on_host.particles_per_bin(), bins_device = on_device.particles_per_bin();
        int occupied = 0;
        long long total = 0, apart = 0;
        for (std::size_t k = 0; k < bins_host.size(); ++k) {
            occupied += bins_host[k] > 0;
            total += bins_device[k];
            apart += std::abs(bins_host[k] - bins_device[k]);
        }
        CHECK(occupied >= 4); // the case spans bins, or it tests nothing
        CHECK(total == static_cast<long long>(start.size()));
        const std::vector<double> moved = sorted_position_differences(start, a, b);
        // The energies from the direct sum's potential: each tree's potential is off by about 1e-5
        // of |E|, and two trees in frames offset apart do not share that error.
        auto energy = [&](const ParticleSet& s) {
            Forces f;
            DirectCpuEngine(g).compute(s.pos, s.mass, s.type, f);
            return compute_diagnostics(s, f.pot).total;
        };
        const double ea = energy(a), eb = energy(b), e0 = energy(start);
        INFO("bin counts apart by " << apart << "; position differences over displacements: p50 "
                                    << moved[moved.size() / 2] << ", p99 " << moved[moved.size() * 99 / 100]
                                    << "; energies " << ea << ", " << eb << " from " << e0 << "; ticks "
                                    << on_host.ticks_stepped() << ", " << on_device.ticks_stepped() << "; forces "
                                    << on_host.forces_computed() << ", " << on_device.forces_computed());
        // Bounds about ten times what the H100 gave (apart by at most 2, p50 3.3e-7, p99 5.3e-4,
        // forces 1 apart of 390,000).
        CHECK(apart <= static_cast<long long>(start.size()) / 1000);
        // Only the due particles count, on both paths.
        CHECK(std::abs(on_host.forces_computed() - on_device.forces_computed()) <= on_host.forces_computed() / 10000);
        CHECK(moved[moved.size() / 2] < 5e-6);
        CHECK(moved[moved.size() * 99 / 100] < 5e-3);
        // Energy: the two runs' drifts alike, both small.
        CHECK(std::abs(ea - eb) < 0.2 * std::abs(ea - e0) + 2e-6 * std::abs(e0));
        CHECK(std::abs(eb - e0) < 5e-4 * std::abs(e0));
    }
}

TEST_CASE("tree-gpu block steps paused within a dt_max: going on and restarting from there agree to the bit",
          "[gpu][tree][bins][resident]")
{
    // A pause brings the particles, bins and profile to the host and drops the device's state; the
    // next tick loads them afresh and rebuilds, in the process as in a restart from the state
    // saved there. Against the run that never paused (whose tree was refitted across that tick)
    // they differ by the tree's error only.
    const ParticleSet start = make_galaxy(20000, 5, GalaxyParams{});
    for (const char* mac : {"geometric", "relative"}) {
        INFO(mac);
        IntegratorConfig c;
        c.timestep = "block";
        c.engine.engine = "tree-gpu";
        c.engine.mac = mac;
        c.engine.alpha = 0.001;
        c.engine.gravity = {start.units.G, 0.05};
        c.dt_max = 0.004;
        c.eta = 0.025;
        c.eta_dyn = 0.2;
        ParticleSet straight = start, paused = start;
        auto a = make_integrator(c, engines()), b = make_integrator(c, engines());
        REQUIRE(b->resident());
        a->start(straight);
        b->start(paused);
        a->advance_to(c.dt_max, straight);
        a->advance_to(2 * c.dt_max, straight);
        b->advance_to(c.dt_max, paused);
        int asked = 0;
        b->pause_when([&] { return ++asked == 5; });
        b->advance_to(2 * c.dt_max, paused);
        REQUIRE(b->within_interval());
        b->restore_order(paused); // as a run does before its checkpoint
        {
            // The potentials stored there are every particle's, though the tick walked only the
            // groups that hold a due particle.
            const std::vector<double> q = test::potential_error_percentiles(paused, c.engine.gravity);
            INFO("potentials stored within the dt_max against the direct sum: p50 " << q[0] << ", max " << q[1]);
            CHECK(q[0] < 1e-4);
            CHECK(q[1] < 1e-2);
        }
        ParticleSet saved = paused;
        const IntegratorState state = b->save(saved);
        CHECK(state.counter("tick") > 0);
        b->advance_to(2 * c.dt_max, paused);
        CHECK_FALSE(b->within_interval());
        b->synchronize(paused);

        auto r = make_integrator(c, engines());
        r->resume(state, saved);
        r->advance_to(2 * c.dt_max, saved);
        r->synchronize(saved);
        a->synchronize(straight);
        CHECK(saved.pos == paused.pos);
        CHECK(saved.vel == paused.vel);
        CHECK(saved.time == paused.time);
        CHECK(r->log_counts() == b->log_counts());

        const std::vector<double> moved = sorted_position_differences(start, straight, paused);
        INFO("position differences over displacements against the run never paused: p50 "
             << moved[moved.size() / 2] << ", p99 " << moved[moved.size() * 99 / 100]);
        // About ten times what the H100 gave (p50 2.3e-10 and 3.1e-10, p99 6.8e-5 and 3.9e-5).
        CHECK(moved[moved.size() / 2] < 3e-9);
        CHECK(moved[moved.size() * 99 / 100] < 7e-4);
    }
}
