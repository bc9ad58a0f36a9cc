// Host octree: Morton keys, the sort, the build's invariants and moments, degenerate inputs.
#include <catch2/catch.hpp>
#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "core/force_errors.hpp"
#include "core/ic_models.hpp"
#include "core/snapshot.hpp"
#include "support/test_support.hpp"
#include "support/tree_checks.hpp"
#include "support/tree_order_check.hpp"
#include "tree/cut_cells.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/float_tree.hpp"
#include "tree/group_shares.hpp"
#include "tree/hilbert.hpp"
#include "tree/key_frame.hpp"
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

TEST_CASE("Morton keys are bit-exact", "[tree][morton]")
{
    CHECK(morton_key(0, 0, 0) == 0);
    CHECK(morton_key(1, 0, 0) == 0b001);
    CHECK(morton_key(0, 1, 0) == 0b010);
    CHECK(morton_key(0, 0, 1) == 0b100);
    CHECK(morton_key(3, 0, 0) == 0b001001);
    CHECK(morton_key(5, 6, 7) == 0b111110101); // x=101 y=110 z=111; triple k holds (z_k y_k x_k)
    CHECK(morton_key(0x1fffff, 0, 0) == 0x1249249249249249ull);
    CHECK(morton_key(0x1fffff, 0x1fffff, 0x1fffff) == 0x7fffffffffffffffull); // 63 bits
    CHECK(morton_key(1u << 20, 0, 0) == 1ull << 60);
    for (std::uint32_t v : {0u, 1u, 12345u, 0x1fffffu, 0x155555u}) CHECK(compact_bits_21(spread_bits_21(v)) == v);
    CHECK(morton_octant(morton_key(1u << 20, 0, 1u << 20), 0) == 5); // x and z in the upper half
    const double scale = kMortonAxisCells;                           // a cube of side 1
    CHECK(morton_cell_coordinate(-1.0, 0.0, scale) == 0);
    CHECK(morton_cell_coordinate(1.0, 0.0, scale) == kMortonAxisCells - 1);
    CHECK(morton_cell_coordinate(0.5, 0.0, scale) == kMortonAxisCells / 2);
    CHECK(morton_cell_coordinate(2.75, 2.0, scale / 2) == kMortonAxisCells * 3 / 8); // side 2 from 2
    const MortonTable table;
    std::mt19937 rng(3);
    for (int i = 0; i < 10000; ++i) {
        const std::uint32_t x = rng() & 0x1fffffu, y = rng() & 0x1fffffu, z = rng() & 0x1fffffu;
        REQUIRE(table.key(x, y, z) == morton_key(x, y, z));
    }
    CHECK(table.key(0x1fffff, 0x1fffff, 0x1fffff) == 0x7fffffffffffffffull);
}

