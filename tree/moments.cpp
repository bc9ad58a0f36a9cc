#include "tree/moments.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

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
    q.trace += m * d2;
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

// An axis-aligned box, for a refit.
struct Box {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
};

// A refit's cell: the bounding box of the node's particles (a leaf's own, an internal node's the
// union of its children's boxes) becomes the cell's centre, and its longest side the node's size
// unless the cell's own side (kept in cell_centre.w) is longer. Every particle then lies in the
// cube of that size about that centre, which the opening criterion needs; at unchanged positions
// the box lies inside the cell and the size is the cell's, and a cell grows only as far as its
// particles moved beyond it.
void cover(Box& b, const double lo[3], const double hi[3])
{
    for (int d = 0; d < 3; ++d) {
        b.lo[d] = std::min(b.lo[d], lo[d]);
        b.hi[d] = std::max(b.hi[d], hi[d]);
    }
}

// The cell of node i from its box b (for a leaf, b covers its particles; for an internal node
// the caller passes nothing and the children's boxes are joined here).
void refit_cell(Octree& tree, std::int32_t i, std::vector<Box>& boxes, const Box* leaf_box)
{
    Box& b = boxes[static_cast<std::size_t>(i)];
    if (leaf_box) {
        b = *leaf_box;
    } else {
        b = Box{};
        for (std::int32_t c = i + 1; c < tree.next[i]; c = tree.next[c])
            cover(b, boxes[static_cast<std::size_t>(c)].lo, boxes[static_cast<std::size_t>(c)].hi);
    }
    Vec4<double>& centre = tree.cell_centre[i];
    centre.x = (b.lo[0] + b.hi[0]) / 2;
    centre.y = (b.lo[1] + b.hi[1]) / 2;
    centre.z = (b.lo[2] + b.hi[2]) / 2;
    tree.size[i] = std::max({centre.w, b.hi[0] - b.lo[0], b.hi[1] - b.lo[1], b.hi[2] - b.lo[2]});
}

// Mass, centre of mass, quadrupole and com offset of node i: a leaf sums its particles, an
// internal node its children as point masses plus their own quadrupoles (parallel-axis theorem),
// which must be done already.
void finish_node(Octree& tree, std::int32_t i, std::vector<Box>* boxes)
{
    const bool leaf = tree.is_leaf[i];
    // A leaf's particles: their box (a refit) and mass sums in one pass.
    Box leaf_box;
    double m = 0, mx = 0, my = 0, mz = 0;
    if (leaf)
        for (std::int32_t p = tree.range[i].begin; p < tree.range[i].end; ++p) {
            const auto& s = tree.particles[p];
            if (boxes) {
                const double x[3] = {s.x, s.y, s.z};
                cover(leaf_box, x, x);
            }
            m += s.w;
            mx += s.w * s.x;
            my += s.w * s.y;
            mz += s.w * s.z;
        }
    if (boxes) refit_cell(tree, i, *boxes, leaf ? &leaf_box : nullptr);
    const auto& centre = tree.cell_centre[i];
    Quadrupole<double> q{};
    auto add_about = [&q](const Vec4<double>& cm) {
        return [&q, cm](double x, double y, double z, double w) {
            accumulate_quadrupole(q, w, x - cm.x, y - cm.y, z - cm.z);
        };
    };
    Vec4<double> cm;
    if (leaf) {
        cm = m > 0 ? Vec4<double>{mx / m, my / m, mz / m, m} : Vec4<double>{centre.x, centre.y, centre.z, 0};
        const auto add = add_about(cm);
        for (std::int32_t p = tree.range[i].begin; p < tree.range[i].end; ++p) {
            const auto& s = tree.particles[p];
            add(s.x, s.y, s.z, s.w);
        }
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
            q.trace += qc.trace; // plus the point-mass part m_c |com_c - com|^2 added above
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
    // Scratch kept between calls: every entry is written before it is read, and filling a new
    // vector took a serial pass over nodes x 48 bytes.
    static thread_local std::vector<Box> refit_boxes;
    if (grow_cells) refit_boxes.resize(tree.next.size());
    std::vector<Box>* boxes = grow_cells ? &refit_boxes : nullptr;
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
            if (tree.is_leaf[i]) finish_node(tree, i, boxes);
        for (std::int32_t i = last; i >= seg.first_node; --i)
            if (!tree.is_leaf[i]) finish_node(tree, i, boxes);
    }
    for (auto s = segments.rbegin(); s != segments.rend(); ++s)
        if (s->top) finish_node(tree, s->first_node, boxes);
}

} // namespace grove
