#include "tree/build.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <omp.h>

#include "core/wall_clock.hpp"
#include "tree/groups.hpp"
#include "tree/key_frame.hpp"
#include "tree/moments.hpp"
#include "tree/morton.hpp"
#include "tree/radix_sort.hpp"
#include "tree/segments.hpp"

namespace grove {

namespace {

// The keys' frame (tree/key_frame.hpp) from the particles' bounding box and the quartiles of an
// even sample of them; a degenerate extent (N = 1, coincident points) gets side 1 so that keys
// stay defined. Checks finiteness in the box's pass, rather than in a serial pass of its own over
// the input.
KeyFrame key_frame_of(PositionsRef pos, MassesRef mass)
{
    double mn[3] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                    std::numeric_limits<double>::max()};
    double mx[3] = {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::lowest(),
                    std::numeric_limits<double>::lowest()};
    int finite = 1;
    const Eigen::Index n = pos.cols();
#pragma omp parallel for reduction(min : mn[:3]) reduction(max : mx[:3]) reduction(&& : finite)
    for (Eigen::Index i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d) {
            mn[d] = std::min(mn[d], pos(d, i));
            mx[d] = std::max(mx[d], pos(d, i));
        }
        // min and max pass NaN over, so every value is tested
        finite = finite && std::isfinite(pos(0, i)) && std::isfinite(pos(1, i)) && std::isfinite(pos(2, i)) &&
                 std::isfinite(mass[i]);
    }
    if (!finite) throw std::invalid_argument("tree: non-finite position or mass");
    double median[3], range = 0;
    std::vector<double> sample(kKeyFrameSample);
    for (int d = 0; d < 3; ++d) {
        for (int k = 0; k < kKeyFrameSample; ++k) sample[k] = pos(d, key_frame_sample(k, n));
        std::sort(sample.begin(), sample.end());
        median[d] = sample[kMedianRank];
        range = std::max(range, sample[kUpperQuartileRank] - sample[kLowerQuartileRank]);
    }
    return make_key_frame(mn, mx, median, range);
}

// Within each run of equal keys (particles in one finest cell), the sort kept the input's order;
// this orders such a run by position (x, then y, then z), then mass, so that the tree, and every
// sum over it, is the same whatever order the particles came in. Particles equal in all four are
// interchangeable: any order of them gives the same tree and the same force on each.
void order_ties_by_position(const std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& order, PositionsRef pos,
                            MassesRef mass)
{
    const auto n = static_cast<std::int64_t>(keys.size());
    const auto before = [&](std::uint32_t a, std::uint32_t b) {
        const auto i = static_cast<Eigen::Index>(a), j = static_cast<Eigen::Index>(b);
        for (int d = 0; d < 3; ++d)
            if (pos(d, i) != pos(d, j)) return pos(d, i) < pos(d, j);
        return mass[i] < mass[j];
    };
    // Each thread the runs that begin in its slice (a run may reach past its end).
#pragma omp parallel for schedule(static) if (n > 65536)
    for (std::int64_t k = 0; k < n - 1; ++k) {
        const auto at = static_cast<std::size_t>(k);
        if (keys[at + 1] != keys[at] || (at > 0 && keys[at - 1] == keys[at])) continue;
        std::size_t end = at + 2;
        while (end < keys.size() && keys[end] == keys[at]) ++end;
        std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(at),
                         order.begin() + static_cast<std::ptrdiff_t>(end), before);
    }
}

class TopDownBuilder {
  public:
    TopDownBuilder(Octree& tree, const std::uint64_t* keys, int nleaf, int ncrit)
        : tree_(tree), keys_(keys), nleaf_(nleaf), ncrit_(ncrit)
    {
    }

    bool is_leaf(std::int32_t begin, std::int32_t end, int level) const
    {
        return end - begin <= nleaf_ || level == kMaxTreeLevel || keys_[begin] == keys_[end - 1];
    }

    // Calls f(child_begin, child_end) for the non-empty children of a cell, in Morton order.
    template <class F> void for_each_child(std::int32_t begin, std::int32_t end, int level, F&& f) const
    {
        // Keys in [begin, end) share their top 3*level bits, so the octant digit is monotone.
        std::int32_t child_begin = begin;
        for (int octant = 0; octant < 8; ++octant) {
            const auto child_end = static_cast<std::int32_t>(
                std::partition_point(keys_ + child_begin, keys_ + end,
                                     [&](std::uint64_t k) { return morton_octant(k, level) <= octant; }) -
                keys_);
            if (child_end > child_begin) f(child_begin, child_end);
            if (child_end == end) break;
            child_begin = child_end;
        }
    }

