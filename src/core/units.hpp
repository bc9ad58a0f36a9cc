// Unit systems. grove integrates in whatever units the snapshot is in; G is a run parameter and
// the unit system is recorded in every file so readers (yt, pynbody) can attach physical units.
#pragma once

#include <string>

namespace grove {

struct Units {
    std::string system;         // "nbody" or "gadget"
    double G = 1.0;             // gravitational constant in these units
    double length_cm = 1.0;     // one length unit in cm
    double mass_g = 1.0;        // one mass unit in g
    double velocity_cm_s = 1.0; // one velocity unit in cm/s

    double time_s() const { return length_cm / velocity_cm_s; }
};

// Henon units: G = M = 1, E = -1/4. No physical scale is implied; the cgs factors are 1.
Units nbody_units();

// GADGET galaxy units: kpc, km/s, 1e10 Msun, so G = 43007.1 (time unit 0.978 Gyr).
Units gadget_units();

// Physical units given in cgs (a GADGET file's /Units), with G in them from GADGET-2's constant.
Units units_from_cgs(double length_cm, double mass_g, double velocity_cm_s);

// "nbody" or "gadget"; throws std::invalid_argument with the accepted names otherwise.
Units units_by_name(const std::string& name);

} // namespace grove
