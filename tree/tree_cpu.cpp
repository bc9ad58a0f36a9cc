#include "tree/tree_cpu.hpp"

#include <chrono>

#include "tree/gravity.hpp"
#include "tree/walk.hpp"

namespace grove {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sums the node and leaf lists of one group onto each of its particles (Morton order).
void evaluate_group(const OctreeView<double>& tree, const InteractionLists& lists, std::int32_t g, double eps2,
                    std::vector<Accum<double>>& sorted_acc)
{
    const Group<double>& group = tree.groups[g];
    for (std::int32_t i = group.range.begin; i < group.range.end; ++i) {
        const Vec4<double> xi = tree.particles[i];
        Accum<double> acc;
        for (std::int64_t k = lists.node_offset[g]; k < lists.node_offset[g + 1]; ++k) {
            const std::int32_t node = lists.node_list[k];
            const Vec4<double> c = tree.com_mass[node];
            acc = m2p(acc, c.x - xi.x, c.y - xi.y, c.z - xi.z, c.w, tree.quad[node], eps2);
        }
        for (std::int64_t k = lists.leaf_offset[g]; k < lists.leaf_offset[g + 1]; ++k) {
            const ParticleRange r = tree.range[lists.leaf_list[k]];
            for (std::int32_t j = r.begin; j < r.end; ++j) {
                if (j == i) continue;
                const Vec4<double> xj = tree.particles[j];
                acc = p2p(acc, xj.x - xi.x, xj.y - xi.y, xj.z - xi.z, xj.w, eps2);
            }
        }
        sorted_acc[static_cast<std::size_t>(i)] = acc;
    }
}

} // namespace

InteractionLists build_interaction_lists(const Octree& tree)
{
    const auto view = tree.view();
    const std::int32_t num_groups = view.num_groups;
    InteractionLists lists;
    lists.node_offset.assign(static_cast<std::size_t>(num_groups) + 1, 0);
    lists.leaf_offset.assign(static_cast<std::size_t>(num_groups) + 1, 0);
#pragma omp parallel for schedule(dynamic, 32)
    for (std::int32_t g = 0; g < num_groups; ++g) {
        const auto lengths = walk_group<CountPass>(view, view.groups[g], nullptr, nullptr);
        lists.node_offset[g + 1] = lengths.nodes;
        lists.leaf_offset[g + 1] = lengths.leaves;
    }
    for (std::int32_t g = 0; g < num_groups; ++g) { // exclusive scan into offsets
        lists.node_offset[g + 1] += lists.node_offset[g];
        lists.leaf_offset[g + 1] += lists.leaf_offset[g];
    }
    lists.node_list.resize(static_cast<std::size_t>(lists.node_offset.back()));
    lists.leaf_list.resize(static_cast<std::size_t>(lists.leaf_offset.back()));
#pragma omp parallel for schedule(dynamic, 32)
    for (std::int32_t g = 0; g < num_groups; ++g)
        walk_group<WritePass>(view, view.groups[g], lists.node_list.data() + lists.node_offset[g],
                              lists.leaf_list.data() + lists.leaf_offset[g]);
    return lists;
}

TreeStats list_statistics(const Octree& tree, const InteractionLists& lists)
{
    TreeStats s;
    s.num_groups = static_cast<std::int64_t>(tree.groups.size());
    s.num_nodes = tree.num_nodes();
    if (s.num_groups == 0) return s;
    double node_pairs = 0, leaf_pairs = 0;
    for (std::size_t g = 0; g < tree.groups.size(); ++g) {
        const double members = tree.groups[g].range.end - tree.groups[g].range.begin;
        node_pairs += members * static_cast<double>(lists.node_offset[g + 1] - lists.node_offset[g]);
        for (std::int64_t k = lists.leaf_offset[g]; k < lists.leaf_offset[g + 1]; ++k) {
            const auto r = tree.range[static_cast<std::size_t>(lists.leaf_list[static_cast<std::size_t>(k)])];
            leaf_pairs += members * (r.end - r.begin);
        }
    }
    const double n = static_cast<double>(tree.particles.size());
    s.nodes_per_group = static_cast<double>(lists.node_list.size()) / static_cast<double>(s.num_groups);
    s.leaves_per_group = static_cast<double>(lists.leaf_list.size()) / static_cast<double>(s.num_groups);
    s.node_interactions_per_particle = node_pairs / n;
    s.leaf_interactions_per_particle = leaf_pairs / n;
    return s;
}

TreeCpuEngine::TreeCpuEngine(TreeParams tree, GravityParams gravity) : tree_params_(tree), gravity_(gravity) {}

void TreeCpuEngine::compute(const Eigen::Matrix3Xd& pos, const Eigen::VectorXd& mass, Forces& out)
{
    BuildTimes build;
    build_octree_into(tree_, pos, mass, tree_params_, &build);
    evaluate(tree_, tree_params_.theta, out);
    PhaseTimes walk_times = times_;
    times_ = {{"keys", build.keys},
              {"sort", build.sort},
              {"build", build.build},
              {"moments", build.moments},
              {"groups", build.groups}};
    times_.insert(times_.end(), walk_times.begin(), walk_times.end());
}

void TreeCpuEngine::evaluate(Octree& tree, double theta, Forces& out)
{
    const auto n = static_cast<Eigen::Index>(tree.particles.size());
    out.acc.resize(3, n);
    out.pot.resize(n);
    auto start = Clock::now();
    set_opening_radii(tree, theta);
    const InteractionLists lists = build_interaction_lists(tree);
    const double walk_seconds = seconds_since(start);

    start = Clock::now();
    const auto view = tree.view();
    const double eps2 = gravity_.eps * gravity_.eps;
    std::vector<Accum<double>> sorted_acc(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(dynamic, 8)
    for (std::int32_t g = 0; g < view.num_groups; ++g) evaluate_group(view, lists, g, eps2, sorted_acc);
    const double G = gravity_.G;
#pragma omp parallel for schedule(static)
    for (Eigen::Index k = 0; k < n; ++k) {
        const auto i = static_cast<Eigen::Index>(tree.order[static_cast<std::size_t>(k)]);
        const auto& a = sorted_acc[static_cast<std::size_t>(k)];
        out.acc(0, i) = G * a.ax;
        out.acc(1, i) = G * a.ay;
        out.acc(2, i) = G * a.az;
        out.pot[i] = G * a.pot;
    }
    times_ = {{"walk", walk_seconds}, {"evaluate", seconds_since(start)}};
    stats_ = list_statistics(tree, lists);
}

} // namespace grove
