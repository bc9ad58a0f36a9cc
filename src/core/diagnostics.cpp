#include "core/diagnostics.hpp"

#include <parallel/algorithm>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace grove {

Diagnostics compute_diagnostics(const ParticleSet& p, const Eigen::VectorXd& potential,
                                const std::vector<double>& fractions)
{
    if (potential.size() != p.mass.size())
        throw std::invalid_argument("compute_diagnostics: potential has " + std::to_string(potential.size()) +
                                    " entries for " + std::to_string(p.size()) + " particles");
    Diagnostics d;
    d.mass = p.mass.sum();
    d.kinetic = 0.5 * (p.vel.colwise().squaredNorm().transpose().array() * p.mass.array()).sum();
    d.potential = 0.5 * p.mass.dot(potential);
    complete_energies(d);
    d.momentum = p.vel * p.mass;
    for (Eigen::Index i = 0; i < p.pos.cols(); ++i) d.angular_momentum += p.mass[i] * p.pos.col(i).cross(p.vel.col(i));
    if (d.mass > 0) {
        d.centre_of_mass = p.pos * p.mass / d.mass;
    }
    d.lagrangian_radii = lagrangian_radii(p.pos, p.mass, d.centre_of_mass, fractions);
    return d;
}

std::vector<double> lagrangian_radii(const Eigen::Matrix3Xd& pos, const Eigen::VectorXd& mass,
                                     const Eigen::Vector3d& centre, const std::vector<double>& fractions,
                                     const std::vector<std::size_t>& selection)
{
    check_fractions(fractions);
    const bool all = selection.empty();
    const std::size_t size = all ? static_cast<std::size_t>(pos.cols()) : selection.size();
    std::vector<std::pair<double, double>> radius_mass(size);
    const auto count = static_cast<std::int64_t>(size);
#pragma omp parallel for schedule(static) if (count > 65536)
    for (std::int64_t k = 0; k < count; ++k) {
        const auto i =
            static_cast<Eigen::Index>(all ? static_cast<std::size_t>(k) : selection[static_cast<std::size_t>(k)]);
        radius_mass[static_cast<std::size_t>(k)] = {(pos.col(i) - centre).norm(), mass[i]};
    }
    // A run logs these every few steps: at 10^6 particles a serial sort took longer than a step.
    // The parallel sort orders the (radius, mass) pairs exactly as std::sort does. (Its merge sort
    // takes a copy as large as the pairs; the in-place parallel quicksort took twice as long.)
    __gnu_parallel::sort(radius_mass.begin(), radius_mass.end());
    double total = 0;
    for (const auto& rm : radius_mass) total += rm.second;
    std::vector<double> radii;
    for (double f : fractions) radii.push_back(radius_enclosing(radius_mass, f * total));
    return radii;
}

void check_fractions(const std::vector<double>& fractions)
{
    for (double f : fractions)
        if (!(f > 0 && f <= 1)) throw std::invalid_argument("Lagrangian fraction must lie in (0, 1]");
}

void complete_energies(Diagnostics& d)
{
    d.total = d.kinetic + d.potential;
    d.virial_ratio = d.potential != 0 ? 2 * d.kinetic / std::abs(d.potential) : 0;
}

double radius_enclosing(const std::vector<std::pair<double, double>>& sorted, double target, double enclosed, double r)
{
    double previous_r = r, previous_enclosed = enclosed;
    for (const auto& [ri, mi] : sorted) {
        previous_r = r;
        previous_enclosed = enclosed;
        r = ri;
        enclosed += mi;
        if (enclosed >= target) break;
    }
    const double span = enclosed - previous_enclosed;
    return span > 0 ? previous_r + (r - previous_r) * (target - previous_enclosed) / span : r;
}

} // namespace grove
