#include "tree/tree_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include "core/memory_check.hpp"
#include "core/resize_keeping_memory.hpp"
#include "core/softening.hpp"
#include "core/wall_clock.hpp"
#include "tree/gravity.hpp"
#include "tree/group_shares.hpp"
#include "tree/list_batches.hpp"
#include "tree/mac.hpp"
#include "tree/store_forces.hpp"
#include "tree/walk.hpp"

namespace grove {

namespace {

// Sums one group's node and leaf lists onto its particles first .. last - 1 (Morton order), or
// onto those of them flagged in `only` (null: all). With softening by type (h not null) each pair
// is softened by the sum of its two h (core/softening.hpp), else by eps2.
void evaluate_targets(const OctreeView<double>& tree, const SofteningMoments<double>* h, double eps2,
                      const std::int32_t* nodes, std::int64_t node_count, const std::int32_t* leaves,
                      std::int64_t leaf_count, ParticleRange targets, const std::uint8_t* only,
                      std::vector<Accum<double>>& sorted_acc)
{
    for (std::int32_t i = targets.begin; i < targets.end; ++i) {
        if (only && !only[i]) continue;
        const Vec4<double> xi = tree.particles[i];
        const double hi = h ? h->particle[static_cast<std::size_t>(i)] : 0.0;
        Accum<double> acc;
        for (std::int64_t k = 0; k < node_count; ++k) {
            const std::int32_t node = nodes[k];
            const Vec4<double> c = tree.com_mass[node];
            const double e2 = h ? hi + h->node[static_cast<std::size_t>(node)] : eps2;
            acc = m2p(acc, c.x - xi.x, c.y - xi.y, c.z - xi.z, c.w, tree.quad[node], e2);
        }
        for (std::int64_t k = 0; k < leaf_count; ++k) {
            const ParticleRange r = tree.range[leaves[k]];
            for (std::int32_t j = r.begin; j < r.end; ++j) {
                if (j == i) continue;
                const Vec4<double> xj = tree.particles[j];
                const double e2 = h ? hi + h->particle[static_cast<std::size_t>(j)] : eps2;
                acc = p2p(acc, xj.x - xi.x, xj.y - xi.y, xj.z - xi.z, xj.w, e2);
            }
        }
        sorted_acc[static_cast<std::size_t>(i)] = acc;
    }
}

// A walk's lists, kept by one thread for one group at a time.
struct GroupLists {
    std::vector<std::int32_t> nodes, leaves;
    void node(std::int32_t i) { nodes.push_back(i); }
    void leaf(std::int32_t i) { leaves.push_back(i); }
};

} // namespace

TreeCpuEngine::TreeCpuEngine(TreeParams tree, GravityParams gravity)
    : ForceEngine("tree-cpu"), tree_params_(tree), gravity_(gravity), updater_(tree.rebuild_every)
{
}

void TreeCpuEngine::compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out)
{
    half_eps2_ = half_squared_softening(gravity_, type, static_cast<std::size_t>(pos.cols()), name());
    BuildTimes build;
    updater_.update(tree_, pos, mass, tree_params_.build, &build);
    evaluate_with_lookahead(pos, mass, build, false, out);
}

// The evaluation, with the next tree built after it when look-ahead is on and the integrator gave
// its prediction (tree/refit.hpp; the CPU has no GPU time to hide it in, the tests use it).
// tree_order: the forces stay in the order of the tree just built, which the caller takes.
void TreeCpuEngine::evaluate_with_lookahead(PositionsRef pos, MassesRef mass, const BuildTimes& build, bool tree_order,
                                            Forces& out)
{
    if (tree_params_.lookahead) updater_.start_lookahead(tree_, pos, mass, tree_params_.build, tree_order);
    const OpeningCriterion criterion = tree_params_.opening();
    evaluate_into(tree_, criterion, out, tree_order);
    // This step's accelerations are the next one's estimate unless the caller sets another.
    if (criterion.kind == MacKind::relative) estimate_.set(out.acc, gravity_.G);
    PhaseTimes walk_times = times_;
    times_ = {{"keys", build.keys},       {"sort", build.sort},     {"build", build.build},
              {"moments", build.moments}, {"groups", build.groups}, {"gather", build.gather}};
    times_.insert(times_.end(), walk_times.begin(), walk_times.end());
    updater_.finish_lookahead();
    if (tree_params_.lookahead) times_.emplace_back("look-ahead build", updater_.lookahead_seconds());
}

void TreeCpuEngine::evaluate(Octree& tree, const OpeningCriterion& criterion, Forces& out)
{
    evaluate_into(tree, criterion, out, false);
}

