#include "tree/mac.hpp"

#include <stdexcept>
#include <string>

namespace grove {

void check_theta(double theta)
{
    if (!(theta > 0) || !(theta <= kMaxTheta))
        throw std::invalid_argument("theta must lie in (0, 1.1547]: above 2/sqrt(3) every cell's opening radius is "
                                    "its sqrt(3)/2 l floor, which keeps a group from accepting its own cell, so larger "
                                    "theta change nothing (got " +
                                    std::to_string(theta) + ")");
}

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

template void fill_opening_radii<float>(std::size_t, const float*, const float*, float, float*);
template void fill_opening_radii<double>(std::size_t, const double*, const double*, double, double*);
template void set_opening_radii<float>(TreeArrays<float, HostVector>&, float);
template void set_opening_radii<double>(TreeArrays<double, HostVector>&, double);

} // namespace grove