TEST_CASE("the keys' frame: the bounding cube for compact sets, a warped core where far outliers would coarsen it",
          "[tree][morton]")
{
    // The warp is continuous and monotonic, the identity (about the centre) inside the core.
    KeyFrame f;
    f.core = 2;
    f.centre[0] = 1;
    CHECK(f.coordinate(2.5, 0) == 1.5);
    CHECK(f.coordinate(3.0, 0) == 2.0);
    CHECK(f.coordinate(3.0 + 1e-9, 0) == Approx(2.0 + 1e-9).epsilon(1e-12));
    double last = -INFINITY;
    for (double x = -1e9; x < 1e9; x = x < 0 ? x / 1.37 + 1 : x * 1.37 + 1) {
        REQUIRE(f.coordinate(x, 0) > last);
        last = f.coordinate(x, 0);
    }
    CHECK(f.coordinate(1 + 2 * std::exp(10.0), 0) == Approx(22.0));

    // A compact set keeps the bounding cube's keys, the cube grown by an eighth and offset by the
    // fractions its box gives.
    const ParticleSet compact = test::clustered_particles(5000, 4);
    const Octree plain = build_octree(compact.pos, compact.mass, BuildParams{8, 16});
    CHECK(plain.frame.core == 0);
    double mn[3], mx[3];
    for (int d = 0; d < 3; ++d) {
        mn[d] = compact.pos.row(d).minCoeff();
        mx[d] = compact.pos.row(d).maxCoeff();
    }
    const double side = key_cube_side(mn, mx);
    double u[3];
    key_frame_offset_fractions(mn, mx, u);
    CHECK(plain.frame.side == side * (1 + kKeyFrameJitter));
    for (int d = 0; d < 3; ++d) CHECK(plain.frame.lo[d] == mn[d] - u[d] * kKeyFrameJitter * side);
    for (std::size_t k = 0; k < plain.keys.size(); ++k) {
        const auto i = static_cast<Eigen::Index>(plain.order[k]);
        const double scale = kMortonAxisCells / plain.frame.side;
        REQUIRE(plain.keys[k] == morton_key(morton_cell_coordinate(compact.pos(0, i), plain.frame.lo[0], scale),
                                            morton_cell_coordinate(compact.pos(1, i), plain.frame.lo[1], scale),
                                            morton_cell_coordinate(compact.pos(2, i), plain.frame.lo[2], scale)));
    }

    // A Plummer sphere with one particle flung 10^9 away: the bounding cube's finest cells would be
    // ~500 wide, and every particle of the sphere would share one key (one leaf of 20000). The
    // frame warps it away: the leaves hold nleaf as before, and a walk costs what it cost without
    // the outlier. (The sample of the frame's quartiles misses it, as it misses a handful of far
    // particles among millions.)
    const ParticleSet sphere = make_plummer(20000, 3);
    ParticleSet far = sphere;
    const Eigen::Index n = far.pos.cols();
    far.pos.conservativeResize(3, n + 1);
    far.mass.conservativeResize(n + 1);
    far.pos.col(n) = Eigen::Vector3d(1e9, -3e8, 2e8);
    far.mass[n] = far.mass[0];
    const BuildParams params{8, 16};
    Octree warped = build_octree(far.pos, far.mass, params);
    CHECK(warped.frame.core > 0);
    check_tree_invariants(warped, far, params.nleaf);
    std::int32_t fullest = 0;
    for (std::int32_t i = 0; i < warped.num_nodes(); ++i)
        if (warped.is_leaf[i]) fullest = std::max(fullest, warped.range[i].end - warped.range[i].begin);
    CHECK(fullest <= params.nleaf);
    Octree compact_tree = build_octree(sphere.pos, sphere.mass, params);
    CHECK(compact_tree.frame.core == 0);
    set_opening_radii(compact_tree, 0.5);
    set_opening_radii(warped, 0.5);
    const InteractionLists lists = build_interaction_lists(warped);
    check_coverage(warped, lists);
    const TreeStats with = list_statistics(warped, lists),
                    without = list_statistics(compact_tree, build_interaction_lists(compact_tree));
    CHECK(with.leaf_interactions_per_particle < 1.2 * without.leaf_interactions_per_particle);
    CHECK(with.node_interactions_per_particle < 1.2 * without.node_interactions_per_particle);
    // The forces: the tree's usual error against the direct sum.
    Forces tree_forces, exact;
    TreeCpuEngine(TreeParams{}, GravityParams{1.0, 0.01}).compute(far.pos, far.mass, tree_forces);
    DirectCpuEngine(GravityParams{1.0, 0.01}).compute(far.pos, far.mass, exact);
    CHECK(percentiles(relative_errors(tree_forces.acc, exact.acc), {50})[0] < 1e-3);
}

TEST_CASE("the domains' frame: a power-of-two cube on a grid of its eighths, still while the points move a little",
          "[tree][morton][domains]")
{
    const double mn[3] = {-272.38, -282.66, -269.08}, mx[3] = {299.4, 289.1, 301.2};
    const KeyFrame f = domains_key_frame(mn, mx);
    CHECK(f.core == 0); // not warped
    CHECK(f.side == 1024.0);
    CHECK(f.scale == kMortonAxisCells / f.side);
    for (int d = 0; d < 3; ++d) {
        CHECK(f.lo[d] == -384.0); // a multiple of side / 8 at or below the lowest point
        CHECK(f.lo[d] <= mn[d]);
        CHECK(mx[d] < f.lo[d] + f.side);
    }
    // Moved by much less than a grid step, the points keep the cube; moved across a grid line,
    // they take the next one.
    const double nudged_lo[3] = {-272.30, -282.70, -269.00}, nudged_hi[3] = {299.5, 289.0, 301.3};
    const KeyFrame g = domains_key_frame(nudged_lo, nudged_hi);
    CHECK(std::equal(g.lo, g.lo + 3, f.lo));
    CHECK(g.side == f.side);
    const double across[3] = {-384.5, -282.66, -269.08};
    const KeyFrame h = domains_key_frame(across, mx);
    CHECK(h.lo[0] < -384.5);
    CHECK(mx[0] < h.lo[0] + h.side);
    // A box that would not fit its power of two once its corner is on the grid takes the next one.
    const double wide_lo[3] = {-1, 0, 0}, wide_hi[3] = {1000, 1, 1};
    const KeyFrame w = domains_key_frame(wide_lo, wide_hi);
    CHECK(w.side == 2048.0);
    CHECK(w.lo[0] <= -1);
    CHECK(1000 < w.lo[0] + w.side);
    // Non-finite bounds: the bounding cube, which never loops.
    const double bad[3] = {std::numeric_limits<double>::quiet_NaN(), 0, 0};
    CHECK(domains_key_frame(bad, mx).side == key_cube_side(bad, mx));
}