void TreeCpuEngine::evaluate_into(Octree& tree, const OpeningCriterion& criterion, Forces& out, bool tree_order)
{
    const auto n = static_cast<Eigen::Index>(tree.particles.size());
    // The estimate is in the caller's order, as are the first pass's forces.
    const auto first_pass = [&](const OpeningCriterion& c, Forces& f) { evaluate_into(tree, c, f, false); };
    const double first_pass_seconds =
        criterion.kind == MacKind::relative
            ? estimate_by_first_pass(estimate_, tree.particles.size(), gravity_.G, first_pass_forces_, first_pass)
            : -1;
    auto start = WallClock::now();
    const OctreeView<double> view = opened_view(tree, criterion);
    // This share's groups: equal costs by the last evaluation's lists, or equal particle counts.
    const GroupRange share = share_of_groups(tree, share_costs_, share_index_, share_count_);
    InteractionLists lists = count_interaction_lists(view, share);
    const std::vector<GroupRange> batches =
        batches_by_lengths(share, lists.node_offset.data() + share.first, lists.leaf_offset.data() + share.first,
                           list_budget_entries(lists.node_offset.back() + lists.leaf_offset.back()));
    double walk_seconds = seconds_since(start), evaluate_seconds = 0;

    const double eps2 = gravity_.eps * gravity_.eps;
    std::vector<Accum<double>> sorted_acc(static_cast<std::size_t>(n));
    ListStatistics statistics;
    if (share_count_ > 1) last_costs_.assign(tree.particles.size(), 0.0);
    for (const GroupRange batch : batches) {
        start = WallClock::now();
        write_interaction_lists(view, batch, lists);
        walk_seconds += seconds_since(start);
        if (share_count_ > 1) add_group_costs(tree, lists, batch, last_costs_);
        statistics.add(tree, lists, batch); // untimed, as the statistics of the whole lists were
        start = WallClock::now();
#pragma omp parallel for schedule(dynamic, 8)
        for (std::int32_t g = batch.first; g < batch.last; ++g)
            evaluate_targets(view, softening_.empty() ? nullptr : &softening_, eps2, lists.nodes_of(g),
                             lists.node_count(g), lists.leaves_of(g), lists.leaf_count(g), view.groups[g].range,
                             nullptr, sorted_acc);
        evaluate_seconds += seconds_since(start);
    }
    last_batches_ = static_cast<int>(batches.size());
    start = WallClock::now();
    store_forces(tree_order ? nullptr : tree.order.data(), sorted_acc.data(), n, gravity_.G, out);
    times_ = {{"walk", walk_seconds}, {"evaluate", evaluate_seconds + seconds_since(start)}};
    if (first_pass_seconds >= 0) times_.insert(times_.begin(), {"first pass", first_pass_seconds});
    stats_ = statistics.of(tree);
    work_ = {stats_.node_interactions_per_particle * static_cast<double>(n),
             stats_.leaf_interactions_per_particle * static_cast<double>(n),
             stats_.nodes_per_group * static_cast<double>(stats_.num_groups),
             stats_.leaves_per_group * static_cast<double>(stats_.num_groups), static_cast<double>(stats_.num_groups)};
}

OctreeView<double> TreeCpuEngine::opened_view(Octree& tree, const OpeningCriterion& criterion)
{
    make_softening_moments(tree, half_eps2_, softening_);
    const auto view = set_opening_criterion(tree, tree.view(), criterion, tree.groups, estimate_.magnitudes());
    // By type, cells whose particles' softenings spread far open closer in (tree/mac.hpp).
    for (std::size_t i = 0; i < softening_.radius2.size(); ++i)
        tree.r_open2[i] = std::max(tree.r_open2[i], softening_.radius2[i]);
    return view;
}

