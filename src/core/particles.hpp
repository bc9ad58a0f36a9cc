// The host particle set: structure of arrays with Eigen storage. Columns of the 3xN matrices are
// particles, so the memory is x0 y0 z0 x1 y1 z1 ..., the N x 3 row-major layout of the snapshots.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "core/units.hpp"

namespace grove {

// GADGET particle types used for galaxy components.
enum class Component : std::uint8_t { Gas = 0, Halo = 1, Disk = 2, Bulge = 3, Stars = 4, Boundary = 5 };
constexpr int kNumParticleTypes = 6;

const char* component_name(int type); // "gas", "halo", "disk", "bulge", "stars", "boundary"

struct ParticleSet {
    Eigen::Matrix3Xd pos;           // 3 x N positions
    Eigen::Matrix3Xd vel;           // 3 x N velocities
    Eigen::VectorXd mass;           // N masses
    std::vector<std::uint64_t> id;  // N unique IDs >= 1
    std::vector<std::uint8_t> type; // N GADGET particle types (0..5)
    Eigen::Matrix3Xd acc;           // 3 x N accelerations, or empty when not computed
    Eigen::VectorXd pot;            // N potentials, or empty when not computed
    double time = 0.0;
    Units units = nbody_units();
    // Every option that made this set, written to /RunParameters; insertion order irrelevant.
    std::map<std::string, std::string> run_parameters;
    // Further per-particle datasets a command computed (e.g. grove forces --neighbours), written
    // into each /PartTypeN by name: `components` values per particle, in particle order. The
    // reader does not read them back.
    struct ExtraColumn {
        int components = 1;
        std::vector<double> values;        // a float column, or
        std::vector<std::uint64_t> counts; // an integer one (IDs, counts)
    };
    std::map<std::string, ExtraColumn> extra;

    std::size_t size() const { return static_cast<std::size_t>(mass.size()); }
    bool has_forces() const { return acc.cols() == pos.cols() && pot.size() == mass.size() && size() > 0; }

    // Allocates N particles of one type, IDs 1..N, zero positions, velocities and masses.
    void resize(std::size_t n, Component component = Component::Halo);

    // Throws std::runtime_error naming `what` and the first offending particle if any coordinate,
    // velocity or mass is not finite, a mass is negative, the set is empty, an ID is zero or
    // repeated, or a type is out of range.
    void validate(const std::string& what) const;
};

// Particles [begin, end) of p (end past the last is the last), with their forces where p has them.
ParticleSet particle_range(const ParticleSet& p, std::size_t begin, std::size_t end);

// Concatenation, keeping each input's order (used to assemble multi-component models). Forces
// are kept when both inputs have them; time, units and parameters come from `a`.
ParticleSet concatenate(const ParticleSet& a, const ParticleSet& b);

} // namespace grove
