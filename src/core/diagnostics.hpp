// Conserved quantities and structure of a particle set: energies, virial ratio, momenta, centre of
// mass and Lagrangian radii. Potentials come from a force engine (G included, per unit mass).
#pragma once

#include <utility>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include "core/particles.hpp"

namespace grove {

struct Diagnostics {
    double mass = 0;
    double kinetic = 0;      // T = 1/2 sum m v^2
    double potential = 0;    // W = 1/2 sum m phi
    double total = 0;        // T + W
    double virial_ratio = 0; // 2T/|W| (1 in equilibrium)
    Eigen::Vector3d momentum = Eigen::Vector3d::Zero();
    Eigen::Vector3d angular_momentum = Eigen::Vector3d::Zero(); // about the origin
    Eigen::Vector3d centre_of_mass = Eigen::Vector3d::Zero();
    std::vector<double> lagrangian_radii; // about the centre of mass, one per fraction
};

// The mass fractions of the Lagrangian radii a diagnostics line reports.
inline const std::vector<double> kLogFractions = {0.1, 0.5, 0.9};

// `potential` has one entry per particle (N); `fractions` lie in (0, 1].
Diagnostics compute_diagnostics(const ParticleSet& particles, const Eigen::VectorXd& potential,
                                const std::vector<double>& fractions = kLogFractions);
// Throws std::invalid_argument unless every fraction lies in (0, 1].
void check_fractions(const std::vector<double>& fractions);
// The totals of a Diagnostics from its sums (mass, kinetic and potential energies): the total
// energy and the virial ratio.
void complete_energies(Diagnostics& d);

// Radii about `centre` enclosing the given fractions of the mass of the selected particles
// (all when `selection` is empty), interpolating between the bracketing particles.
std::vector<double> lagrangian_radii(const Eigen::Matrix3Xd& pos, const Eigen::VectorXd& mass,
                                     const Eigen::Vector3d& centre, const std::vector<double>& fractions,
                                     const std::vector<std::size_t>& selection = {});

// The radius at which the enclosed mass reaches `target`, walking (radius, mass) pairs sorted by
// radius from `enclosed` mass at radius `r` (what lies inside the first pair: none at the
// centre), interpolated between the two pairs that bracket it.
double radius_enclosing(const std::vector<std::pair<double, double>>& sorted, double target, double enclosed = 0,
                        double r = 0);

} // namespace grove
