// Initial conditions: spherical models sampled from their isotropic distribution functions, and a
// uniform cube for benchmarks. Each model is centred on zero position and momentum. Sampling
// uses std::mt19937_64 and our own transforms (no std:: distributions, whose output differs
// between standard libraries), so a seed gives the same file on every machine.
#pragma once

#include <cstdint>

#include "core/particles.hpp"
#include "core/rng.hpp"

namespace grove {

// Plummer sphere in Henon units (G = M = 1, E = -1/4, scale a = 3 pi / 16), positions by
// inverting M(r), speeds by rejection from the isotropic DF (Aarseth, Henon & Wielen 1974).
// cutoff > 0 truncates at that radius (in Henon units; the mass is renormalised to 1).
ParticleSet make_plummer(std::size_t n, std::uint64_t seed, double cutoff = 0);

// Hernquist (1990) sphere of mass M and scale a with G given; speeds by rejection from the
// analytic isotropic DF. truncation > 0 cuts the sphere at that radius (total mass stays M) and
// recentres it; untruncated, only the momentum is removed (see ic_models.cpp).
ParticleSet make_hernquist(std::size_t n, std::uint64_t seed, double mass, double scale, double G,
                           double truncation = 0);

// Uniform in the cube [-1, 1]^3 at rest; masses 1/N, or uniform in [0.5, 1.5]/N if random_masses.
ParticleSet make_uniform_cube(std::size_t n, std::uint64_t seed, bool random_masses);

} // namespace grove
