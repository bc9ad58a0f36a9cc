#include "core/particles.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace grove {

const char* component_name(int type)
{
    static const char* const names[kNumParticleTypes] = {"gas", "halo", "disk", "bulge", "stars", "boundary"};
    return (type >= 0 && type < kNumParticleTypes) ? names[type] : "unknown";
}

void ParticleSet::resize(std::size_t n, Component component)
{
    const auto cols = static_cast<Eigen::Index>(n);
    pos = Eigen::Matrix3Xd::Zero(3, cols);
    vel = Eigen::Matrix3Xd::Zero(3, cols);
    mass = Eigen::VectorXd::Zero(cols);
    id.resize(n);
    std::iota(id.begin(), id.end(), std::uint64_t{1});
    type.assign(n, static_cast<std::uint8_t>(component));
    acc.resize(3, 0);
    pot.resize(0);
}

void ParticleSet::validate(const std::string& what) const
{
    const std::size_t n = size();
    if (n == 0) throw std::runtime_error(what + ": contains zero particles");
    if (static_cast<std::size_t>(pos.cols()) != n || static_cast<std::size_t>(vel.cols()) != n || id.size() != n ||
        type.size() != n)
        throw std::runtime_error(what + ": particle arrays have inconsistent lengths");
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<Eigen::Index>(i);
        if (!pos.col(c).allFinite())
            throw std::runtime_error(what + ": particle " + std::to_string(i) + " (ID " + std::to_string(id[i]) +
                                     ") has a non-finite coordinate");
        if (!vel.col(c).allFinite())
            throw std::runtime_error(what + ": particle " + std::to_string(i) + " (ID " + std::to_string(id[i]) +
                                     ") has a non-finite velocity");
        if (!std::isfinite(mass[c]))
            throw std::runtime_error(what + ": particle " + std::to_string(i) + " (ID " + std::to_string(id[i]) +
                                     ") has a non-finite mass");
        if (mass[c] < 0)
            throw std::runtime_error(what + ": particle " + std::to_string(i) + " (ID " + std::to_string(id[i]) +
                                     ") has a negative mass");
        if (type[i] >= kNumParticleTypes)
            throw std::runtime_error(what + ": particle " + std::to_string(i) + " has type " + std::to_string(type[i]) +
                                     " (must be 0..5)");
    }
    std::vector<std::uint64_t> sorted(id);
    std::sort(sorted.begin(), sorted.end());
    if (sorted.front() == 0) throw std::runtime_error(what + ": particle ID 0 found (IDs must be >= 1)");
    const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
    if (dup != sorted.end()) throw std::runtime_error(what + ": duplicate particle ID " + std::to_string(*dup));
}

ParticleSet particle_range(const ParticleSet& p, std::size_t begin, std::size_t end)
{
    end = std::min(end, p.size());
    begin = std::min(begin, end);
    const auto b = static_cast<Eigen::Index>(begin), n = static_cast<Eigen::Index>(end - begin);
    ParticleSet part;
    part.pos = p.pos.middleCols(b, n);
    part.vel = p.vel.middleCols(b, n);
    part.mass = p.mass.segment(b, n);
    part.id.assign(p.id.begin() + b, p.id.begin() + b + n);
    part.type.assign(p.type.begin() + b, p.type.begin() + b + n);
    if (p.has_forces()) {
        part.acc = p.acc.middleCols(b, n);
        part.pot = p.pot.segment(b, n);
    }
    part.time = p.time;
    part.units = p.units;
    part.run_parameters = p.run_parameters;
    return part;
}

ParticleSet concatenate(const ParticleSet& a, const ParticleSet& b)
{
    ParticleSet out;
    const Eigen::Index na = a.pos.cols(), nb = b.pos.cols();
    out.pos.resize(3, na + nb);
    out.pos << a.pos, b.pos;
    out.vel.resize(3, na + nb);
    out.vel << a.vel, b.vel;
    out.mass.resize(na + nb);
    out.mass << a.mass, b.mass;
    out.id = a.id;
    out.id.insert(out.id.end(), b.id.begin(), b.id.end());
    out.type = a.type;
    out.type.insert(out.type.end(), b.type.begin(), b.type.end());
    if (a.has_forces() && b.has_forces()) {
        out.acc.resize(3, na + nb);
        out.acc << a.acc, b.acc;
        out.pot.resize(na + nb);
        out.pot << a.pot, b.pot;
    }
    out.time = a.time;
    out.units = a.units;
    out.run_parameters = a.run_parameters;
    return out;
}

} // namespace grove