    // Splits the serial top of the tree into segments, in pre-order.
    void split_top(std::int32_t begin, std::int32_t end, int level, std::int32_t subtree_limit,
                   std::vector<Segment>& segments) const
    {
        Segment s{begin, end, level, false, 0};
        if (end - begin <= subtree_limit || is_leaf(begin, end, level)) {
            segments.push_back(s);
            return;
        }
        s.top = true;
        const std::size_t self = segments.size();
        segments.push_back(s);
        for_each_child(begin, end, level,
                       [&](std::int32_t b, std::int32_t e) { split_top(b, e, level + 1, subtree_limit, segments); });
        segments[self].end_segment = segments.size();
    }

    // One node (its `next` is set by the caller). The cell's corner is its first key with the
    // bits below `level` cleared.
    StagedNode node(std::int32_t begin, std::int32_t end, int level, bool leaf) const
    {
        const std::uint32_t cells = kMortonAxisCells >> level; // per axis, in level-21 cells
        const std::uint64_t key = keys_[begin];
        const std::uint32_t corner[3] = {compact_bits_21(key) & ~(cells - 1), compact_bits_21(key >> 1) & ~(cells - 1),
                                         compact_bits_21(key >> 2) & ~(cells - 1)};
        const double half_cells = static_cast<double>(cells) / 2;
        const KeyFrame& f = tree_.frame; // in the frame's coordinates: the moments measure the real box
        const double unit = f.side / kMortonAxisCells;
        const double side = f.side / static_cast<double>(1u << level);
        return {{f.lo[0] + (corner[0] + half_cells) * unit, f.lo[1] + (corner[1] + half_cells) * unit,
                 f.lo[2] + (corner[2] + half_cells) * unit, side},
                {begin, end},
                0,
                leaf};
    }

    // Appends the subtree of a cell to `out` in pre-order, `next` counted from `root`, the
    // subtree's first node in out.nodes, and its groups: the maximal cells of at most ncrit
    // particles (in_group: the cell lies in one already), a leaf holding more (coincident
    // particles, or nleaf > ncrit) cut into consecutive chunks of ncrit.
    void stage(BuildStaging& out, std::size_t root, std::int32_t begin, std::int32_t end, int level,
               bool in_group) const
    {
        const bool leaf = is_leaf(begin, end, level);
        if (!in_group && (end - begin <= ncrit_ || leaf)) {
            for (std::int32_t b = begin; b < end; b += ncrit_) out.groups.push_back({b, std::min(b + ncrit_, end)});
            in_group = true;
        }
        const std::size_t self = out.nodes.size();
        out.nodes.push_back(node(begin, end, level, leaf));
        if (!leaf)
            for_each_child(begin, end, level,
                           [&](std::int32_t b, std::int32_t e) { stage(out, root, b, e, level + 1, in_group); });
        out.nodes[self].next = static_cast<std::int32_t>(out.nodes.size() - root);
    }

    // Node `index` from its staged form, `next` moved by `offset`.
    void write(std::int32_t index, const StagedNode& staged, std::int32_t offset) const
    {
        tree_.next[index] = staged.next + offset;
        tree_.is_leaf[index] = staged.leaf ? 1 : 0;
        tree_.range[index] = staged.range;
        tree_.size[index] = staged.centre.w;
        tree_.cell_centre[index] = staged.centre;
    }

  private:
    Octree& tree_;
    const std::uint64_t* keys_;
    int nleaf_, ncrit_;
};

// The parameters a build of n particles uses: checked, with ncrit 0 resolved by n.
BuildParams checked_params(const BuildParams& requested, std::size_t n)
{
    if (requested.nleaf < 1 || requested.ncrit < 0)
        throw std::invalid_argument("tree: nleaf must be >= 1 and ncrit >= 0 (0: by the number of particles)");
    return {requested.nleaf, resolved_ncrit(requested.ncrit, n)};
}

