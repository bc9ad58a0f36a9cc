#include "tree/hermite_cpu.hpp"

#include "tree/gravity.hpp"

namespace grove {

void HermiteCpuEngine::update(const HermiteState& s, const std::vector<std::int32_t>& changed)
{
    for (std::int32_t i : changed) {
        state_.x.col(i) = s.x.col(i);
        state_.v.col(i) = s.v.col(i);
        state_.a.col(i) = s.a.col(i);
        state_.j.col(i) = s.j.col(i);
        state_.t[i] = s.t[i];
        state_.mass[i] = s.mass[i];
    }
}

void HermiteCpuEngine::evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out)
{
    const auto n = static_cast<Eigen::Index>(state_.size());
    xp_.resize(3, n);
    vp_.resize(3, n);
#pragma omp parallel for schedule(static) if (n > 4096)
    for (Eigen::Index i = 0; i < n; ++i) hermite_predict(state_, i, t, xp_.col(i).data(), vp_.col(i).data());
    const auto m = static_cast<Eigen::Index>(active.size());
    out.acc.resize(3, m);
    out.jerk.resize(3, m);
    out.pot.resize(m);
    const double eps2 = gravity_.eps * gravity_.eps, G = gravity_.G;
#pragma omp parallel for schedule(dynamic, 4) if (m * n > 65536)
    for (Eigen::Index k = 0; k < m; ++k) {
        const Eigen::Index i = active[static_cast<std::size_t>(k)];
        AccumJerk<double> s;
        for (Eigen::Index j = 0; j < n; ++j) {
            if (j == i) continue;
            s = p2p_jerk(s, xp_(0, j) - xp_(0, i), xp_(1, j) - xp_(1, i), xp_(2, j) - xp_(2, i), vp_(0, j) - vp_(0, i),
                         vp_(1, j) - vp_(1, i), vp_(2, j) - vp_(2, i), state_.mass[j], eps2);
        }
        out.acc.col(k) << G * s.ax, G * s.ay, G * s.az;
        out.jerk.col(k) << G * s.jx, G * s.jy, G * s.jz;
        out.pot[k] = G * s.pot;
    }
}

} // namespace grove
