#include "tree/mac.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace grove {

template <class T>
void fill_opening_radii(std::size_t num_nodes, const T* size, const T* com_offset, T theta, T* r_open2)
{
    const auto n = static_cast<std::int64_t>(num_nodes);
#pragma omp parallel for schedule(static) if (n > 4096)
    for (std::int64_t i = 0; i < n; ++i) r_open2[i] = opening_radius2(size[i], com_offset[i], theta);
}

template <class T> void set_opening_radii(TreeArrays<T, HostVector>& tree, T theta)
{
    if (!(theta > 0)) throw std::invalid_argument("tree: theta must be > 0");
    tree.r_open2.resize(tree.next.size());
    fill_opening_radii(tree.next.size(), tree.size.data(), tree.com_offset.data(), theta, tree.r_open2.data());
}

template <class T>
void fill_relative_radii(std::size_t num_nodes, const T* size, const Vec4<T>* com_mass, T alpha, T* r_rel2)
{
    const auto n = static_cast<std::int64_t>(num_nodes);
#pragma omp parallel for schedule(static) if (n > 4096)
    for (std::int64_t i = 0; i < n; ++i) r_rel2[i] = relative_radius2(size[i], com_mass[i].w, alpha);
}

template <class T>
void fill_group_mac_scales(const std::vector<Group<double>>& groups, const std::uint32_t* order,
                           const std::vector<double>& abs_acc, T* mac_scale)
{
    const auto g = static_cast<std::int64_t>(groups.size());
#pragma omp parallel for schedule(static) if (g > 256)
    for (std::int64_t k = 0; k < g; ++k) {
        const ParticleRange r = groups[static_cast<std::size_t>(k)].range;
        double smallest = INFINITY;
        for (std::int32_t i = r.begin; i < r.end && smallest > kSmallestAcceleration; ++i)
            smallest = smaller_acceleration(smallest, abs_acc[order[i]]);
        mac_scale[k] = static_cast<T>(group_mac_scale(smallest));
    }
}

template <class T>
OctreeView<T> set_opening_criterion(TreeArrays<T, HostVector>& tree, const OctreeView<T>& plain_view,
                                    const OpeningCriterion& criterion, const std::vector<Group<double>>& groups,
                                    const std::vector<double>& abs_acc)
{
    OctreeView<T> view = plain_view;
    if (criterion.kind == MacKind::geometric) {
        set_opening_radii(tree, static_cast<T>(criterion.theta));
        view.r_open2 = tree.r_open2.data();
        return view;
    }
    if (!(criterion.alpha > 0)) throw std::invalid_argument("tree: alpha must be > 0");
    if (abs_acc.size() != tree.particles.size())
        throw std::logic_error("tree: the relative criterion needs one |a| per particle");
    set_opening_radii(tree, static_cast<T>(criterion.geometric_theta()));
    tree.r_rel2.resize(tree.next.size());
    fill_relative_radii(tree.next.size(), tree.size.data(), tree.com_mass.data(), static_cast<T>(criterion.alpha),
                        tree.r_rel2.data());
    tree.mac_scale.resize(groups.size());
    fill_group_mac_scales(groups, tree.order.data(), abs_acc, tree.mac_scale.data());
    view.r_open2 = tree.r_open2.data();
    view.r_rel2 = tree.r_rel2.data();
    view.mac_scale = tree.mac_scale.data();
    return view;
}

#define GROVE_MAC_INSTANTIATE(T)                                                                                       \
    template void fill_relative_radii<T>(std::size_t, const T*, const Vec4<T>*, T, T*);                                \
    template void fill_group_mac_scales<T>(const std::vector<Group<double>>&, const std::uint32_t*,                    \
                                           const std::vector<double>&, T*);                                            \
    template OctreeView<T> set_opening_criterion<T>(TreeArrays<T, HostVector>&, const OctreeView<T>&,                  \
                                                    const OpeningCriterion&, const std::vector<Group<double>>&,        \
                                                    const std::vector<double>&);
GROVE_MAC_INSTANTIATE(float)
GROVE_MAC_INSTANTIATE(double)
#undef GROVE_MAC_INSTANTIATE

template void fill_opening_radii<float>(std::size_t, const float*, const float*, float, float*);
template void fill_opening_radii<double>(std::size_t, const double*, const double*, double, double*);
template void set_opening_radii<float>(TreeArrays<float, HostVector>&, float);
template void set_opening_radii<double>(TreeArrays<double, HostVector>&, double);

} // namespace grove
