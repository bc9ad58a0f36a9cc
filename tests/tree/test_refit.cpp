// Trees across steps: refits, look-ahead trees, rebuild cadences, the order handed to a particle
// store, and shares of the groups.
#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "core/force_errors.hpp"
#include "core/snapshot.hpp"
#include "support/test_support.hpp"
#include "support/tree_checks.hpp"
#include "support/tree_order_check.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/float_tree.hpp"
#include "tree/group_shares.hpp"
#include "tree/lane_layout.hpp"
#include "tree/mac.hpp"
#include "tree/moments.hpp"
#include "tree/morton.hpp"
#include "tree/node_moments.hpp"
#include "tree/radix_sort.hpp"
#include "tree/refit.hpp"
#include "tree/tree_cpu.hpp"
#include "tree/walk.hpp"

using namespace grove;
using test::check_coverage;
using test::check_tree_invariants;

TEST_CASE("a refit at unchanged positions keeps the moments; after a drift it matches brute force", "[tree][refit]")
{
    ParticleSet p = test::clustered_particles(20000, 21);
    Octree tree = build_octree(p.pos, p.mass, BuildParams{16, 32});
    const Octree built = tree;
    refit_octree(tree, p.pos, p.mass);
    CHECK(tree.next == built.next);
    for (std::int32_t i = 0; i < tree.num_nodes(); ++i) {
        const auto a = tree.com_mass[i], b = built.com_mass[i];
        REQUIRE((a.x == b.x && a.y == b.y && a.z == b.z && a.w == b.w));
        REQUIRE(tree.quad[i].xx == built.quad[i].xx);
        REQUIRE(tree.quad[i].yz == built.quad[i].yz);
        REQUIRE(tree.size[i] == built.size[i]); // every particle is still inside its own cell
    }
    // Move every particle a little (some leave their cells) and refit the same structure.
    std::mt19937_64 rng(5);
    std::normal_distribution<double> g(0.0, 2e-3);
    for (Eigen::Index i = 0; i < p.pos.cols(); ++i) p.pos.col(i) += Eigen::Vector3d(g(rng), g(rng), g(rng));
    refit_octree(tree, p.pos, p.mass);
    check_tree_invariants(tree, p, 16); // cells hold their particles; moments equal brute-force sums
    bool grew = false;
    for (std::int32_t i = 0; i < tree.num_nodes(); ++i) grew = grew || tree.size[i] > built.size[i];
    CHECK(grew);
    for (const auto& group : tree.groups)
        for (std::int32_t k = group.range.begin; k < group.range.end; ++k)
            REQUIRE(box_distance2(group, tree.particles[k].x, tree.particles[k].y, tree.particles[k].z) == 0);
    set_opening_radii(tree, 0.6);
    check_coverage(tree, build_interaction_lists(tree));
    Eigen::Matrix3Xd moved = p.pos;
    moved.conservativeResize(3, 100);
    CHECK_THROWS_WITH(refit_octree(tree, moved, p.mass.head(100)), Catch::Contains("particle count"));
}

TEST_CASE("a build of the structure only, completed by a refit, equals a full build refitted",
          "[tree][refit][lookahead]")
{
    ParticleSet p = test::clustered_particles(20000, 21);
    const BuildParams params{16, 32};
    Octree full, structure;
    build_octree_into(full, p.pos, p.mass, params);
    build_octree_into(structure, p.pos, p.mass, params, nullptr, BuildContent::structure);
    CHECK(structure.com_mass.empty()); // no moments: a fresh tree holds none until its refit
    auto same_bytes = [](const auto& a, const auto& b) {
        return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
    };
    CHECK(same_bytes(structure.order, full.order));
    CHECK(same_bytes(structure.next, full.next));
    CHECK(same_bytes(structure.range, full.range));
    CHECK(structure.particles.size() == full.particles.size());
    REQUIRE(structure.groups.size() == full.groups.size());
    // The positions the look-ahead predicted are not the exact ones: drift, then refit both.
    std::mt19937_64 rng(8);
    std::normal_distribution<double> g(0.0, 2e-3);
    for (Eigen::Index i = 0; i < p.pos.cols(); ++i) p.pos.col(i) += Eigen::Vector3d(g(rng), g(rng), g(rng));
    refit_octree(full, p.pos, p.mass);
    refit_octree(structure, p.pos, p.mass);
    CHECK(same_bytes(structure.particles, full.particles));
    CHECK(same_bytes(structure.com_mass, full.com_mass));
    CHECK(same_bytes(structure.quad, full.quad));
    CHECK(same_bytes(structure.size, full.size));
    CHECK(same_bytes(structure.com_offset, full.com_offset));
    for (std::size_t k = 0; k < full.groups.size(); ++k) {
        const Group<double>&a = structure.groups[k], &b = full.groups[k];
        REQUIRE((a.range.begin == b.range.begin && a.range.end == b.range.end));
        REQUIRE((a.centre.x == b.centre.x && a.centre.y == b.centre.y && a.centre.z == b.centre.z));
        REQUIRE((a.half_extent.x == b.half_extent.x && a.half_extent.y == b.half_extent.y &&
                 a.half_extent.z == b.half_extent.z));
    }
}