TEST_CASE("the domains' frame moved for a cut anew: by less than an eighth of its side, differently at each draw",
          "[tree][morton][domains]")
{
    const double mn[3] = {-272.38, -282.66, -269.08}, mx[3] = {299.4, 289.1, 301.2};
    const KeyFrame cube = domains_key_frame(mn, mx);
    const KeyFrame same = moved_domains_frame(cube, 0);
    CHECK(std::equal(same.lo, same.lo + 3, cube.lo));
    CHECK(same.side == cube.side);
    double spread[3] = {0, 0, 0};
    const KeyFrame first = moved_domains_frame(cube, 1);
    for (std::uint64_t draw = 1; draw <= 64; ++draw) {
        const KeyFrame f = moved_domains_frame(cube, draw);
        CHECK(f.side == cube.side * (1 + kDomainsFrameJitter));
        CHECK(f.scale == kMortonAxisCells / f.side);
        for (int d = 0; d < 3; ++d) {
            CHECK(f.lo[d] <= cube.lo[d]); // the cube stays inside
            CHECK(f.lo[d] + f.side >= cube.lo[d] + cube.side);
            CHECK(cube.lo[d] - f.lo[d] < kDomainsFrameJitter * cube.side);
            spread[d] = std::max(spread[d], std::abs(f.lo[d] - first.lo[d]));
        }
        // The same draw, the same frame (every rank makes it alone).
        CHECK(moved_domains_frame(cube, draw).lo[0] == f.lo[0]);
    }
    for (int d = 0; d < 3; ++d) CHECK(spread[d] > 0.5 * kDomainsFrameJitter * cube.side); // the draws differ
}

TEST_CASE("the keys' frame moves with the box, in any order of the points, and not with their rounding",
          "[tree][morton]")
{
    // The same points in another order: the same frame, so the same tree.
    ParticleSet p = make_plummer(3000, 8);
    const Octree a = build_octree(p.pos, p.mass, BuildParams{8, 16});
    ParticleSet reversed = p;
    reversed.pos = p.pos.rowwise().reverse();
    reversed.mass = p.mass.reverse();
    const Octree b = build_octree(reversed.pos, reversed.mass, BuildParams{8, 16});
    CHECK(b.frame.side == a.frame.side);
    for (int d = 0; d < 3; ++d) CHECK(b.frame.lo[d] == a.frame.lo[d]);

    // The box moved by a small share of its side, as the outermost particles move in a step: the
    // offsets spread over [0, 1) (a frame that stayed put would give one value); a box moved by
    // its rounding keeps its offsets.
    double mn[3], mx[3];
    for (int d = 0; d < 3; ++d) {
        mn[d] = p.pos.row(d).minCoeff();
        mx[d] = p.pos.row(d).maxCoeff();
    }
    double least = 1, most = 0, sum = 0, changed = 0;
    constexpr int kMoves = 400;
    for (int k = 0; k < kMoves; ++k) {
        double lo[3] = {mn[0], mn[1], mn[2]}, hi[3] = {mx[0], mx[1], mx[2]};
        lo[k % 3] += 1e-5 * k * (mx[0] - mn[0]);
        hi[(k + 1) % 3] -= 3e-6 * k * (mx[0] - mn[0]);
        double u[3], v[3];
        key_frame_offset_fractions(lo, hi, u);
        for (int d = 0; d < 3; ++d) {
            least = std::min(least, u[d]);
            most = std::max(most, u[d]);
            sum += u[d];
            REQUIRE(u[d] >= 0);
            REQUIRE(u[d] < 1);
        }
        for (int d = 0; d < 3; ++d) {
            lo[d] = std::nextafter(lo[d], -INFINITY);
            hi[d] = std::nextafter(hi[d], INFINITY);
        }
        key_frame_offset_fractions(lo, hi, v);
        changed += u[0] != v[0] || u[1] != v[1] || u[2] != v[2];
    }
    CHECK(least < 0.02);
    CHECK(most > 0.98);
    CHECK(sum / (3 * kMoves) == Approx(0.5).margin(0.05));
    CHECK(changed <= 2);
}

TEST_CASE("the keys' frame leaves a sparse halo's cells as the bounding cube made them", "[tree][morton]")
{
    // Beyond the warp's core a key cell is stretched along each compressed axis by its distance
    // over the core, and a group opens a cell by its longest side: a core too narrow for the halo
    // (16 interquartile ranges) made every group take the halo's stretched leaves one by one,
    // half as many particle interactions again as without the far particle.
    ParticleSet with_halo = make_plummer(50000, 3);
    const Eigen::Index n = with_halo.pos.cols(), halo = 2000;
    with_halo.pos.conservativeResize(3, n + halo);
    with_halo.mass.conservativeResize(n + halo);
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> uniform(0, 1);
    std::normal_distribution<double> normal(0, 1);
    for (Eigen::Index k = n; k < n + halo; ++k) { // radii from 20 to 2000, evenly in their logarithm
        const Eigen::Vector3d direction(normal(rng), normal(rng), normal(rng));
        with_halo.pos.col(k) = direction.normalized() * 20 * std::pow(100.0, uniform(rng));
        with_halo.mass[k] = with_halo.mass[0];
    }
    ParticleSet far = with_halo;
    far.pos.conservativeResize(3, n + halo + 1);
    far.mass.conservativeResize(n + halo + 1);
    far.pos.col(n + halo) = Eigen::Vector3d(1e9, -3e8, 2e8);
    far.mass[n + halo] = far.mass[0];
    const BuildParams params{8, 16};
    Octree warped = build_octree(far.pos, far.mass, params),
           plain = build_octree(with_halo.pos, with_halo.mass, params);
    REQUIRE(warped.frame.core > 0);
    REQUIRE(plain.frame.core == 0);
    set_opening_radii(warped, 0.5);
    set_opening_radii(plain, 0.5);
    const TreeStats with = list_statistics(warped, build_interaction_lists(warped)),
                    without = list_statistics(plain, build_interaction_lists(plain));
    CHECK(with.leaf_interactions_per_particle < 1.2 * without.leaf_interactions_per_particle);
    CHECK(with.node_interactions_per_particle < 1.2 * without.node_interactions_per_particle);
}