// The node arrays in pre-order and the groups' ranges (their boxes left at zero): the top
// serially, then every subtree staged by one thread in its own buffer and copied to its place once
// a scan of the subtrees' sizes has placed them. One recursion per subtree: counting the nodes
// first and writing them in a second recursion walks every subtree twice, and finding the groups
// in two more passes over the nodes would read them all again.
void build_nodes(Octree& tree, const std::uint64_t* keys, std::int32_t n, const BuildParams& params,
                 std::vector<Segment>& segments)
{
    const TopDownBuilder builder(tree, keys, params.nleaf, params.ncrit);
    // About 64 subtrees per thread balance the dynamic schedule; fewer, larger ones would leave
    // threads idle at the end, more would grow the serial top. Below 2048 particles a subtree is
    // too little work to be worth a scheduling step.
    const std::int32_t subtree_limit =
        std::max({params.ncrit, params.nleaf, 2048, n / (64 * std::max(1, omp_get_max_threads()))});
    segments.clear();
    builder.split_top(0, n, 0, subtree_limit, segments);
    const auto num_segments = static_cast<std::int64_t>(segments.size());
    // Where each segment's nodes and groups were staged: the thread, and the first of each there.
    std::vector<int> owner(segments.size());
    std::vector<std::size_t> first_staged(segments.size()), first_staged_group(segments.size());
    const int max_threads = omp_get_max_threads();
    if (tree.staging.size() < static_cast<std::size_t>(max_threads))
        tree.staging.resize(static_cast<std::size_t>(max_threads));
#pragma omp parallel num_threads(max_threads)
    {
        const int thread = omp_get_thread_num();
        // Moved out and back: the threads' vectors lie side by side in tree.staging, and each
        // append writing its vector's end there made the threads fight over those cache lines.
        BuildStaging staged = std::move(tree.staging[static_cast<std::size_t>(thread)]);
        staged.nodes.clear();
        staged.groups.clear();
#pragma omp for schedule(dynamic, 1)
        for (std::int64_t s = 0; s < num_segments; ++s) {
            const auto k = static_cast<std::size_t>(s);
            Segment& seg = segments[k];
            owner[k] = thread;
            first_staged[k] = staged.nodes.size();
            first_staged_group[k] = staged.groups.size();
            // A top cell holds more than ncrit particles and is no leaf: never a group.
            if (seg.top)
                staged.nodes.push_back(builder.node(seg.begin, seg.end, seg.level, false));
            else
                builder.stage(staged, staged.nodes.size(), seg.begin, seg.end, seg.level, false);
            seg.num_nodes = static_cast<std::int32_t>(staged.nodes.size() - first_staged[k]);
            seg.num_groups = static_cast<std::int32_t>(staged.groups.size() - first_staged_group[k]);
        }
        tree.staging[static_cast<std::size_t>(thread)] = std::move(staged);
    }
    std::int32_t num_nodes = 0, num_groups = 0;
    for (Segment& seg : segments) {
        seg.first_node = num_nodes;
        num_nodes += seg.num_nodes;
        seg.first_group = num_groups;
        num_groups += seg.num_groups;
    }
    const auto nodes = static_cast<std::size_t>(num_nodes);
    tree.next.resize(nodes);
    tree.is_leaf.resize(nodes);
    tree.range.resize(nodes);
    tree.size.resize(nodes);
    tree.cell_centre.resize(nodes);
    tree.groups.resize(static_cast<std::size_t>(num_groups));
#pragma omp parallel for schedule(dynamic, 16)
    for (std::int64_t s = 0; s < num_segments; ++s) {
        const auto k = static_cast<std::size_t>(s);
        const Segment& seg = segments[k];
        const BuildStaging& from = tree.staging[static_cast<std::size_t>(owner[k])];
        const StagedNode* staged = from.nodes.data() + first_staged[k];
        for (std::int32_t i = 0; i < seg.num_nodes; ++i) builder.write(seg.first_node + i, staged[i], seg.first_node);
        if (seg.top)
            tree.next[seg.first_node] =
                seg.end_segment < segments.size() ? segments[seg.end_segment].first_node : num_nodes;
        const ParticleRange* ranges = from.groups.data() + first_staged_group[k];
        for (std::int32_t i = 0; i < seg.num_groups; ++i) {
            Group<double>& group = tree.groups[static_cast<std::size_t>(seg.first_group + i)];
            group = Group<double>{};
            group.range = ranges[i];
        }
    }
    for (BuildStaging& staged : tree.staging) {
        staged.nodes.clear();
        staged.groups.clear();
    }
}

} // namespace

Octree build_octree(PositionsRef pos, MassesRef mass, const BuildParams& params, BuildTimes* times)
{
    Octree tree;
    build_octree_into(tree, pos, mass, params, times);
    return tree;
}

