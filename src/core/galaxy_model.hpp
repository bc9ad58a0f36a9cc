// A disk galaxy in equilibrium: Hernquist bulge, exponential sech^2 disk, NFW or Hernquist halo
// (the Milky-Way-like model of the Octgrav tests, masses 1 : 1 : 4 by default).
//
// Spherical components draw speeds from isotropic distribution functions found by Eddington
// inversion in the total potential (the disk entering through its spherically averaged mass).
// The disk's velocities follow Hernquist (1993): sigma_z^2 = pi G Sigma z0, sigma_R^2 ~ exp(-R/R_d)
// normalised to a Toomre Q at a reference radius, sigma_phi from the epicyclic ratio, and the
// mean rotation from the asymmetric-drift equation in the total midplane rotation curve (the
// disk's own part from the razor-thin exponential disk, Freeman 1970).
//
// Units are GADGET galaxy units (kpc, km/s, 1e10 Msun, G = 43007.1); spherical components are
// tapered by exp(-(r / r_t)^2) beyond a truncation radius r_t so the model has finite extent;
// masses are the tapered components' total masses.
// Each component is centred on the origin in position and velocity.
#pragma once

#include <cstdint>
#include <vector>

#include "core/particles.hpp"

namespace grove {

enum class HaloProfile { Nfw, Hernquist };

struct GalaxyParams {
    double bulge_mass = 4;          // 1e10 Msun
    double bulge_scale = 0.75;      // kpc, Hernquist a
    double bulge_truncation = 15;   // kpc
    double disk_mass = 4;           // 1e10 Msun
    double disk_scale_length = 3;   // kpc, R_d
    double disk_scale_height = 0.3; // kpc, z0 of sech^2(z / z0)
    double toomre_q = 1.5;          // at the reference radius
    double q_radius = 2.43;         // reference radius in units of R_d
    HaloProfile halo_profile = HaloProfile::Nfw;
    double halo_mass = 16;        // 1e10 Msun
    double halo_scale = 12;       // kpc, NFW r_s or Hernquist a
    double halo_truncation = 120; // kpc
};

// Particle numbers in proportion to the masses (equal particle masses up to rounding), at least
// one particle per component with positive mass. Bulge, disk and halo are written as GADGET
// types 3, 2 and 1. Throws std::invalid_argument naming the parameter on bad input, including
// parameters for which a distribution function would be negative or Q cannot be reached.
ParticleSet make_galaxy(std::size_t n, std::uint64_t seed, const GalaxyParams& params);

// Profiles of a model, for tests and the equilibrium script: cumulative fractions of each
// component's mass (spherical radius for bulge and halo, cylindrical R and |z| for the disk).
struct GalaxyProfiles {
    GalaxyParams params;
    double bulge_mass_fraction(double r) const;
    double halo_mass_fraction(double r) const;
    double disk_mass_fraction(double R) const;       // 1 - (1 + R/R_d) exp(-R/R_d)
    double disk_height_fraction(double abs_z) const; // tanh(|z| / z0)
    std::vector<double> r, bulge, halo;              // tabulated cumulative fractions
};
GalaxyProfiles galaxy_profiles(const GalaxyParams& params);

// Checks each parameter and throws std::invalid_argument naming the first bad one.
void validate(const GalaxyParams& params);

} // namespace grove
