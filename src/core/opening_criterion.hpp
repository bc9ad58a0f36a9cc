// What a tree walk opens cells by (the math is tree/mac.hpp): the kind of criterion and its
// parameter, and the checks a user's values must pass. Here in core, as engine configuration
// (EngineConfig::validate) checks them for every command and the Python module.
#pragma once

#include <string>

namespace grove {

// Above this opening angle the floor of r_open (sqrt(3)/2 l) takes over for every cell, so every
// larger theta gives the same lists: 2/sqrt(3).
constexpr double kMaxTheta = 1.1547005383792515;

// Throws std::invalid_argument with a message for a user unless 0 < theta <= kMaxTheta. The
// engines' registry entries and the command line check with it; the engines themselves accept
// any theta > 0 (their floor keeps them safe, which the tests exercise).
void check_theta(double theta);

enum class MacKind { geometric, relative };

// What a walk opens cells by; `theta` serves the geometric criterion, `alpha` and `theta_max` the
// relative one. theta_max bounds the relative criterion by geometry: it also opens every cell that
// the geometric criterion at theta_max opens (kMaxTheta: only the floor every criterion keeps).
// The relative criterion spends its error in proportion to |a|, so at a given median error the
// centres of galaxies, where |a| and the orbital frequencies are largest, get the largest
// absolute errors; a geometric bound keeps them near the geometric criterion's there.
struct OpeningCriterion {
    MacKind kind = MacKind::geometric;
    double theta = 0.5;
    double alpha = 1e-3;
    double theta_max = kMaxTheta;

    static OpeningCriterion geometric(double theta) { return {MacKind::geometric, theta, 1e-3}; }
    static OpeningCriterion relative(double alpha, double theta_max = kMaxTheta)
    {
        return {MacKind::relative, 0.5, alpha, theta_max};
    }
    // The angle whose opening radii the walk tests beside the relative radii (or alone).
    double geometric_theta() const { return kind == MacKind::geometric ? theta : theta_max; }
    // The swept parameter and its name: theta or alpha.
    double parameter() const { return kind == MacKind::geometric ? theta : alpha; }
    const char* parameter_name() const { return kind == MacKind::geometric ? "theta" : "alpha"; }
};

// "geometric" | "relative" (what --mac takes); throws std::invalid_argument naming both.
MacKind parse_mac(const std::string& name);
const char* mac_name(MacKind kind);

// Throws std::invalid_argument with a message for a user unless 0 < alpha <= 1.
void check_alpha(double alpha);
// Throws for a criterion whose parameter is out of range (check_theta, or check_alpha and the
// bound's check_theta_max).
void check_theta_max(double theta_max);
void check_opening(const OpeningCriterion& criterion);

} // namespace grove
