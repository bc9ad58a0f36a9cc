#include "tree/grape_cpu.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "tree/gravity.hpp"

namespace grove {

void GrapeCpuEngine::resize(std::size_t slots)
{
    memory_.resize(slots);
    predicted_ = false;
}

void GrapeCpuEngine::set(std::size_t slot, const GrapeJParticle& p)
{
    if (slot >= memory_.size())
        throw std::out_of_range("j-particle address " + std::to_string(slot) + " beyond the memory of " +
                                std::to_string(memory_.size()));
    memory_[slot] = p;
    predicted_ = false;
}

void GrapeCpuEngine::evaluate(double t, std::size_t nj, const GrapeIParticles& in, double eps2,
                              std::size_t neighbour_capacity, GrapeResults& out)
{
    if (nj > memory_.size())
        throw std::out_of_range("nj = " + std::to_string(nj) + " beyond the j-memory of " +
                                std::to_string(memory_.size()));
    const auto n = static_cast<std::int64_t>(nj);
    if (!predicted_ || predicted_t_ != t || predicted_n_ != nj) {
        xp_.resize(3 * nj);
        vp_.resize(3 * nj);
#pragma omp parallel for schedule(static) if (n > 4096)
        for (std::int64_t j = 0; j < n; ++j) grape6_predict(memory_[j], t, &xp_[3 * j], &vp_[3 * j]);
        predicted_ = true;
        predicted_t_ = t;
        predicted_n_ = nj;
    }
    const auto ni = static_cast<std::int64_t>(in.size());
    out.acc.assign(3 * in.size(), 0.0);
    out.jerk.assign(3 * in.size(), 0.0);
    out.pot.assign(in.size(), 0.0);
    out.nearest.assign(in.size(), -1);
    out.nearest_r2.assign(in.size(), INFINITY);
    const bool lists = neighbour_capacity > 0;
    out.offset.assign(lists ? in.size() : 0, 0);
    out.count.assign(lists ? in.size() : 0, 0);
    out.overflowed.assign(lists ? in.size() : 0, 0);
    for (std::int64_t k = 0; lists && k < ni; ++k) out.offset[k] = k * static_cast<std::int64_t>(neighbour_capacity);
    out.neighbours.assign(lists ? in.size() * neighbour_capacity : 0, -1);
    std::int64_t coincident_i = -1, coincident_j = -1;
#pragma omp parallel for schedule(dynamic, 4) if (ni * n > 65536)
    for (std::int64_t k = 0; k < ni; ++k) {
        const double* xi = &in.x[3 * k];
        const double* vi = &in.v[3 * k];
        const std::int64_t self = in.name[k];
        AccumJerk<double> s;
        double best = INFINITY;
        std::int64_t best_name = -1;
        std::vector<std::int64_t> found;
        for (std::int64_t j = 0; j < n; ++j) {
            const GrapeJParticle& p = memory_[j];
            if (p.name < 0 || p.name == self) continue;
            const double dx = xp_[3 * j] - xi[0], dy = xp_[3 * j + 1] - xi[1], dz = xp_[3 * j + 2] - xi[2];
            const double r2 = dx * dx + dy * dy + dz * dz;
            if (r2 == 0 && eps2 == 0) {
#pragma omp critical(grape_coincident)
                {
                    coincident_i = self;
                    coincident_j = p.name;
                }
                continue;
            }
            s = p2p_jerk(s, dx, dy, dz, vp_[3 * j] - vi[0], vp_[3 * j + 1] - vi[1], vp_[3 * j + 2] - vi[2], p.mass,
                         eps2);
            if (r2 < best || (r2 == best && p.name < best_name)) { // ties: the smaller name
                best = r2;
                best_name = p.name;
            }
            if (lists && r2 < in.h2[k]) found.push_back(p.name);
        }
        out.acc[3 * k] = s.ax;
        out.acc[3 * k + 1] = s.ay;
        out.acc[3 * k + 2] = s.az;
        out.jerk[3 * k] = s.jx;
        out.jerk[3 * k + 1] = s.jy;
        out.jerk[3 * k + 2] = s.jz;
        out.pot[k] = s.pot;
        out.nearest[k] = best_name;
        out.nearest_r2[k] = best;
        if (lists) {
            std::sort(found.begin(), found.end());
            out.count[k] = static_cast<std::int64_t>(found.size());
            out.overflowed[k] = found.size() > neighbour_capacity;
            const std::size_t keep = std::min(found.size(), neighbour_capacity);
            std::copy(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(keep),
                      out.neighbours.begin() + out.offset[k]);
        }
    }
    if (coincident_i >= 0)
        throw std::runtime_error("particles " + std::to_string(coincident_i) + " and " + std::to_string(coincident_j) +
                                 " are at the same position and the softening is 0: their force is infinite");
}

} // namespace grove
