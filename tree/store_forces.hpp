// The tree engines' last step, written once: sums without G become the caller's accelerations
// and potentials, times G, in the caller's particle order. `order` maps sum k to the caller's
// index (Morton-ordered sums); nullptr when the sums are in the caller's order already.
#pragma once

#include <cstdint>

#include <Eigen/Core>

#include "core/force_engine.hpp"
#include "tree/gravity.hpp"

namespace grove {

template <class T>
void store_forces(const std::uint32_t* order, const Accum<T>* sorted, Eigen::Index n, double G, Forces& out)
{
    out.acc.resize(3, n);
    out.pot.resize(n);
#pragma omp parallel for schedule(static) if (n > 4096)
    for (Eigen::Index k = 0; k < n; ++k) {
        const auto i = order ? static_cast<Eigen::Index>(order[k]) : k;
        const Accum<T>& a = sorted[k];
        out.acc(0, i) = G * a.ax;
        out.acc(1, i) = G * a.ay;
        out.acc(2, i) = G * a.az;
        out.pot[i] = G * a.pot;
    }
}

} // namespace grove