TEST_CASE("a refit of all leaves, then the internal nodes level by level (the resident GPU order), equals the "
          "host refit bit for bit",
          "[tree][refit][resident]")
{
    ParticleSet p = test::clustered_particles(30000, 5);
    const BuildParams params{16, 32};
    Octree host, levelled;
    build_octree_into(host, p.pos, p.mass, params, nullptr, BuildContent::structure);
    build_octree_into(levelled, p.pos, p.mass, params, nullptr, BuildContent::structure);
    // A cell's level from its side: the root's is 0, every child's one more than its parent's.
    const auto m = static_cast<std::size_t>(levelled.num_nodes());
    std::vector<int> level(m);
    int deepest = 0;
    for (std::size_t i = 0; i < m; ++i) {
        level[i] = cell_level(levelled.cell_centre[i].w, levelled.frame.side);
        deepest = std::max(deepest, level[i]);
    }
    CHECK(level[0] == 0);
    for (std::int32_t i = 0; i < levelled.num_nodes(); ++i)
        for (std::int32_t c = i + 1; c < levelled.next[i]; c = levelled.next[c])
            REQUIRE(level[static_cast<std::size_t>(c)] == level[static_cast<std::size_t>(i)] + 1);

    // The drifted positions, refitted by the host and by finish_node in the device's order.
    std::mt19937_64 rng(3);
    std::normal_distribution<double> g(0.0, 2e-3);
    for (Eigen::Index i = 0; i < p.pos.cols(); ++i) p.pos.col(i) += Eigen::Vector3d(g(rng), g(rng), g(rng));
    refit_octree(host, p.pos, p.mass);
    for (std::size_t k = 0; k < levelled.particles.size(); ++k) {
        const auto i = static_cast<Eigen::Index>(levelled.order[k]);
        levelled.particles[k] = {p.pos(0, i), p.pos(1, i), p.pos(2, i), p.mass[i]};
    }
    levelled.com_mass.resize(m);
    levelled.quad.resize(m);
    levelled.com_offset.resize(m);
    std::vector<NodeBox> boxes(m);
    const MomentArrays t = moment_arrays(levelled, boxes.data());
    for (std::int32_t i = 0; i < levelled.num_nodes(); ++i)
        if (levelled.is_leaf[i]) finish_node(t, i);
    for (int l = deepest; l >= 0; --l)
        for (std::int32_t i = 0; i < levelled.num_nodes(); ++i)
            if (!levelled.is_leaf[i] && level[static_cast<std::size_t>(i)] == l) finish_node(t, i);
    auto same_bytes = [](const auto& a, const auto& b) {
        return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
    };
    CHECK(same_bytes(levelled.com_mass, host.com_mass));
    CHECK(same_bytes(levelled.quad, host.quad));
    CHECK(same_bytes(levelled.size, host.size));
    CHECK(same_bytes(levelled.com_offset, host.com_offset));
    CHECK(same_bytes(levelled.cell_centre, host.cell_centre));

    // The structure from keys sorted elsewhere (the resident GPU pipeline's) is the host build's.
    Octree structure, from_keys;
    build_octree_into(structure, p.pos, p.mass, params, nullptr, BuildContent::structure); // the drifted positions
    from_keys.frame = structure.frame;
    build_structure_from_sorted_keys(from_keys, structure.keys.data(), structure.keys.size(), params);
    CHECK(same_bytes(from_keys.next, structure.next));
    CHECK(same_bytes(from_keys.is_leaf, structure.is_leaf));
    CHECK(same_bytes(from_keys.range, structure.range));
    CHECK(same_bytes(from_keys.cell_centre, structure.cell_centre));
    CHECK(from_keys.order.empty());
    CHECK(from_keys.particles.empty());
    CHECK(from_keys.keys.empty());
    REQUIRE(from_keys.groups.size() == structure.groups.size());
    for (std::size_t k = 0; k < structure.groups.size(); ++k)
        REQUIRE((from_keys.groups[k].range.begin == structure.groups[k].range.begin &&
                 from_keys.groups[k].range.end == structure.groups[k].range.end));
    from_keys.frame.side = 0;
    CHECK_THROWS_AS(build_structure_from_sorted_keys(from_keys, structure.keys.data(), structure.keys.size(), params),
                    std::invalid_argument);
}

