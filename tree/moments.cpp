#include "tree/moments.hpp"

#include <algorithm>
#include <cmath>

namespace grove {

namespace {

void accumulate_quadrupole(Quadrupole<double>& q, double m, double dx, double dy, double dz)
{
    const double d2 = dx * dx + dy * dy + dz * dz;
    q.xx += m * (3 * dx * dx - d2);
    q.xy += m * 3 * dx * dy;
    q.xz += m * 3 * dx * dz;
    q.yy += m * (3 * dy * dy - d2);
    q.yz += m * 3 * dy * dz;
    q.zz += m * (3 * dz * dz - d2);
}

// Centre of mass (x, y, z) and mass (w) of the point masses that for_each(f) visits as
// f(x, y, z, m); the cell centre when they have no mass.
template <class ForEach> Vec4<double> centre_of_mass(ForEach&& for_each, const Vec4<double>& centre)
{
    double m = 0, mx = 0, my = 0, mz = 0;
    for_each([&](double x, double y, double z, double w) {
        m += w;
        mx += w * x;
        my += w * y;
        mz += w * z;
    });
    return m > 0 ? Vec4<double>{mx / m, my / m, mz / m, m} : Vec4<double>{centre.x, centre.y, centre.z, 0};
}

// A refit's cell: the bounding box of the node's particles (a leaf) or of its children's cubes,
// whose centre becomes the cell centre and whose longest side the node's size, unless the cell's
// own side (kept in cell_centre.w) is longer. Every particle then lies in the cube of that size
// about that centre, which the opening criterion needs; a cell grows only as far as its particles
// moved beyond it.
void refit_cell(Octree& tree, std::int32_t i)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    auto cover = [&](double x, double y, double z, double half) {
        const double c[3] = {x, y, z};
        for (int d = 0; d < 3; ++d) {
            lo[d] = std::min(lo[d], c[d] - half);
            hi[d] = std::max(hi[d], c[d] + half);
        }
    };
    if (tree.is_leaf[i]) {
        for (std::int32_t p = tree.range[i].begin; p < tree.range[i].end; ++p)
            cover(tree.particles[p].x, tree.particles[p].y, tree.particles[p].z, 0);
    } else {
        for (std::int32_t c = i + 1; c < tree.next[i]; c = tree.next[c])
            cover(tree.cell_centre[c].x, tree.cell_centre[c].y, tree.cell_centre[c].z, tree.size[c] / 2);
    }
    Vec4<double>& centre = tree.cell_centre[i];
    centre.x = (lo[0] + hi[0]) / 2;
    centre.y = (lo[1] + hi[1]) / 2;
    centre.z = (lo[2] + hi[2]) / 2;
    tree.size[i] = std::max({centre.w, hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
}

// Mass, centre of mass, quadrupole and com offset of node i: a leaf sums its particles, an
// internal node its children as point masses plus their own quadrupoles (parallel-axis theorem),
// which must be done already.
void finish_node(Octree& tree, std::int32_t i, bool grow_cells)
{
    if (grow_cells) refit_cell(tree, i);
    const auto& centre = tree.cell_centre[i];
    Quadrupole<double> q{};
    auto add_about = [&q](const Vec4<double>& cm) {
        return [&q, cm](double x, double y, double z, double w) {
            accumulate_quadrupole(q, w, x - cm.x, y - cm.y, z - cm.z);
        };
    };
    Vec4<double> cm;
    if (tree.is_leaf[i]) {
        const auto r = tree.range[i];
        auto particles = [&](auto&& f) {
            for (std::int32_t p = r.begin; p < r.end; ++p) {
                const auto& s = tree.particles[p];
                f(s.x, s.y, s.z, s.w);
            }
        };
        cm = centre_of_mass(particles, centre);
        particles(add_about(cm));
    } else {
        auto children = [&](auto&& f) {
            for (std::int32_t c = i + 1; c < tree.next[i]; c = tree.next[c]) {
                const auto& cc = tree.com_mass[c];
                f(cc.x, cc.y, cc.z, cc.w);
            }
        };
        cm = centre_of_mass(children, centre);
        children(add_about(cm));
        for (std::int32_t c = i + 1; c < tree.next[i]; c = tree.next[c]) {
            const auto& qc = tree.quad[c];
            q.xx += qc.xx;
            q.xy += qc.xy;
            q.xz += qc.xz;
            q.yy += qc.yy;
            q.yz += qc.yz;
            q.zz += qc.zz;
        }
    }
    tree.com_mass[i] = cm;
    tree.quad[i] = q;

    tree.com_offset[i] = std::sqrt((cm.x - centre.x) * (cm.x - centre.x) + (cm.y - centre.y) * (cm.y - centre.y) +
                                   (cm.z - centre.z) * (cm.z - centre.z));
}

} // namespace

// Moments bottom-up: in pre-order every child follows its parent, so each subtree's internal nodes
// are finished in reverse index order by one thread, after its leaves; then the top nodes in
// reverse segment order.
void compute_moments(Octree& tree, const std::vector<Segment>& segments, bool grow_cells)
{
    const auto nodes = static_cast<std::size_t>(tree.num_nodes());
    tree.com_mass.resize(nodes);
    tree.quad.resize(nodes);
    tree.com_offset.resize(nodes);
    const auto num_segments = static_cast<std::int64_t>(segments.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < num_segments; ++s) {
        const Segment& seg = segments[static_cast<std::size_t>(s)];
        if (seg.top) continue;
        // Leaves first, in particle order (the prefetcher follows it), then internal nodes.
        const std::int32_t last = seg.first_node + seg.num_nodes - 1;
        for (std::int32_t i = seg.first_node; i <= last; ++i)
            if (tree.is_leaf[i]) finish_node(tree, i, grow_cells);
        for (std::int32_t i = last; i >= seg.first_node; --i)
            if (!tree.is_leaf[i]) finish_node(tree, i, grow_cells);
    }
    for (auto s = segments.rbegin(); s != segments.rend(); ++s)
        if (s->top) finish_node(tree, s->first_node, grow_cells);
}

} // namespace grove
