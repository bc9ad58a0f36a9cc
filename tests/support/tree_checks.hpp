// Checks of a built tree shared by the tree tests: its layout, leaf coverage and moments against
// brute-force sums, and the coverage of its interaction lists (every particle sees every other
// exactly once).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/particles.hpp"
#include "tree/interaction_lists.hpp"
#include "tree/morton.hpp"
#include "tree/node_moments.hpp"
#include "tree/octree.hpp"
#include "tree/walk.hpp"

namespace grove::test {

// Checks pre-order layout, leaf coverage and moments of every node against brute-force sums.
inline void check_tree_invariants(const Octree& tree, const ParticleSet& p, int nleaf)
{
    const std::int32_t n = static_cast<std::int32_t>(p.size());
    REQUIRE(tree.particles.size() == p.size());
    std::vector<int> leaf_hits(p.size(), 0);
    for (std::int32_t i = 0; i < tree.num_nodes(); ++i) {
        REQUIRE(tree.next[i] > i);
        REQUIRE(tree.next[i] <= tree.num_nodes());
        REQUIRE((tree.is_leaf[i] == 1) == (tree.next[i] == i + 1));
        const auto r = tree.range[i];
        REQUIRE(r.begin < r.end);
        // The particles lie in the node's box (centre and longest side), up to rounding.
        const auto& c = tree.cell_centre[i];
        const double reach = tree.size[i] / 2 * (1 + 1e-9);
        Eigen::Vector3d lo = Eigen::Vector3d::Constant(INFINITY), hi = -lo;
        for (std::int32_t k = r.begin; k < r.end; ++k) {
            const auto& q = tree.particles[k];
            REQUIRE(std::abs(q.x - c.x) <= reach);
            REQUIRE(std::abs(q.y - c.y) <= reach);
            REQUIRE(std::abs(q.z - c.z) <= reach);
            lo = lo.cwiseMin(Eigen::Vector3d(q.x, q.y, q.z));
            hi = hi.cwiseMax(Eigen::Vector3d(q.x, q.y, q.z));
        }
        REQUIRE(tree.size[i] == (hi - lo).maxCoeff()); // the box is the particles' own, not the cell
        if (tree.is_leaf[i]) {
            for (std::int32_t k = r.begin; k < r.end; ++k) ++leaf_hits[k];
            if (r.end - r.begin > nleaf) { // only coincident keys, or the deepest level, may overfill a leaf
                const bool deepest =
                    tree.cell_centre[i].w <= tree.frame.side / double(1u << kMaxTreeLevel) * (1 + 1e-9);
                CHECK((tree.keys[static_cast<std::size_t>(r.begin)] == tree.keys[static_cast<std::size_t>(r.end - 1)] ||
                       deepest));
            }
        } else { // children tile the parent's range in order, at most 8 (what finish_node reads)
            std::int32_t expect = r.begin;
            int children = 0;
            for (std::int32_t c = i + 1; c < tree.next[i]; c = tree.next[c]) {
                REQUIRE(tree.range[c].begin == expect);
                expect = tree.range[c].end;
                ++children;
            }
            REQUIRE(expect == r.end);
            REQUIRE(children <= kMaxChildren);
        }
        // Brute-force moments.
        double m = 0;
        Eigen::Vector3d com = Eigen::Vector3d::Zero();
        for (std::int32_t k = r.begin; k < r.end; ++k) {
            const auto& q = tree.particles[k];
            m += q.w;
            com += q.w * Eigen::Vector3d(q.x, q.y, q.z);
        }
        com /= m;
        Eigen::Matrix3d Q = Eigen::Matrix3d::Zero();
        double trace = 0;
        for (std::int32_t k = r.begin; k < r.end; ++k) {
            const auto& q = tree.particles[k];
            const Eigen::Vector3d d = Eigen::Vector3d(q.x, q.y, q.z) - com;
            Q += q.w * (3 * d * d.transpose() - d.squaredNorm() * Eigen::Matrix3d::Identity());
            trace += q.w * d.squaredNorm();
        }
        const auto& cm = tree.com_mass[i];
        // The node's extent: its cell's side, or where the keys' frame warped the cells (far
        // outside the core, tree/key_frame.hpp) its particles' box, which is then the wider.
        const double side = std::max(tree.cell_centre[i].w, tree.size[i]);
        const double scale = m * side * side;
        CHECK(cm.w == Approx(m).epsilon(1e-12));
        CHECK((Eigen::Vector3d(cm.x, cm.y, cm.z) - com).norm() <= 1e-12 * (tree.size[0] + 1));
        const auto& qq = tree.quad[i];
        Eigen::Matrix3d Qt;
        Qt << qq.xx, qq.xy, qq.xz, qq.xy, qq.yy, qq.yz, qq.xz, qq.yz, qq.zz();
        CHECK((Qt - Q).norm() <= 1e-10 * scale);
        CHECK(std::abs(qq.trace - trace) <= 1e-10 * scale);
    }
    for (std::int32_t k = 0; k < n; ++k) REQUIRE(leaf_hits[k] == 1);
    // The permutation is a bijection back to the caller's particles.
    std::vector<std::uint32_t> sorted_order(tree.order);
    std::sort(sorted_order.begin(), sorted_order.end());
    for (std::int32_t k = 0; k < n; ++k) REQUIRE(sorted_order[k] == static_cast<std::uint32_t>(k));
    for (std::int32_t k = 0; k < n; ++k) REQUIRE(tree.particles[k].x == p.pos(0, tree.order[k]));
    // Root: total mass and centre of mass.
    CHECK(tree.com_mass[0].w == Approx(p.mass.sum()).epsilon(1e-12));
}

// Every particle must see every other particle exactly once through its group's lists: the node
// and leaf ranges of a group tile [0, N) without overlap.
inline void check_coverage(const Octree& tree, const InteractionLists& lists)
{
    const auto n = static_cast<std::int32_t>(tree.particles.size());
    for (std::size_t g = 0; g < tree.groups.size(); ++g) {
        std::vector<ParticleRange> ranges;
        for (auto k = lists.node_offset[g]; k < lists.node_offset[g + 1]; ++k)
            ranges.push_back(tree.range[lists.node_list[k]]);
        for (auto k = lists.leaf_offset[g]; k < lists.leaf_offset[g + 1]; ++k)
            ranges.push_back(tree.range[lists.leaf_list[k]]);
        std::sort(ranges.begin(), ranges.end(), [](auto a, auto b) { return a.begin < b.begin; });
        std::int32_t expect = 0;
        for (const auto& r : ranges) {
            REQUIRE(r.begin == expect);
            expect = r.end;
        }
        REQUIRE(expect == n);
        // The group's own particles come through leaves only (never through a multipole).
        for (auto k = lists.node_offset[g]; k < lists.node_offset[g + 1]; ++k) {
            const auto r = tree.range[lists.node_list[k]];
            REQUIRE((r.end <= tree.groups[g].range.begin || r.begin >= tree.groups[g].range.end));
        }
    }
}

// The lists of the host walk (build_interaction_lists) with each group's entries in the order of
// the walk in rounds (tree/walk.hpp: walk_group_in_rounds), the GPU's warp walk; the same entries
// are checked to be there (sorted, each group's lists are the host walk's). capacity: the stack's
// runs (0: the device's); path_rounds (if given) gets the rounds walked along a path, where a stack
// had no room for a round's pushes.
template <class T>
InteractionLists lists_in_rounds(const OctreeView<T>& view, int capacity = 0, long long* path_rounds = nullptr)
{
    InteractionLists lists = build_interaction_lists(view);
    for (std::int32_t g = 0; g < view.num_groups; ++g) {
        WritePass pass{
            lists.node_list.data() + lists.node_offset[g], lists.leaf_list.data() + lists.leaf_offset[g], {}};
        std::vector<std::int32_t> nodes(lists.nodes_of(g), lists.nodes_of(g) + lists.node_count(g));
        std::vector<std::int32_t> leaves(lists.leaves_of(g), lists.leaves_of(g) + lists.leaf_count(g));
        const long long rounds = walk_group_in_rounds(view, g, pass, capacity);
        if (path_rounds) *path_rounds += rounds;
        REQUIRE(pass.lengths.nodes == lists.node_count(g));
        REQUIRE(pass.lengths.leaves == lists.leaf_count(g));
        std::vector<std::int32_t> round_nodes(lists.nodes_of(g), lists.nodes_of(g) + lists.node_count(g));
        std::vector<std::int32_t> round_leaves(lists.leaves_of(g), lists.leaves_of(g) + lists.leaf_count(g));
        std::sort(round_nodes.begin(), round_nodes.end());
        std::sort(round_leaves.begin(), round_leaves.end());
        REQUIRE(round_nodes == nodes); // the host walk lists in increasing index order
        REQUIRE(round_leaves == leaves);
    }
    return lists;
}

} // namespace grove::test