TEST_CASE("a look-ahead tree is refitted only when the particles are in the order it was built for",
          "[tree][refit][lookahead]")
{
    const ParticleSet p = test::random_particles(3000, 24);
    const Eigen::Matrix3Xd acc = Eigen::Matrix3Xd::Zero(3, p.size());
    const BuildParams params{16, 16};
    // One look-ahead round; `release`: given back before the next update (a store on a device
    // builds its own trees).
    auto next_call = [&](bool expect_handover, bool hand_over, bool release = false) {
        TreeUpdater updater(1);
        Octree tree;
        updater.update(tree, p.pos, p.mass, params, nullptr);
        updater.hint(p.vel, acc, 1e-3);
        updater.start_lookahead(tree, p.pos, p.mass, params, expect_handover);
        updater.run_lookahead();
        std::vector<std::uint32_t> order;
        if (hand_over) REQUIRE(updater.take_order(tree, order));
        if (release) updater.release();
        BuildTimes times;
        updater.update(tree, p.pos, p.mass, params, &times); // the decision is tested, not the forces
        return times;
    };
    // Given back, the prepared tree is dropped: a build, where it would have been refitted.
    CHECK(next_call(false, false, true).sort > 0);
    for (const bool expect : {false, true})
        for (const bool hand_over : {false, true}) {
            INFO("expected a handover: " << expect << ", handed over: " << hand_over);
            const BuildTimes t = next_call(expect, hand_over);
            if (expect == hand_over) { // refitted: gathered, not sorted
                CHECK(t.sort == 0);
                CHECK(t.gather > 0);
            } else { // indexed for another order: dropped, built
                CHECK(t.sort > 0);
                CHECK(t.gather == 0);
            }
        }
}

TEST_CASE("tree engines rebuild every K evaluations and refit between, at the accuracy of a build", "[tree][refit]")
{
    TreeUpdater updater(3);
    ParticleSet p = test::random_particles(3000, 22);
    Octree tree;
    std::vector<bool> rebuilt;
    for (int k = 0; k < 7; ++k) rebuilt.push_back(updater.update(tree, p.pos, p.mass, BuildParams{}, nullptr));
    CHECK(rebuilt == std::vector<bool>{true, false, false, true, false, false, true});
    const ParticleSet fewer = test::random_particles(2000, 23);
    CHECK(updater.update(tree, fewer.pos, fewer.mass, BuildParams{}, nullptr)); // a new N rebuilds
    CHECK_THROWS_WITH(TreeUpdater(0), Catch::Contains("--rebuild-every"));

    // Leapfrog-like drift between evaluations: refitted forces stay as accurate as built ones.
    const GravityParams gravity{1.0, 0.01};
    TreeCpuEngine reused(TreeParams{0.5, {16, 16}, 4}, gravity), fresh(TreeParams{0.5, {16, 16}, 1}, gravity);
    Forces f_reused, f_fresh, ref;
    for (int k = 0; k < 4; ++k) {
        p.pos += 1e-3 * p.vel;
        reused.compute(p.pos, p.mass, f_reused);
    }
    fresh.compute(p.pos, p.mass, f_fresh);
    DirectCpuEngine(gravity).compute(p.pos, p.mass, ref);
    const auto e_reused = percentiles(relative_errors(f_reused.acc, ref.acc), {50, 99});
    const auto e_fresh = percentiles(relative_errors(f_fresh.acc, ref.acc), {50, 99});
    CHECK(e_reused[0] < 1.5 * e_fresh[0]);
    CHECK(e_reused[1] < 1.5 * e_fresh[1]);
}

