#include "tree/float_tree.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "tree/mac.hpp"

namespace grove {

namespace {

// The float tree's origin and the pad of its comparisons. The origin is the centre of mass of
// everything: where the particles are densest (a galaxy's centre), float then resolves the
// smallest offsets. The root's cell holds every particle (after a refit too), which bounds the
// largest coordinate. Float positions are off by up to half an ulp of the largest coordinate;
// every distance the walk compares carries a few such errors. The pad (4 ulps of the largest
// coordinate) goes into the opening radii and the group boxes so that a group still always opens
// its own cells.
struct FloatOrigin {
    double cx = 0, cy = 0, cz = 0;
    float pad = 0;
    Vec4<float> shifted(const Vec4<double>& v) const
    {
        return Vec4<float>{static_cast<float>(v.x - cx), static_cast<float>(v.y - cy), static_cast<float>(v.z - cz),
                           static_cast<float>(v.w)};
    }
};

FloatOrigin float_origin(const Octree& tree)
{
    FloatOrigin o;
    if (tree.next.empty()) return o;
    const Vec4<double>& com = tree.com_mass[0];
    const Vec4<double>& cell = tree.cell_centre[0];
    o.cx = com.x;
    o.cy = com.y;
    o.cz = com.z;
    const double extent =
        std::max({std::abs(cell.x - o.cx), std::abs(cell.y - o.cy), std::abs(cell.z - o.cz)}) + 0.5 * tree.size[0];
    o.pad = 4 * static_cast<float>(extent) * std::numeric_limits<float>::epsilon();
    return o;
}

} // namespace

void pack_float_particles(const Octree& tree, const TreeArrays<float, Pointer>& out)
{
    const FloatOrigin origin = float_origin(tree);
    const auto n = static_cast<std::int64_t>(tree.particles.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < n; ++i) out.particles[i] = origin.shifted(tree.particles[static_cast<std::size_t>(i)]);
}

void pack_float_tree(const Octree& tree, const TreeArrays<float, Pointer>& out, bool with_order)
{
    pack_float_particles(tree, out);
    pack_float_nodes(tree, out, with_order);
}

void pack_float_nodes(const Octree& tree, const TreeArrays<float, Pointer>& out, bool with_order)
{
    const FloatOrigin origin = float_origin(tree);
    const float pad = origin.pad;
    const auto n = static_cast<std::int64_t>(tree.particles.size());
    const auto m = static_cast<std::int64_t>(tree.next.size());
    const auto g = static_cast<std::int64_t>(tree.groups.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) {
        const auto k = static_cast<std::size_t>(i);
        out.com_mass[i] = origin.shifted(tree.com_mass[k]);
        const Quadrupole<double>& q = tree.quad[k];
        out.quad[i] =
            Quadrupole<float>{static_cast<float>(q.xx), static_cast<float>(q.xy), static_cast<float>(q.xz),
                              static_cast<float>(q.yy), static_cast<float>(q.yz), static_cast<float>(q.trace)};
        out.size[i] = static_cast<float>(tree.size[k]);
        // Rounded up and padded so that the float radius is never smaller than the double one.
        out.com_offset[i] = std::nextafter(static_cast<float>(tree.com_offset[k]), INFINITY) + pad;
    }
    std::memcpy(out.next, tree.next.data(), static_cast<std::size_t>(m) * sizeof(std::int32_t));
    std::memcpy(out.is_leaf, tree.is_leaf.data(), static_cast<std::size_t>(m));
    std::memcpy(out.range, tree.range.data(), static_cast<std::size_t>(m) * sizeof(ParticleRange));
    if (with_order) std::memcpy(out.order, tree.order.data(), static_cast<std::size_t>(n) * sizeof(std::uint32_t));
        // Group boxes from the float particles (pack_float_particles wrote them), padded by a few ulps.
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < g; ++k) {
        const ParticleRange r = tree.groups[static_cast<std::size_t>(k)].range;
        float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (std::int32_t i = r.begin; i < r.end; ++i) {
            const Vec4<float>& p = out.particles[i];
            const float c[3] = {p.x, p.y, p.z};
            for (int d = 0; d < 3; ++d) {
                lo[d] = std::min(lo[d], c[d]);
                hi[d] = std::max(hi[d], c[d]);
            }
        }
        float centre[3], half_extent[3];
        for (int d = 0; d < 3; ++d) {
            centre[d] = 0.5f * (lo[d] + hi[d]);
            const float h = std::max(hi[d] - centre[d], centre[d] - lo[d]);
            half_extent[d] = h * (1 + 4e-7f) + pad; // covers the rounding of centre and h
        }
        out.groups[k] = Group<float>{
            {centre[0], centre[1], centre[2], 0.f}, {half_extent[0], half_extent[1], half_extent[2], 0.f}, r};
    }
}

FloatTree::FloatTree(const Octree& tree)
{
    const std::size_t counts[] = {tree.particles.size(), tree.next.size(), tree.groups.size()};
    for_each_array(*this, [&](auto& array, const TreeArrayInfo& info) { array.resize(counts[int(info.extent)]); });
    pack_float_tree(tree, pointers_of(*this));
}

void FloatTree::set_opening_radii(float theta)
{
    grove::set_opening_radii(*this, theta);
}

OctreeView<float> FloatTree::view() const
{
    return make_view(*this, static_cast<std::int32_t>(particles.size()), static_cast<std::int32_t>(next.size()),
                     static_cast<std::int32_t>(groups.size()));
}

} // namespace grove