TEST_CASE("Peano-Hilbert keys: every cell once, each octree cell one range, consecutive keys face neighbours",
          "[tree][morton][hilbert]")
{
    // The corner cube of side 8 is the curve's first 512 cells, each once, each step to a cell
    // that shares a face.
    std::vector<std::array<std::uint32_t, 3>> cell_of(512);
    std::vector<int> seen(512, 0);
    for (std::uint32_t x = 0; x < 8; ++x)
        for (std::uint32_t y = 0; y < 8; ++y)
            for (std::uint32_t z = 0; z < 8; ++z) {
                const std::uint64_t k = hilbert_key(x, y, z);
                REQUIRE(k < 512);
                ++seen[k];
                cell_of[k] = {x, y, z};
            }
    CHECK(std::count(seen.begin(), seen.end(), 1) == 512);
    const auto apart = [](const std::array<std::uint32_t, 3>& a, const std::array<std::uint32_t, 3>& b) {
        std::uint32_t d = 0;
        for (int i = 0; i < 3; ++i) d += a[i] > b[i] ? a[i] - b[i] : b[i] - a[i];
        return d;
    };
    for (int k = 1; k < 512; ++k) REQUIRE(apart(cell_of[k], cell_of[k - 1]) == 1);
    // The root's octants take the eight values of the top three bits, so each is one range, as a
    // Morton octant is.
    std::vector<int> octant(8, 0);
    const std::uint32_t half = 1u << 20;
    for (std::uint32_t o = 0; o < 8; ++o)
        ++octant[hilbert_key(o & 1 ? half : 0, o & 2 ? half : 0, o & 4 ? half : 0) >> 60];
    CHECK(std::count(octant.begin(), octant.end(), 1) == 8);
    // Anywhere in the cube, the next key is one of the six face neighbours.
    std::mt19937 rng(5);
    for (int i = 0; i < 3000; ++i) {
        const auto coordinate = [&] { return static_cast<std::uint32_t>(rng() & 0x1fffffu); };
        const std::uint32_t c[3] = {coordinate(), coordinate(), coordinate()};
        const std::uint64_t k = hilbert_key(c[0], c[1], c[2]);
        if (k + 1 == std::uint64_t{1} << 63) continue;
        bool next_found = false;
        for (int axis = 0; axis < 3; ++axis)
            for (const int step : {-1, 1}) {
                std::uint32_t n[3] = {c[0], c[1], c[2]};
                if ((step < 0 && n[axis] == 0) || (step > 0 && n[axis] == 0x1fffffu)) continue;
                n[axis] += static_cast<std::uint32_t>(step);
                next_found = next_found || hilbert_key(n[0], n[1], n[2]) == k + 1;
            }
        REQUIRE(next_found);
    }
}

TEST_CASE("Peano-Hilbert keys by table: Skilling's keys, level by level from the curve's 24 states", "[tree][hilbert]")
{
    const HilbertTable table;
    CHECK(table.states() == 24); // the 3D Hilbert curve's orientations
    std::mt19937 rng(11);
    for (int i = 0; i < 200000; ++i) {
        const std::uint32_t x = rng() & 0x1fffffu, y = rng() & 0x1fffffu, z = rng() & 0x1fffffu;
        REQUIRE(table.key(x, y, z) == hilbert_key_by_transposition(x, y, z));
        REQUIRE(hilbert_key(x, y, z) == table.key(x, y, z));
        REQUIRE(hilbert_key_of_morton(morton_key(x, y, z)) == table.key(x, y, z));
    }
    // Both corners of the cube, and a run of cells along each edge of it.
    for (std::uint32_t a = 0; a < 64; ++a)
        for (const std::uint32_t b : {0u, 0x1fffffu})
            for (const std::uint32_t c : {0u, 0x1fffffu}) {
                REQUIRE(table.key(a, b, c) == hilbert_key_by_transposition(a, b, c));
                REQUIRE(table.key(b, a, c) == hilbert_key_by_transposition(b, a, c));
                REQUIRE(table.key(b, c, 0x1fffffu - a) == hilbert_key_by_transposition(b, c, 0x1fffffu - a));
            }
}

