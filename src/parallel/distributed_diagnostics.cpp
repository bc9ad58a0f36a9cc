#include "parallel/distributed_diagnostics.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace grove {

namespace {

// The radius about `centre` that encloses `fraction` of the mass of every rank's particles (radii
// r, masses m here), as lagrangian_radii finds it over the whole sorted set.
double distributed_radius(const std::vector<double>& r, const Eigen::VectorXd& m, double total, double fraction,
                          const Communicator& comm)
{
    constexpr int kBins = 1024;
    constexpr double kFew = 4096; // particles left in the bracket when it is gathered
    const double target = fraction * total;
    const std::size_t n = r.size();
    std::vector<char> inside(n, 1);
    double lo = 0, hi = 0, below = 0, below_r = 0; // below: the mass, and the largest radius, under the bracket
    for (const double ri : r) hi = std::max(hi, ri);
    comm.max(&hi, 1);
    double count = static_cast<double>(n);
    comm.sum(&count, 1);
    for (int round = 0; round < 8 && count > kFew && hi > lo; ++round) {
        const double width = (hi - lo) / kBins;
        auto bin_of = [&](double ri) { return std::clamp(static_cast<int>((ri - lo) / width), 0, kBins - 1); };
        // Mass, then counts, per bin: each thread its part of the particles (a static split), the
        // parts added in thread order, so that the same run writes the same line.
        const int threads = omp_get_max_threads();
        std::vector<std::vector<double>> part(static_cast<std::size_t>(threads));
#pragma omp parallel num_threads(threads)
        {
            std::vector<double>& mine = part[static_cast<std::size_t>(omp_get_thread_num())];
            mine.assign(2 * kBins, 0.0);
#pragma omp for schedule(static)
            for (std::int64_t s = 0; s < static_cast<std::int64_t>(n); ++s) {
                const auto i = static_cast<std::size_t>(s);
                if (!inside[i]) continue;
                const int b = bin_of(r[i]);
                mine[static_cast<std::size_t>(b)] += m[static_cast<Eigen::Index>(i)];
                mine[static_cast<std::size_t>(kBins + b)] += 1;
            }
        }
        std::vector<double> mass(2 * kBins, 0.0);
        for (const auto& p : part)
            for (std::size_t k = 0; k < p.size(); ++k) mass[k] += p[k];
        comm.sum(mass.data(), mass.size());
        int chosen = 0;
        while (chosen + 1 < kBins && below + mass[static_cast<std::size_t>(chosen)] < target)
            below += mass[static_cast<std::size_t>(chosen++)];
        for (std::size_t i = 0; i < n; ++i)
            if (inside[i]) {
                const int b = bin_of(r[i]);
                if (b < chosen) below_r = std::max(below_r, r[i]);
                inside[i] = b == chosen;
            }
        count = mass[static_cast<std::size_t>(kBins + chosen)];
        const double new_lo = lo + chosen * width;
        hi = chosen + 1 < kBins ? lo + (chosen + 1) * width : hi;
        lo = new_lo;
    }
    comm.max(&below_r, 1);
    // The bracket's particles, gathered everywhere, sorted as one process sorts them.
    std::vector<double> mine;
    for (std::size_t i = 0; i < n; ++i)
        if (inside[i]) mine.insert(mine.end(), {r[i], m[static_cast<Eigen::Index>(i)]});
    std::vector<std::size_t> counts;
    const std::vector<double> flat = comm.all_gather(mine, counts);
    std::vector<std::pair<double, double>> bracket(flat.size() / 2);
    for (std::size_t k = 0; k < bracket.size(); ++k) bracket[k] = {flat[2 * k], flat[2 * k + 1]};
    std::sort(bracket.begin(), bracket.end());
    return radius_enclosing(bracket, target, below, below_r);
}

} // namespace

Diagnostics compute_diagnostics(const ParticleSet& p, const Eigen::VectorXd& potential, const Communicator& comm,
                                const std::vector<double>& fractions)
{
    if (potential.size() != p.mass.size())
        throw std::invalid_argument("compute_diagnostics: potential has " + std::to_string(potential.size()) +
                                    " entries for " + std::to_string(p.size()) + " particles");
    Diagnostics d;
    const Eigen::Vector3d weighted = p.pos * p.mass;
    double sums[12] = {p.mass.sum(), 0.5 * (p.vel.colwise().squaredNorm().transpose().array() * p.mass.array()).sum(),
                       0.5 * p.mass.dot(potential)};
    const Eigen::Vector3d momentum = p.vel * p.mass;
    Eigen::Vector3d angular = Eigen::Vector3d::Zero();
    for (Eigen::Index i = 0; i < p.pos.cols(); ++i) angular += p.mass[i] * p.pos.col(i).cross(p.vel.col(i));
    for (int a = 0; a < 3; ++a) {
        sums[3 + a] = momentum[a];
        sums[6 + a] = angular[a];
        sums[9 + a] = weighted[a];
    }
    comm.sum(sums, 12);
    d.mass = sums[0];
    d.kinetic = sums[1];
    d.potential = sums[2];
    d.total = d.kinetic + d.potential;
    d.virial_ratio = d.potential != 0 ? 2 * d.kinetic / std::abs(d.potential) : 0;
    d.momentum = {sums[3], sums[4], sums[5]};
    d.angular_momentum = {sums[6], sums[7], sums[8]};
    if (d.mass > 0) d.centre_of_mass = Eigen::Vector3d(sums[9], sums[10], sums[11]) / d.mass;
    std::vector<double> r(p.size());
#pragma omp parallel for schedule(static)
    for (Eigen::Index i = 0; i < p.pos.cols(); ++i)
        r[static_cast<std::size_t>(i)] = (p.pos.col(i) - d.centre_of_mass).norm();
    for (const double f : fractions) {
        if (!(f > 0 && f <= 1)) throw std::invalid_argument("Lagrangian fraction must lie in (0, 1]");
        d.lagrangian_radii.push_back(distributed_radius(r, p.mass, d.mass, f, comm));
    }
    return d;
}

} // namespace grove