void TreeCpuEngine::compute_subset(PositionsRef pos, MassesRef mass, TypesRef type,
                                   const std::vector<std::int32_t>& targets, Forces& out)
{
    const auto n = static_cast<std::size_t>(pos.cols());
    for (const std::int32_t t : targets)
        if (t < 0 || static_cast<std::size_t>(t) >= n) throw std::out_of_range("tree-cpu: target index out of range");
    half_eps2_ = half_squared_softening(gravity_, type, n, name());
    BuildTimes build;
    updater_.update(tree_, pos, mass, tree_params_.build, &build);
    const OpeningCriterion criterion = tree_params_.opening();
    if (criterion.kind == MacKind::relative && estimate_.magnitudes().size() != n)
        throw std::runtime_error("tree-cpu: forces on a subset under the relative criterion need the last "
                                 "accelerations (set_acceleration_estimate)");
    const auto start = WallClock::now();
    const OctreeView<double> view = opened_view(tree_, criterion);
    // The targets in the tree's order, flagged; each group holding one walks, and only they sum.
    std::vector<std::uint32_t> sorted_of(n);
    for (std::size_t k = 0; k < n; ++k) sorted_of[tree_.order[k]] = static_cast<std::uint32_t>(k);
    std::vector<std::uint8_t> due(n, 0);
    for (const std::int32_t t : targets) due[sorted_of[static_cast<std::size_t>(t)]] = 1;
    std::vector<Accum<double>> sorted_acc(n);
    const double eps2 = gravity_.eps * gravity_.eps;
    const SofteningMoments<double>* h = softening_.empty() ? nullptr : &softening_;
#pragma omp parallel
    {
        GroupLists lists;
#pragma omp for schedule(dynamic, 8)
        for (std::int32_t g = 0; g < view.num_groups; ++g) {
            const ParticleRange r = view.groups[g].range;
            if (std::find(due.begin() + r.begin, due.begin() + r.end, std::uint8_t{1}) == due.begin() + r.end) continue;
            lists.nodes.clear();
            lists.leaves.clear();
            walk_group_into(view, g, lists);
            evaluate_targets(view, h, eps2, lists.nodes.data(), static_cast<std::int64_t>(lists.nodes.size()),
                             lists.leaves.data(), static_cast<std::int64_t>(lists.leaves.size()), r, due.data(),
                             sorted_acc);
        }
    }
    const auto m = static_cast<Eigen::Index>(targets.size());
    resize_keeping_memory(out.acc, m); // on domains m moves a little each step
    resize_keeping_memory(out.pot, m);
    for (Eigen::Index k = 0; k < m; ++k) {
        const Accum<double>& a = sorted_acc[sorted_of[static_cast<std::size_t>(targets[static_cast<std::size_t>(k)])]];
        out.acc.col(k) << gravity_.G * a.ax, gravity_.G * a.ay, gravity_.G * a.az;
        out.pot[k] = gravity_.G * a.pot;
    }
    times_ = {{"keys", build.keys},
              {"sort", build.sort},
              {"build", build.build},
              {"moments", build.moments},
              {"groups", build.groups},
              {"gather", build.gather},
              {"walk + evaluate", seconds_since(start)}};
}

std::int64_t TreeCpuEngine::list_budget_entries(std::int64_t total_entries) const
{
    constexpr std::int64_t kEntry = sizeof(std::int32_t);
    std::uint64_t bytes = tree_params_.list_memory;
    // Lists of a few tens of MB need no look at the memory.
    if (bytes == 0 && total_entries * kEntry <= (std::int64_t{64} << 20))
        return std::max<std::int64_t>(1, total_entries);
    if (bytes == 0) {
        const std::uint64_t usable = usable_memory_bytes();
        bytes = usable > 0 ? usable / 4 : std::uint64_t{4} << 30;
    }
    return std::max<std::int64_t>(1, static_cast<std::int64_t>(bytes / kEntry));
}

void TreeCpuEngine::compute(ParticleStore& store)
{
    ParticleSet& p = store.host();
    half_eps2_ = half_squared_softening(gravity_, gravity_.per_type() ? store.types() : TypesRef{}, p.size(), name());
    updater_.follow(store);
    if (p.has_forces()) estimate_.set(p.acc, gravity_.G);
    BuildTimes build;
    updater_.update(tree_, p.pos, p.mass, tree_params_.build, &build);
    const bool tree_order = store.may_reorder() && updater_.order_fresh();
    evaluate_with_lookahead(p.pos, p.mass, build, tree_order, forces_);
    updater_.hand_forces(store, tree_, forces_, tree_order);
}

void TreeCpuEngine::set_share(int index, int count)
{
    if (count < 1 || index < 0 || index >= count) throw std::invalid_argument("tree-cpu: share index out of range");
    share_index_ = index;
    share_count_ = count;
}

void TreeCpuEngine::load(Octree& tree, TypesRef type)
{
    half_eps2_ = half_squared_softening(gravity_, type, tree.particles.size(), name());
    loaded_ = &tree;
}

void TreeCpuEngine::evaluate_loaded(const OpeningCriterion& criterion, Forces& out)
{
    if (!loaded_) throw std::logic_error("tree-cpu: evaluate_loaded before load");
    evaluate(*loaded_, criterion, out);
}

} // namespace grove
