#include "tree/groups.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace grove {

Group<double> particles_box(const Octree& tree, ParticleRange range)
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
    return box_of_bounds(mn, mx, range);
}

Group<double> box_of_bounds(const double lo[3], const double hi[3], ParticleRange range)
{
    Group<double> group;
    group.range = range;
    // Half widths padded by a few ulps of the coordinates, so that rounding never puts a
    // particle outside its own box (the walk relies on it to open the group's own cells).
    double c[3], h[3];
    for (int d = 0; d < 3; ++d) {
        c[d] = (lo[d] + hi[d]) / 2;
        h[d] = (hi[d] - lo[d]) / 2 + 4 * std::numeric_limits<double>::epsilon() * (std::abs(lo[d]) + std::abs(hi[d]));
    }
    group.centre = {c[0], c[1], c[2], 0};
    group.half_extent = {h[0], h[1], h[2], 0};
    return group;
}

void refit_group_boxes(Octree& tree)
{
    const auto num_groups = static_cast<std::int64_t>(tree.groups.size());
#pragma omp parallel for schedule(static) if (num_groups > 256)
    for (std::int64_t g = 0; g < num_groups; ++g) {
        Group<double>& group = tree.groups[static_cast<std::size_t>(g)];
        group = particles_box(tree, group.range);
    }
}

} // namespace grove
