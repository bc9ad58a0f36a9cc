#include "core/units.hpp"

#include <stdexcept>

namespace grove {

namespace {
// GADGET-2's constants (allvars.h), so that G = 43007.1 in galaxy units exactly as in GADGET and
// in the models made for it.
constexpr double kGravityCgs = 6.672e-8;      // cm^3 g^-1 s^-2
constexpr double kKiloparsecCm = 3.085678e21; // cm
constexpr double kSolarMassG = 1.989e33;      // g
} // namespace

Units nbody_units()
{
    return Units{"nbody", 1.0, 1.0, 1.0, 1.0};
}

Units units_from_cgs(double length_cm, double mass_g, double velocity_cm_s)
{
    if (!(length_cm > 0) || !(mass_g > 0) || !(velocity_cm_s > 0))
        throw std::invalid_argument("units: length, mass and velocity units must be > 0");
    // G [cm^3 g^-1 s^-2] in units of L^3 M^-1 T^-2, T = L / V: G M / (L V^2).
    return Units{"gadget", kGravityCgs * mass_g / (length_cm * velocity_cm_s * velocity_cm_s), length_cm, mass_g,
                 velocity_cm_s};
}

Units gadget_units()
{
    return units_from_cgs(kKiloparsecCm, 1e10 * kSolarMassG, 1e5);
}

Units units_by_name(const std::string& name)
{
    if (name == "nbody") return nbody_units();
    if (name == "gadget") return gadget_units();
    throw std::invalid_argument("unknown unit system '" + name + "' (use nbody or gadget)");
}

} // namespace grove
