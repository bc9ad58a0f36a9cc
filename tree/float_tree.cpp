#include "tree/float_tree.hpp"

#include <cstring>

#include "tree/mac.hpp"

namespace grove {

FloatOrigin float_origin(const Octree& tree)
{
    if (tree.next.empty()) return FloatOrigin{};
    return float_origin(tree.com_mass[0]);
}

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
    const auto n = static_cast<std::int64_t>(tree.particles.size());
    const auto m = static_cast<std::int64_t>(tree.next.size());
    const auto g = static_cast<std::int64_t>(tree.groups.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) {
        const auto k = static_cast<std::size_t>(i);
        pack_float_node(origin, tree.com_mass[k], tree.quad[k], tree.size[k], tree.com_offset[k], out.com_mass[i],
                        out.quad[i], out.size[i], out.com_offset[i]);
    }
    std::memcpy(out.next, tree.next.data(), static_cast<std::size_t>(m) * sizeof(std::int32_t));
    std::memcpy(out.is_leaf, tree.is_leaf.data(), static_cast<std::size_t>(m));
    std::memcpy(out.range, tree.range.data(), static_cast<std::size_t>(m) * sizeof(ParticleRange));
    if (with_order) std::memcpy(out.order, tree.order.data(), static_cast<std::size_t>(n) * sizeof(std::uint32_t));
        // Group boxes from the float particles (pack_float_particles wrote them), padded by a few ulps.
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < g; ++k)
        out.groups[k] = float_group(tree.groups[static_cast<std::size_t>(k)].range, out.particles);
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