TEST_CASE("a key's owner among ranks cut at first keys", "[tree][hilbert]")
{
    const std::vector<std::uint64_t> first = {0, 10, 10, 25, std::uint64_t{1} << 63}; // rank 1 owns nothing
    const int ranks = 4;
    CHECK(key_range_owner(first.data(), ranks, 0) == 0);
    CHECK(key_range_owner(first.data(), ranks, 9) == 0);
    CHECK(key_range_owner(first.data(), ranks, 10) == 2);
    CHECK(key_range_owner(first.data(), ranks, 24) == 2);
    CHECK(key_range_owner(first.data(), ranks, 25) == 3);
    CHECK(key_range_owner(first.data(), ranks, (std::uint64_t{1} << 63) - 1) == 3);
    const std::vector<std::uint64_t> one = {0, std::uint64_t{1} << 63};
    CHECK(key_range_owner(one.data(), 1, 12345) == 0);
}

TEST_CASE("parallel radix sort equals a stable std::sort", "[tree][sort]")
{
    // Sizes on both sides of the in-cache limit (65536) at which the sample-sort stage begins.
    const std::size_t n = GENERATE(0, 1, 31, 32, 33, 100000, 300000);
    // 0: random with duplicates; 1: clustered like a Plummer sphere's keys; 2: two values only
    // (buckets far beyond the cache limit, which take the MSD fallback); 3: all equal; 4: nearly
    // sorted, as a tree's particles a step after the last build (the classification that tries
    // the previous key's bucket first), with zeros and the largest key among them.
    const int kind = GENERATE(0, 1, 2, 3, 4);
    CAPTURE(n, kind);
    std::mt19937_64 rng(n * 4 + static_cast<std::size_t>(kind));
    std::vector<std::uint64_t> keys(n);
    std::vector<std::uint32_t> values(n);
    for (std::size_t i = 0; i < n; ++i) {
        switch (kind) {
        case 0:
        case 4:
            keys[i] = rng() >> 1 & (i % 4 == 0 ? 0xffffull : ~0ull);
            break;
        case 1:
            keys[i] = (rng() >> 1) >> (3 * (rng() % 16));
            break; // most keys near 0
        case 2:
            keys[i] = rng() % 2 == 0 ? 12345 : 1ull << 40;
            break;
        default:
            keys[i] = 777;
            break;
        }
        values[i] = static_cast<std::uint32_t>(i);
    }
    if (kind == 4 && n > 0) {
        std::sort(keys.begin(), keys.end());
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t j = std::min(n - 1, i + rng() % 300); // local moves
            if (rng() % 3 == 0) std::swap(keys[i], keys[j]);
            if (rng() % 1000 == 0) std::swap(keys[i], keys[rng() % n]); // a few far ones
        }
        keys[n / 2] = 0;
        keys[n / 3] = ~0ull >> 1;
    }
    std::vector<std::pair<std::uint64_t, std::uint32_t>> expected(n);
    for (std::size_t i = 0; i < n; ++i) expected[i] = {keys[i], values[i]};
    std::stable_sort(expected.begin(), expected.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::uint64_t> keys_only = keys;
    std::vector<std::uint32_t> order(n + 3, 99); // reused storage: every entry must be rewritten
    radix_sort_pairs(keys, values);
    radix_sort_with_order(keys_only, order);
    REQUIRE(order.size() == n);
    for (std::size_t i = 0; i < n; ++i) {
        REQUIRE(keys[i] == expected[i].first);
        REQUIRE(values[i] == expected[i].second);
        REQUIRE(keys_only[i] == expected[i].first);
        REQUIRE(order[i] == expected[i].second);
    }
}

TEST_CASE("tree invariants and moments on random and clustered sets", "[tree]")
{
    const std::size_t n = GENERATE(1, 2, 31, 32, 33, 1000, 20000);
    const bool clustered = GENERATE(false, true);
    const ParticleSet p = clustered ? test::clustered_particles(n, 3) : test::random_particles(n, 3);
    const int nleaf = 16;
    const Octree tree = build_octree(p.pos, p.mass, BuildParams{nleaf, 32});
    check_tree_invariants(tree, p, nleaf);
    // Groups tile the particles in order, each at most ncrit, with boxes containing their particles.
    std::int32_t expect = 0;
    for (const auto& g : tree.groups) {
        REQUIRE(g.range.begin == expect);
        REQUIRE(g.range.end - g.range.begin <= 32);
        for (std::int32_t k = g.range.begin; k < g.range.end; ++k)
            REQUIRE(box_distance2(g, tree.particles[k].x, tree.particles[k].y, tree.particles[k].z) == 0);
        expect = g.range.end;
    }
    REQUIRE(expect == static_cast<std::int32_t>(n));
}

