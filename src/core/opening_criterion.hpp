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

// What a walk opens cells by; `theta` serves the geometric criterion, `alpha` the relative one.
struct OpeningCriterion {
    MacKind kind = MacKind::geometric;
    double theta = 0.5;
    double alpha = 1e-3;

    static OpeningCriterion geometric(double theta) { return {MacKind::geometric, theta, 1e-3}; }
    static OpeningCriterion relative(double alpha) { return {MacKind::relative, 0.5, alpha}; }
    // The swept parameter and its name: theta or alpha.
    double parameter() const { return kind == MacKind::geometric ? theta : alpha; }
    const char* parameter_name() const { return kind == MacKind::geometric ? "theta" : "alpha"; }
};

// "geometric" | "relative" (what --mac takes); throws std::invalid_argument naming both.
MacKind parse_mac(const std::string& name);
const char* mac_name(MacKind kind);

// Throws std::invalid_argument with a message for a user unless 0 < alpha <= 1.
void check_alpha(double alpha);
// Throws for a criterion whose parameter is out of range (check_theta or check_alpha).
void check_opening(const OpeningCriterion& criterion);

} // namespace grove
