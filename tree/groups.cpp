#include "tree/groups.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace grove {

namespace {

// Calls f(range) for the groups of one subtree segment: its maximal cells of at most ncrit
// particles, in pre-order (hence Morton order); a leaf holding more (coincident particles, or
// nleaf > ncrit) is cut into consecutive chunks of ncrit.
template <class F> void for_each_group(const Octree& tree, const Segment& seg, int ncrit, F&& f)
{
    const std::int32_t last = seg.first_node + seg.num_nodes;
    for (std::int32_t i = seg.first_node; i < last;) {
        const auto r = tree.range[i];
        if (r.end - r.begin <= ncrit || tree.is_leaf[i]) {
            for (std::int32_t b = r.begin; b < r.end; b += ncrit) f(ParticleRange{b, std::min(b + ncrit, r.end)});
            i = tree.next[i];
        } else {
            ++i;
        }
    }
}

Group<double> make_group(const Octree& tree, ParticleRange range)
{
    double mn[3] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                    std::numeric_limits<double>::max()};
    double mx[3] = {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::lowest(),
                    std::numeric_limits<double>::lowest()};
    for (std::int32_t p = range.begin; p < range.end; ++p) {
        const double x[3] = {tree.particles[p].x, tree.particles[p].y, tree.particles[p].z};
        for (int d = 0; d < 3; ++d) {
            mn[d] = std::min(mn[d], x[d]);
            mx[d] = std::max(mx[d], x[d]);
        }
    }
    Group<double> group;
    group.range = range;
    // Half widths padded by a few ulps of the coordinates, so that rounding never puts a
    // particle outside its own box (the walk relies on it to open the group's own cells).
    double c[3], h[3];
    for (int d = 0; d < 3; ++d) {
        c[d] = (mn[d] + mx[d]) / 2;
        h[d] = (mx[d] - mn[d]) / 2 + 4 * std::numeric_limits<double>::epsilon() * (std::abs(mn[d]) + std::abs(mx[d]));
    }
    group.centre = {c[0], c[1], c[2], 0};
    group.half_extent = {h[0], h[1], h[2], 0};
    return group;
}

} // namespace

// Groups segment by segment: counted, scanned, then written (with their bounding boxes).
void make_groups(Octree& tree, int ncrit, std::vector<Segment>& segments, bool with_boxes)
{
    const auto num_segments = static_cast<std::int64_t>(segments.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < num_segments; ++s) {
        Segment& seg = segments[static_cast<std::size_t>(s)];
        std::int32_t count = 0; // counted locally: neighbouring segments share cache lines
        if (!seg.top) for_each_group(tree, seg, ncrit, [&](ParticleRange) { ++count; });
        seg.num_groups = count;
    }
    std::int32_t num_groups = 0;
    for (Segment& seg : segments) {
        seg.first_group = num_groups;
        num_groups += seg.num_groups;
    }
    tree.groups.resize(static_cast<std::size_t>(num_groups));
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < num_segments; ++s) {
        const Segment& seg = segments[static_cast<std::size_t>(s)];
        if (seg.top) continue;
        std::int32_t g = seg.first_group;
        for_each_group(tree, seg, ncrit, [&](ParticleRange r) {
            if (with_boxes) {
                tree.groups[g++] = make_group(tree, r);
            } else {
                tree.groups[g] = Group<double>{};
                tree.groups[g++].range = r;
            }
        });
    }
}

void refit_group_boxes(Octree& tree)
{
    const auto num_groups = static_cast<std::int64_t>(tree.groups.size());
#pragma omp parallel for schedule(static) if (num_groups > 256)
    for (std::int64_t g = 0; g < num_groups; ++g) {
        Group<double>& group = tree.groups[static_cast<std::size_t>(g)];
        group = make_group(tree, group.range);
    }
}

} // namespace grove
