#include "tree/direct_cpu.hpp"

#include <chrono>
#include <stdexcept>
#include <string>

#include "core/softening.hpp"
#include "tree/gravity.hpp"

namespace grove {

namespace {

// Sets `coincident` to another particle's index when one sits exactly on particle i and the pair's
// softening is 0. half_eps2: each particle's eps^2 / 2 where the softening is per type
// (core/softening.hpp), the pair's eps^2 then their sum; null for one softening eps2.
Accum<double> sum_over_sources(PositionsRef pos, MassesRef mass, const double* half_eps2, Eigen::Index i, double eps2,
                               Eigen::Index& coincident)
{
    Accum<double> acc;
    const double xi = pos(0, i), yi = pos(1, i), zi = pos(2, i), hi = half_eps2 ? half_eps2[i] : 0.0;
    const Eigen::Index n = pos.cols();
    for (Eigen::Index j = 0; j < n; ++j) {
        if (j == i) continue; // a particle never acts on itself, whatever eps
        const double dx = pos(0, j) - xi, dy = pos(1, j) - yi, dz = pos(2, j) - zi;
        const double pair = half_eps2 ? hi + half_eps2[j] : eps2;
        if (pair == 0 && dx == 0 && dy == 0 && dz == 0) {
            coincident = j;
            continue;
        }
        acc = p2p(acc, dx, dy, dz, mass[j], pair);
    }
    return acc;
}

} // namespace

DirectCpuEngine::DirectCpuEngine(GravityParams params) : ForceEngine("direct-cpu"), params_(params) {}

void DirectCpuEngine::compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out)
{
    std::vector<std::int32_t> all(static_cast<std::size_t>(pos.cols()));
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int32_t>(i);
    const auto start = std::chrono::steady_clock::now();
    compute_subset(pos, mass, type, all, out);
    times_ = {{"direct", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()}};
}

void DirectCpuEngine::compute_subset(PositionsRef pos, MassesRef mass, TypesRef type,
                                     const std::vector<std::int32_t>& targets, Forces& out)
{
    const std::vector<double> half_eps2 =
        half_squared_softening(params_, type, static_cast<std::size_t>(pos.cols()), name());
    const auto m = static_cast<Eigen::Index>(targets.size());
    out.acc.resize(3, m);
    out.pot.resize(m);
    const double eps2 = params_.eps * params_.eps;
    const double G = params_.G;
    Eigen::Index first_i = -1, first_j = -1;
#pragma omp parallel for schedule(dynamic, 16) if (m * pos.cols() > 65536)
    for (Eigen::Index k = 0; k < m; ++k) {
        const auto i = static_cast<Eigen::Index>(targets[static_cast<std::size_t>(k)]);
        Eigen::Index coincident = -1;
        const auto acc =
            sum_over_sources(pos, mass, half_eps2.empty() ? nullptr : half_eps2.data(), i, eps2, coincident);
        if (coincident >= 0) {
#pragma omp critical(direct_cpu_coincident)
            if (first_i < 0 || i < first_i) {
                first_i = i;
                first_j = coincident;
            }
        }
        out.acc(0, k) = G * acc.ax;
        out.acc(1, k) = G * acc.ay;
        out.acc(2, k) = G * acc.az;
        out.pot[k] = G * acc.pot;
    }
    if (first_i >= 0)
        throw std::runtime_error("direct-cpu: particles " + std::to_string(first_i) + " and " +
                                 std::to_string(first_j) +
                                 " are at the same position and the softening is 0: their force is infinite "
                                 "(give --eps > 0 or separate them)");
}

} // namespace grove
