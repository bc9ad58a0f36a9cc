#include "tree/hermite_cpu.hpp"

#include <stdexcept>

#include "core/softening.hpp"
#include "tree/gravity.hpp"

namespace grove {

namespace {

[[noreturn]] void throw_coincident()
{
    throw std::runtime_error("direct-cpu: two particles at the same position with zero softening: their force is "
                             "infinite (give --eps > 0 or separate them)");
}

} // namespace

void HermiteCpuEngine::set_state(const HermiteState& state)
{
    half_eps2_ = half_squared_softening(gravity_, state.type, state.size(), name());
    state_ = state;
}

void HermiteCpuEngine::update(const HermiteState& s, const std::vector<std::int32_t>& changed)
{
    for (std::int32_t i : changed) {
        state_.x.col(i) = s.x.col(i);
        state_.v.col(i) = s.v.col(i);
        state_.a.col(i) = s.a.col(i);
        state_.j.col(i) = s.j.col(i);
        if (state_.sixth_order()) {
            state_.s.col(i) = s.s.col(i);
            state_.c.col(i) = s.c.col(i);
        }
        state_.t[i] = s.t[i];
        state_.mass[i] = s.mass[i];
    }
}

void HermiteCpuEngine::evaluate(double t, const std::vector<std::int32_t>& active, HermiteForces& out)
{
    const auto n = static_cast<Eigen::Index>(state_.size());
    xp_.resize(3, n);
    vp_.resize(3, n);
    const bool sixth = state_.sixth_order();
    ap_.resize(3, sixth ? n : 0);
#pragma omp parallel for schedule(static) if (n > 4096)
    for (Eigen::Index i = 0; i < n; ++i)
        hermite_predict(state_, i, t, xp_.col(i).data(), vp_.col(i).data(), sixth ? ap_.col(i).data() : nullptr);
    const auto m = static_cast<Eigen::Index>(active.size());
    if (sixth) {
        evaluate_snap(active, out);
        return;
    }
    out.acc.resize(3, m);
    out.jerk.resize(3, m);
    out.pot.resize(m);
    const double eps2 = gravity_.eps * gravity_.eps, G = gravity_.G;
    const bool by_type = !half_eps2_.empty();
    bool coincident = false;
#pragma omp parallel for schedule(dynamic, 4) reduction(|| : coincident) if (m * n > 65536)
    for (Eigen::Index k = 0; k < m; ++k) {
        const Eigen::Index i = active[static_cast<std::size_t>(k)];
        AccumJerk<double> s;
        for (Eigen::Index j = 0; j < n; ++j) {
            if (j == i) continue;
            const double pair =
                by_type ? half_eps2_[static_cast<std::size_t>(i)] + half_eps2_[static_cast<std::size_t>(j)] : eps2;
            coincident = coincident || (pair == 0 && xp_.col(j) == xp_.col(i));
            s = p2p_jerk(s, xp_(0, j) - xp_(0, i), xp_(1, j) - xp_(1, i), xp_(2, j) - xp_(2, i), vp_(0, j) - vp_(0, i),
                         vp_(1, j) - vp_(1, i), vp_(2, j) - vp_(2, i), state_.mass[j], pair);
        }
        out.acc.col(k) << G * s.ax, G * s.ay, G * s.az;
        out.jerk.col(k) << G * s.jx, G * s.jy, G * s.jz;
        out.pot[k] = G * s.pot;
    }
    if (coincident) throw_coincident();
}

void HermiteCpuEngine::evaluate_snap(const std::vector<std::int32_t>& active, HermiteForces& out)
{
    const auto n = static_cast<Eigen::Index>(state_.size());
    const auto m = static_cast<Eigen::Index>(active.size());
    out.acc.resize(3, m);
    out.jerk.resize(3, m);
    out.snap.resize(3, m);
    out.pot.resize(m);
    const double eps2 = gravity_.eps * gravity_.eps, G = gravity_.G;
    const bool by_type = !half_eps2_.empty();
    bool coincident = false;
#pragma omp parallel for schedule(dynamic, 4) reduction(|| : coincident) if (m * n > 65536)
    for (Eigen::Index k = 0; k < m; ++k) {
        const Eigen::Index i = active[static_cast<std::size_t>(k)];
        AccumSnap<double> s;
        for (Eigen::Index j = 0; j < n; ++j) {
            if (j == i) continue;
            double d[3], dv[3], da[3];
            for (int c = 0; c < 3; ++c) {
                d[c] = xp_(c, j) - xp_(c, i);
                dv[c] = vp_(c, j) - vp_(c, i);
                da[c] = ap_(c, j) - ap_(c, i);
            }
            const double pair =
                by_type ? half_eps2_[static_cast<std::size_t>(i)] + half_eps2_[static_cast<std::size_t>(j)] : eps2;
            coincident = coincident || (pair == 0 && d[0] == 0 && d[1] == 0 && d[2] == 0);
            s = p2p_snap(s, d, dv, da, state_.mass[j], pair);
        }
        out.acc.col(k) << G * s.ax, G * s.ay, G * s.az;
        out.jerk.col(k) << G * s.jx, G * s.jy, G * s.jz;
        out.snap.col(k) << G * s.sx, G * s.sy, G * s.sz;
        out.pot[k] = G * s.pot;
    }
    if (coincident) throw_coincident();
}

} // namespace grove
