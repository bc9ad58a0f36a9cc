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

Units gadget_units()
{
    Units u{"gadget", 0.0, kKiloparsecCm, 1e10 * kSolarMassG, 1e5};
    u.G = kGravityCgs * u.mass_g / (u.length_cm * u.velocity_cm_s * u.velocity_cm_s);
    return u;
}

Units units_by_name(const std::string& name)
{
    if (name == "nbody") return nbody_units();
    if (name == "gadget") return gadget_units();
    throw std::invalid_argument("unknown unit system '" + name + "' (use nbody or gadget)");
}

} // namespace grove