TEST_CASE("tree-cpu forces in its own order are compute()'s permuted by the order it hands over", "[tree][order]")
{
    test::check_forces_in_own_order(test::clustered_particles(5000, 13), [](const TreeParams& params) {
        return std::make_unique<TreeCpuEngine>(params, GravityParams{1.0, 0.01});
    });
}

TEST_CASE("shares of the groups cut to equal costs cover the tree and balance its work", "[tree][shares]")
{
    // Two clumps of very different density: equal particle counts give unequal work.
    const ParticleSet p = test::clustered_particles(20000, 21);
    Octree tree = build_octree(p.pos, p.mass, BuildParams{16, 32});
    set_opening_radii(tree, 0.5);
    const auto g = static_cast<std::int32_t>(tree.groups.size());
    const InteractionLists all = build_interaction_lists(tree);
    const std::vector<double> costs = group_costs(tree, all, {0, g});
    for (double c : costs) REQUIRE(c > 0);
    auto share_cost = [&](GroupRange r) {
        double sum = 0;
        for (std::int32_t k = r.first; k < r.last; ++k)
            for (std::int32_t i = tree.groups[k].range.begin; i < tree.groups[k].range.end; ++i)
                sum += costs[tree.order[static_cast<std::size_t>(i)]];
        return sum;
    };
    const double total = share_cost({0, g});
    double max_group = 0;
    for (std::int32_t k = 0; k < g; ++k) max_group = std::max(max_group, share_cost({k, k + 1}));
    for (const int count : {2, 3, 7}) {
        INFO(count << " shares");
        std::int32_t next = 0;
        std::vector<double> summed(p.size(), 0.0);
        double worst_equal_counts = 0, worst = 0;
        for (int s = 0; s < count; ++s) {
            const GroupRange r = share_of_groups(tree, costs, s, count);
            worst = std::max(worst, share_cost(r));
            CHECK(r.first == next); // contiguous, in order, covering everything
            next = r.last;
            CHECK(std::abs(share_cost(r) - total / count) <= max_group);
            // What a share's own lists say it costs, summed over the shares, is the whole's.
            const std::vector<double> mine = group_costs(tree, all, r);
            for (std::size_t i = 0; i < mine.size(); ++i) summed[i] += mine[i];
            worst_equal_counts = std::max(worst_equal_counts, share_cost(share_of_groups(tree, {}, s, count)));
        }
        CHECK(next == g);
        CHECK(summed == costs);
        // Equal particle counts leave the busiest share with more work (6-9 % above its part here).
        CHECK(worst < worst_equal_counts);
        CHECK(worst_equal_counts > 1.03 * total / count);
    }
    CHECK(share_of_groups(tree, costs, 0, 1).last == g);
    // From list lengths alone (the GPU's first pass): a leaf cell counts as the mean occupancy.
    std::vector<long long> nodes(static_cast<std::size_t>(g)), leaves(static_cast<std::size_t>(g));
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        nodes[k] = all.node_offset[k + 1] - all.node_offset[k];
        leaves[k] = all.leaf_offset[k + 1] - all.leaf_offset[k];
    }
    const GroupRange second_half{g / 2, g};
    const std::vector<double> counted =
        group_costs_from_counts(tree, nodes.data() + g / 2, leaves.data() + g / 2, second_half);
    const std::vector<double> exact = group_costs(tree, all, second_half);
    double counted_sum = 0, exact_sum = 0;
    for (std::size_t i = 0; i < counted.size(); ++i) {
        REQUIRE((counted[i] > 0) == (exact[i] > 0)); // the same particles, the second half's
        counted_sum += counted[i];
        exact_sum += exact[i];
    }
    CHECK(counted_sum == Approx(exact_sum).epsilon(0.5));
    CHECK(share_of_groups(tree, std::vector<double>(5, 1.0), 1, 2).first ==
          share_of_groups(tree, {}, 1, 2).first); // costs of another N: equal counts
}
