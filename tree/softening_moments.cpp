#include "tree/softening_moments.hpp"

#include <cmath>
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
        out.radius2.clear();
        return;
    }
    const auto n = static_cast<std::size_t>(tree.particles.size());
    if (half_eps2.size() != n) throw std::logic_error("softening moments: h for another number of particles");
    out.particle.resize(n);
    // Prefix sums of m h and m h^2 in double whatever T is: the gather in parallel, the sums in
    // one pass; a node's particles are one range of them.
    std::vector<double> mh(n + 1), mhh(n + 1);
    mh[0] = mhh[0] = 0;
#pragma omp parallel for schedule(static) if (n > 16384)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(n); ++k) {
        const auto u = static_cast<std::size_t>(k);
        const double hk = half_eps2[tree.order[u]];
        out.particle[u] = static_cast<T>(hk);
        mh[u + 1] = tree.particles[u].w * hk;
        mhh[u + 1] = tree.particles[u].w * hk * hk;
    }
    for (std::size_t k = 1; k <= n; ++k) {
        mh[k] += mh[k - 1];
        mhh[k] += mhh[k - 1];
    }
    const auto m = static_cast<std::size_t>(tree.num_nodes());
    out.node.resize(m);
    out.radius2.resize(m);
    // The nodes appended from other domains' LETs come with their moments (their cells' particles
    // stayed with their senders).
    const std::size_t given = tree.appended_half.size(), own = m - given;
    if (given > m || tree.appended_radius2.size() != given)
        throw std::logic_error("softening moments: appended nodes out of step with the tree");
    for (std::size_t k = 0; k < given; ++k) {
        if (std::isnan(tree.appended_half[k]) || std::isnan(tree.appended_radius2[k]))
            throw std::runtime_error("softening by type: a LET came without its cells' softening (every rank must "
                                     "soften by type, with the same lengths)");
        out.node[own + k] = static_cast<T>(tree.appended_half[k]);
        out.radius2[own + k] = static_cast<T>(tree.appended_radius2[k]);
    }
#pragma omp parallel for schedule(static) if (own > 16384)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(own); ++i) {
        const auto u = static_cast<std::size_t>(i);
        const auto b = static_cast<std::size_t>(tree.range[u].begin), e = static_cast<std::size_t>(tree.range[u].end);
        const NodeSoftening s = node_softening(tree.com_mass[u].w, mh[e] - mh[b], mhh[e] - mhh[b]);
        out.node[u] = static_cast<T>(s.half);
        out.radius2[u] = static_cast<T>(s.radius2);
    }
}

template void make_softening_moments<double>(const Octree&, const std::vector<double>&, SofteningMoments<double>&);
template void make_softening_moments<float>(const Octree&, const std::vector<double>&, SofteningMoments<float>&);

} // namespace grove