namespace {

template <class Array> bool same_bytes(const Array& a, const Array& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
}

// The keys and every node array of two trees, byte for byte.
void check_same_nodes(const Octree& a, const Octree& b)
{
    CHECK(same_bytes(a.keys, b.keys));
    CHECK(same_bytes(a.next, b.next));
    CHECK(same_bytes(a.is_leaf, b.is_leaf));
    CHECK(same_bytes(a.range, b.range));
    CHECK(same_bytes(a.com_mass, b.com_mass));
    CHECK(same_bytes(a.quad, b.quad));
    CHECK(same_bytes(a.r_open2, b.r_open2));
}

} // namespace

// The top of the tree is split serially and its subtrees in parallel, at a size that depends on
// the number of threads: the result must not.
TEST_CASE("the tree and its groups do not depend on the number of threads", "[tree]")
{
    const ParticleSet p = test::clustered_particles(300000, 5); // subtrees of 4687 and of 2048
    const BuildParams params{16, 32};
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    const Octree one = build_octree(p.pos, p.mass, params);
    omp_set_num_threads(5);
    const Octree five = build_octree(p.pos, p.mass, params);
    omp_set_num_threads(saved);
    CHECK(one.num_nodes() > 1000);
    CHECK(same_bytes(one.order, five.order));
    check_same_nodes(one, five);
    // Groups field by field: their padding bytes are not part of the result.
    REQUIRE(one.groups.size() == five.groups.size());
    bool same_groups = true;
    for (std::size_t g = 0; g < one.groups.size(); ++g) {
        const auto &a = one.groups[g], &b = five.groups[g];
        same_groups = same_groups && a.range.begin == b.range.begin && a.range.end == b.range.end &&
                      std::memcmp(&a.centre, &b.centre, sizeof a.centre) == 0 &&
                      std::memcmp(&a.half_extent, &b.half_extent, sizeof a.half_extent) == 0;
    }
    CHECK(same_groups);
    // Groups are the maximal cells of at most ncrit particles (leaves beyond it cut into chunks),
    // found here by one serial pre-order scan.
    std::vector<std::int32_t> expected;
    for (std::int32_t i = 0; i < one.num_nodes();) {
        const auto r = one.range[i];
        if (r.end - r.begin <= params.ncrit || one.is_leaf[i]) {
            for (std::int32_t b = r.begin; b < r.end; b += params.ncrit) expected.push_back(b);
            i = one.next[i];
        } else {
            ++i;
        }
    }
    REQUIRE(one.groups.size() == expected.size());
    for (std::size_t g = 0; g < expected.size(); ++g) REQUIRE(one.groups[g].range.begin == expected[g]);
}

// A run on domains keeps each rank's particles in the last tree's order, a restarted run in ID
// order: both must build the same tree. Particles of one key (one finest cell) are the case the
// key sort alone leaves to the input order.
TEST_CASE("the tree does not depend on the order of the particles", "[tree]")
{
    ParticleSet p = test::clustered_particles(20000, 7);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> tiny(0.0, 1e-9), mass(0.5, 1.5);
    // 2000 particles within a billionth of one point (far below a finest cell of this set's cube),
    // and 200 of them pairwise coincident with different masses.
    for (Eigen::Index i = 0; i < 2000; ++i) {
        for (int d = 0; d < 3; ++d) p.pos(d, i) = 0.25 + tiny(rng);
        p.mass[i] = mass(rng);
    }
    for (Eigen::Index i = 0; i < 200; i += 2) p.pos.col(i + 1) = p.pos.col(i);
    std::vector<std::uint32_t> shuffle(p.size());
    for (std::size_t i = 0; i < shuffle.size(); ++i) shuffle[i] = static_cast<std::uint32_t>(i);
    std::shuffle(shuffle.begin(), shuffle.end(), rng);
    Eigen::Matrix3Xd pos(3, p.pos.cols());
    Eigen::VectorXd m(p.mass.size());
    for (std::size_t k = 0; k < shuffle.size(); ++k) {
        pos.col(static_cast<Eigen::Index>(k)) = p.pos.col(shuffle[k]);
        m[static_cast<Eigen::Index>(k)] = p.mass[shuffle[k]];
    }
    const BuildParams params{16, 32};
    const Octree one = build_octree(p.pos, p.mass, params);
    const Octree other = build_octree(pos, m, params);
    CHECK(same_bytes(one.particles, other.particles));
    check_same_nodes(one, other);
    // Each slot holds the same particle (or, for coincident ones, one of equal position and mass).
    std::size_t differ = 0;
    for (std::size_t k = 0; k < one.order.size(); ++k) {
        const auto a = static_cast<Eigen::Index>(one.order[k]), b = static_cast<Eigen::Index>(shuffle[other.order[k]]);
        if (a != b && (p.pos.col(a) != p.pos.col(b) || p.mass[a] != p.mass[b])) ++differ;
    }
    CHECK(differ == 0);
}

