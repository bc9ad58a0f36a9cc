// Isotropic distribution functions by Eddington inversion, tabulated on a radial grid, for a
// spherical component living in a spherical total potential that may include other mass.
//
//   f(E) = 1 / (sqrt(8) pi^2) * integral_0^E d^2 rho / d Psi^2  dPsi / sqrt(E - Psi)
//
// (binding energy E = Psi - v^2/2 > 0, relative potential Psi = -Phi > 0). The boundary term
// (d rho / d Psi at Psi = 0) vanishes for the tapered components we build, whose density falls
// faster than any power at large radius. The integral is evaluated exactly for rho'' linear in Psi
// between grid points, so the 1/sqrt singularity costs no accuracy.
#pragma once

#include <string>
#include <vector>

#include "core/rng.hpp"

namespace grove {

// The total potential: radii increasing, enclosed total mass and relative potential Psi(r) > 0
// (decreasing). Built by `make_radial_table` from the total density and enclosed mass.
struct RadialTable {
    std::vector<double> r;
    std::vector<double> mass; // total mass within r
    std::vector<double> psi;  // -Phi(r)
    double G = 1;

    // Log-linear interpolation in r; clamps outside the table.
    double psi_at(double radius) const;
};

// Psi(r) = G M(r) / r + G * integral_r^inf 4 pi r' rho(r') dr' on the given grid, with
// `mass_inner` the mass inside r[0] and rho the total density at the grid radii.
RadialTable make_radial_table(std::vector<double> r, const std::vector<double>& rho, double mass_inner, double G);

class EddingtonDf {
  public:
    // rho and drho_dr: the component's density and its radial derivative at table.r.
    EddingtonDf(const RadialTable& table, const std::vector<double>& rho, const std::vector<double>& drho_dr);

    // f(E) by interpolation in log f between the grid energies Psi(r_i); 0 outside (0, Psi(r_0)].
    double f(double energy) const;

    // Density recovered from the DF: 4 pi integral_0^sqrt(2 Psi) v^2 f(Psi - v^2/2) dv (a check).
    double density_from_df(double psi) const;

    // A speed at radius r drawn from p(v) ~ v^2 f(Psi(r) - v^2/2) by rejection.
    double sample_speed(Rng& rng, double radius) const;

    // The most negative value of f relative to the size of the terms that sum to it (the
    // integral of |rho''|): 0 when f >= 0 everywhere, about -1 when f is clearly negative.
    // Rounding in a positive DF gives values above -1e-6.
    double worst_negative_ratio() const { return worst_ratio_; }
    double worst_negative_radius() const { return worst_radius_; }

  private:
    const RadialTable& table_;
    std::vector<double> f_;    // f at E = psi[i]
    std::vector<double> peak_; // max over v of v^2 f(psi[i] - v^2/2)
    double worst_ratio_ = 0;
    double worst_radius_ = 0;
};

} // namespace grove
