#include "tree/tree_cpu.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include "core/memory_check.hpp"
#include "core/softening.hpp"
#include "core/wall_clock.hpp"
#include "tree/gravity.hpp"
#include "tree/group_shares.hpp"
#include "tree/list_batches.hpp"
#include "tree/mac.hpp"
#include "tree/store_forces.hpp"

namespace grove {

namespace {

// Sums the node and leaf lists of one group onto each of its particles (Morton order). With
// softening by type (h not null) each pair is softened by the sum of its two h
// (core/softening.hpp), else by eps2.
void evaluate_group(const OctreeView<double>& tree, const SofteningMoments<double>* h, double eps2,
                    const InteractionLists& lists, std::int32_t g, std::vector<Accum<double>>& sorted_acc)
{
    const Group<double>& group = tree.groups[g];
    for (std::int32_t i = group.range.begin; i < group.range.end; ++i) {
        const Vec4<double> xi = tree.particles[i];
        const double hi = h ? h->particle[static_cast<std::size_t>(i)] : 0.0;
        Accum<double> acc;
        const std::int32_t* nodes = lists.nodes_of(g);
        for (std::int64_t k = 0; k < lists.node_count(g); ++k) {
            const std::int32_t node = nodes[k];
            const Vec4<double> c = tree.com_mass[node];
            const double e2 = h ? hi + h->node[static_cast<std::size_t>(node)] : eps2;
            acc = m2p(acc, c.x - xi.x, c.y - xi.y, c.z - xi.z, c.w, tree.quad[node], e2);
        }
        const std::int32_t* leaves = lists.leaves_of(g);
        for (std::int64_t k = 0; k < lists.leaf_count(g); ++k) {
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
    make_softening_moments(tree, half_eps2_, softening_);
    const auto view = set_opening_criterion(tree, tree.view(), criterion, tree.groups, estimate_.magnitudes());
    // By type, cells whose particles' softenings spread far open closer in (tree/mac.hpp).
    for (std::size_t i = 0; i < softening_.radius2.size(); ++i)
        tree.r_open2[i] = std::max(tree.r_open2[i], softening_.radius2[i]);
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
            evaluate_group(view, softening_.empty() ? nullptr : &softening_, eps2, lists, g, sorted_acc);
        evaluate_seconds += seconds_since(start);
    }
    last_batches_ = static_cast<int>(batches.size());
    start = WallClock::now();
    store_forces(tree_order ? nullptr : tree.order.data(), sorted_acc.data(), n, gravity_.G, out);
    times_ = {{"walk", walk_seconds}, {"evaluate", evaluate_seconds + seconds_since(start)}};
    if (first_pass_seconds >= 0) times_.insert(times_.begin(), {"first pass", first_pass_seconds});
    stats_ = statistics.of(tree);
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