TEST_CASE("ncrit = 0 sizes the groups by the number of particles", "[tree]")
{
    // 96 below kLargeGroupsFrom particles, 192 from there; a given ncrit is kept.
    CHECK(kDefaultNcrit == 0);
    CHECK(resolved_ncrit(0, 1) == 96);
    CHECK(resolved_ncrit(0, kLargeGroupsFrom - 1) == 96);
    CHECK(resolved_ncrit(0, kLargeGroupsFrom) == 192);
    CHECK(resolved_ncrit(0, std::size_t{1} << 23) == 192);
    CHECK(resolved_ncrit(40, std::size_t{1} << 23) == 40);
    // A default build has the groups of ncrit 96; a negative ncrit is refused.
    const ParticleSet p = test::clustered_particles(20000, 5);
    const Octree automatic = build_octree(p.pos, p.mass, BuildParams{});
    const Octree explicit96 = build_octree(p.pos, p.mass, BuildParams{kDefaultNleaf, 96});
    REQUIRE(automatic.groups.size() == explicit96.groups.size());
    bool same = true;
    std::size_t largest = 0;
    for (std::size_t g = 0; g < automatic.groups.size(); ++g) {
        const ParticleRange a = automatic.groups[g].range, b = explicit96.groups[g].range;
        same = same && a.begin == b.begin && a.end == b.end;
        largest = std::max<std::size_t>(largest, static_cast<std::size_t>(a.end - a.begin));
    }
    CHECK(same);
    CHECK(largest > 64);
    CHECK(largest <= 96);
    CHECK_THROWS_WITH(build_octree(p.pos, p.mass, BuildParams{kDefaultNleaf, -1}), Catch::Contains("ncrit >= 0"));
}

TEST_CASE("degenerate inputs build and evaluate correctly", "[tree]")
{
    GravityParams gravity{1.0, 0.0};
    Forces f, ref;
    SECTION("N = 0")
    {
        Eigen::Matrix3Xd pos(3, 0);
        Eigen::VectorXd mass(0);
        const Octree tree = build_octree(pos, mass, BuildParams{});
        CHECK(tree.num_nodes() == 0);
        CHECK(tree.groups.empty());
        TreeCpuEngine(TreeParams{}, gravity).compute(pos, mass, f);
        CHECK(f.acc.cols() == 0);
    }
    SECTION("all particles at one point")
    {
        Eigen::Matrix3Xd pos = Eigen::Matrix3Xd::Constant(3, 500, 0.25);
        Eigen::VectorXd mass = Eigen::VectorXd::Ones(500);
        Octree tree = build_octree(pos, mass, BuildParams{16, 16});
        set_opening_radii(tree, 0.5);
        CHECK(tree.num_nodes() == 1);
        check_coverage(tree, build_interaction_lists(tree));
        TreeCpuEngine(TreeParams{0.5, {16, 16}}, gravity).compute(pos, mass, f);
        CHECK(f.acc.allFinite());
        CHECK(f.acc.norm() == 0);
        // With softening, each feels the potential of the other 499.
        TreeCpuEngine(TreeParams{0.5, {16, 16}}, GravityParams{1.0, 0.5}).compute(pos, mass, f);
        CHECK(f.pot[0] == Approx(-499 / 0.5));
    }
    SECTION("two far clusters and a 1e6 dynamic range in separations")
    {
        ParticleSet p = test::random_particles(2000, 21);
        for (Eigen::Index i = 0; i < p.pos.cols(); ++i) {
            if (i % 2)
                p.pos.col(i) = p.pos.col(i) * 1e-6 + Eigen::Vector3d(1e3, 0, 0);
            else
                p.pos.col(i) *= 1e-3;
        }
        Octree tree = build_octree(p.pos, p.mass, BuildParams{8, 16});
        set_opening_radii(tree, 0.5);
        check_tree_invariants(tree, p, 8);
        check_coverage(tree, build_interaction_lists(tree));
        TreeCpuEngine(TreeParams{0.3, {8, 16}}, gravity).compute(p.pos, p.mass, f);
        DirectCpuEngine(gravity).compute(p.pos, p.mass, ref);
        std::vector<double> err;
        for (Eigen::Index i = 0; i < p.pos.cols(); ++i)
            err.push_back((f.acc.col(i) - ref.acc.col(i)).norm() / ref.acc.col(i).norm());
        std::sort(err.begin(), err.end());
        CHECK(err[err.size() / 2] < 1e-3);
    }
    SECTION("N = 1 and N = 2")
    {
        Eigen::Matrix3Xd pos(3, 2);
        pos << 0, 1, 0, 0, 0, 0;
        Eigen::VectorXd mass = Eigen::VectorXd::Ones(2);
        TreeCpuEngine(TreeParams{}, gravity).compute(pos, mass, f);
        CHECK(f.acc(0, 0) == Approx(1.0));
        CHECK(f.acc(0, 1) == Approx(-1.0));
        TreeCpuEngine(TreeParams{}, gravity).compute(pos.leftCols(1), mass.head(1), f);
        CHECK(f.acc.norm() == 0);
        CHECK(f.pot[0] == 0);
    }
    SECTION("a NaN or an infinity anywhere is an error, not a tree")
    {
        const ParticleSet p = test::random_particles(5000, 4);
        const int axis = GENERATE(0, 1, 2, 3); // 3: the mass
        const double bad = GENERATE(std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity());
        Eigen::Matrix3Xd pos = p.pos;
        Eigen::VectorXd mass = p.mass;
        if (axis < 3)
            pos(axis, 4321) = bad;
        else
            mass[4321] = bad;
        CHECK_THROWS_WITH(build_octree(pos, mass, BuildParams{}), Catch::Contains("non-finite"));
    }
}