void build_octree_into(Octree& tree, PositionsRef pos, MassesRef mass, const BuildParams& requested, BuildTimes* times,
                       BuildContent content, const KeyFrame* frame_given)
{
    BuildTimes local_times;
    BuildTimes& t = times ? *times : local_times;
    t = BuildTimes{};
    const BuildParams params = checked_params(requested, static_cast<std::size_t>(pos.cols()));
    if (pos.cols() != mass.size()) throw std::invalid_argument("tree: positions and masses differ in length");
    if (pos.cols() >= std::numeric_limits<std::int32_t>::max())
        throw std::invalid_argument("tree: at most 2^31 - 1 particles are supported");

    // Storage is kept: resizing to the same length initialises nothing, so repeated builds neither
    // allocate nor run a serial fill.
    const auto n = static_cast<std::int32_t>(pos.cols());
    if (n == 0) {
        tree = Octree{};
        return;
    }

    auto start = WallClock::now();
    tree.appended_half.clear(); // a tree of these particles alone
    tree.appended_radius2.clear();
    tree.appended_types.clear();
    tree.frame = key_frame_of(pos, mass); // checks the input even where the frame is given
    if (frame_given) tree.frame = *frame_given;
    std::vector<std::uint64_t>& keys = tree.keys;
    keys.resize(static_cast<std::size_t>(n));
    static const MortonTable table;
    const KeyFrame frame = tree.frame;
#pragma omp parallel for schedule(static)
    for (std::int32_t i = 0; i < n; ++i)
        keys[i] = table.key(frame.cell(pos(0, i), 0), frame.cell(pos(1, i), 1), frame.cell(pos(2, i), 2));
    t.keys = seconds_since(start);

    start = WallClock::now();
    radix_sort_with_order(keys, tree.order);
    order_ties_by_position(keys, tree.order, pos, mass);
    tree.particles.resize(static_cast<std::size_t>(n));
    const bool full = content == BuildContent::full;
    // A gather from random places: prefetching a few particles ahead keeps more misses in flight.
    constexpr std::int32_t kAhead = 16;
    if (full) {
#pragma omp parallel for schedule(static)
        for (std::int32_t k = 0; k < n; ++k) {
            if (k + kAhead < n) {
                const auto ahead = static_cast<Eigen::Index>(tree.order[k + kAhead]);
                __builtin_prefetch(pos.data() + 3 * ahead);
                __builtin_prefetch(pos.data() + 3 * ahead + 2); // 24 bytes may straddle two lines
                __builtin_prefetch(mass.data() + ahead);
            }
            const auto i = static_cast<Eigen::Index>(tree.order[k]);
            tree.particles[k] = {pos(0, i), pos(1, i), pos(2, i), mass[i]};
        }
    }
    t.sort = seconds_since(start);

    start = WallClock::now();
    std::vector<Segment>& segments = tree.segments;
    build_nodes(tree, keys.data(), n, params, segments);
    t.build = seconds_since(start);

    start = WallClock::now();
    if (full) compute_moments(tree, segments);
    t.moments = seconds_since(start);

    start = WallClock::now();
    if (full) refit_group_boxes(tree); // the groups' ranges come with the nodes
    t.groups = seconds_since(start);
}

void build_structure_from_sorted_keys(Octree& tree, const std::uint64_t* keys, std::size_t n,
                                      const BuildParams& requested, BuildTimes* times)
{
    BuildTimes local_times;
    BuildTimes& t = times ? *times : local_times;
    t = BuildTimes{};
    const BuildParams params = checked_params(requested, n);
    if (n == 0) throw std::invalid_argument("tree: no keys");
    if (n >= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw std::invalid_argument("tree: at most 2^31 - 1 particles are supported");
    if (!(tree.frame.side > 0) || !std::isfinite(tree.frame.side))
        throw std::invalid_argument("tree: the keys' box needs a finite side > 0");
    // The keys are the caller's, the order and the particles the sort's owner's: none is kept,
    // and what an earlier build of this tree held of them is given back.
    decltype(tree.keys)().swap(tree.keys);
    decltype(tree.order)().swap(tree.order);
    decltype(tree.particles)().swap(tree.particles);
    auto start = WallClock::now();
    build_nodes(tree, keys, static_cast<std::int32_t>(n), params, tree.segments);
    t.build = seconds_since(start); // the groups' ranges come with the nodes, their boxes with the refit
}

} // namespace grove
