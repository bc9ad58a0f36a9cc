#include "tree/softening_moments.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>

namespace grove {

template <class T>
void make_softening_moments(const Octree& tree, const std::vector<double>& half_eps2, SofteningMoments<T>& out)
{
    if (half_eps2.empty()) {
        out.particle.clear();
        out.node.clear();
        return;
    }
    const auto n = static_cast<std::size_t>(tree.particles.size());
    if (half_eps2.size() != n) throw std::logic_error("softening moments: h for another number of particles");
    out.particle.resize(n);
    // Prefix sums of m h and of h (the latter for massless nodes), in double whatever T is.
    std::vector<double> mh(n + 1), h(n + 1);
    mh[0] = h[0] = 0;
    for (std::size_t k = 0; k < n; ++k) {
        const double hk = half_eps2[tree.order[k]];
        out.particle[k] = static_cast<T>(hk);
        mh[k + 1] = mh[k] + tree.particles[k].w * hk;
        h[k + 1] = h[k] + hk;
    }
    const auto m = static_cast<std::size_t>(tree.num_nodes());
    out.node.resize(m);
#pragma omp parallel for schedule(static) if (m > 16384)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(m); ++i) {
        const ParticleRange r = tree.range[static_cast<std::size_t>(i)];
        const double mass = tree.com_mass[static_cast<std::size_t>(i)].w;
        const double mean = mass > 0
                                ? (mh[static_cast<std::size_t>(r.end)] - mh[static_cast<std::size_t>(r.begin)]) / mass
                                : (h[static_cast<std::size_t>(r.end)] - h[static_cast<std::size_t>(r.begin)]) /
                                      std::max<std::int32_t>(1, r.end - r.begin);
        out.node[static_cast<std::size_t>(i)] = static_cast<T>(mean);
    }
}

template void make_softening_moments<double>(const Octree&, const std::vector<double>&, SofteningMoments<double>&);
template void make_softening_moments<float>(const Octree&, const std::vector<double>&, SofteningMoments<float>&);

} // namespace grove