TEST_CASE("a domain's tree opens the cells its cut passes through as larger: the ancestors of its two ends",
          "[tree][domains]")
{
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const int n = 20000;
    Eigen::Matrix3Xd all(3, n);
    for (int i = 0; i < n; ++i) all.col(i) << u(rng), u(rng), u(rng);
    const double mn[3] = {-1, -1, -1}, mx[3] = {1, 1, 1};
    const KeyFrame frame = moved_domains_frame(domains_key_frame(mn, mx), 3);
    std::vector<std::uint64_t> keys(n);
    for (int i = 0; i < n; ++i)
        keys[static_cast<std::size_t>(i)] =
            hilbert_key(frame.cell(all(0, i), 0), frame.cell(all(1, i), 1), frame.cell(all(2, i), 2));
    // The domain of the second and third quarters of the keys: first .. end - 1.
    std::vector<std::uint64_t> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    const std::uint64_t first = sorted[n / 4], end = sorted[3 * n / 4];
    std::vector<int> mine;
    for (int i = 0; i < n; ++i)
        if (keys[static_cast<std::size_t>(i)] >= first && keys[static_cast<std::size_t>(i)] < end) mine.push_back(i);
    const auto m = static_cast<Eigen::Index>(mine.size());
    Eigen::Matrix3Xd pos(3, m);
    for (Eigen::Index k = 0; k < m; ++k) pos.col(k) = all.col(mine[static_cast<std::size_t>(k)]);
    const Eigen::VectorXd mass = Eigen::VectorXd::Constant(m, 1.0 / n);
    Octree tree;
    build_octree_into(tree, pos, mass, BuildParams{8, 16}, nullptr, BuildContent::full, &frame);
    const std::vector<double> before(tree.size.begin(), tree.size.end());
    const std::size_t cut = enlarge_cut_cells(tree, first, end, 1.5);
    // The sorted particles holding the domain's least and greatest keys.
    std::int32_t least = 0, greatest = 0;
    for (std::size_t k = 0; k < tree.keys.size(); ++k) {
        const std::uint64_t h = hilbert_key_of_morton(tree.keys[k]);
        if (h < hilbert_key_of_morton(tree.keys[static_cast<std::size_t>(least)])) least = static_cast<std::int32_t>(k);
        if (h > hilbert_key_of_morton(tree.keys[static_cast<std::size_t>(greatest)]))
            greatest = static_cast<std::int32_t>(k);
    }
    CHECK(hilbert_key_of_morton(tree.keys[static_cast<std::size_t>(least)]) == first);
    std::size_t coarse_ends = 0;
    for (std::int32_t i = 0; i < tree.num_nodes(); ++i) {
        const auto k = static_cast<std::size_t>(i);
        const ParticleRange r = tree.range[k];
        const bool holds_an_end = (r.begin <= least && least < r.end) || (r.begin <= greatest && greatest < r.end);
        const bool enlarged = tree.size[k] != before[k];
        if (enlarged) {
            CHECK(holds_an_end); // only the ends' ancestors
            CHECK(tree.size[k] == 1.5 * before[k]);
        }
        // The coarse ancestors of the ends reach past them (the domain is half the keys).
        if (holds_an_end && cell_level(tree.cell_centre[k].w, tree.frame.side) <= 1) {
            CHECK(enlarged);
            ++coarse_ends;
        }
    }
    CHECK(tree.size[0] == 1.5 * before[0]); // the root
    CHECK(coarse_ends >= 2);
    CHECK(cut >= 3);
    CHECK(cut <= 2 * (kMaxTreeLevel + 1));
    // No range known, or the whole range: nothing.
    CHECK(enlarge_cut_cells(tree, 0, 0) == 0);
    CHECK_FALSE(cell_reaches_outside(first, 0, 0, (std::uint64_t{1} << 63) - 1));
    CHECK_FALSE(cell_reaches_outside(first, kMaxTreeLevel, first, end - 1));
    CHECK(cell_reaches_outside(first, 0, first, end - 1));
}
