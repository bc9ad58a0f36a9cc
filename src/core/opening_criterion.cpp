#include "core/opening_criterion.hpp"

#include <stdexcept>

namespace grove {

void check_theta(double theta)
{
    if (!(theta > 0) || !(theta <= kMaxTheta))
        throw std::invalid_argument("theta must lie in (0, 1.1547]: above 2/sqrt(3) every cell's opening radius is "
                                    "its sqrt(3)/2 l floor, which keeps a group from accepting its own cell, so larger "
                                    "theta change nothing (got " +
                                    std::to_string(theta) + ")");
}

MacKind parse_mac(const std::string& name)
{
    if (name == "geometric") return MacKind::geometric;
    if (name == "relative") return MacKind::relative;
    throw std::invalid_argument("mac must be geometric (opening angle theta) or relative (error bound alpha), got '" +
                                name + "'");
}

const char* mac_name(MacKind kind)
{
    return kind == MacKind::geometric ? "geometric" : "relative";
}

void check_alpha(double alpha)
{
    if (!(alpha > 0) || !(alpha <= 1))
        throw std::invalid_argument("alpha must lie in (0, 1]: a cell is opened when G M l^2 / d^4 > alpha |a| "
                                    "(got " +
                                    std::to_string(alpha) + ")");
}

void check_theta_max(double theta_max)
{
    if (!(theta_max > 0) || !(theta_max <= kMaxTheta))
        throw std::invalid_argument("theta-max must lie in (0, 1.1547]: the relative criterion also opens the cells "
                                    "that the geometric one at this angle opens (got " +
                                    std::to_string(theta_max) + ")");
}

void check_opening(const OpeningCriterion& criterion)
{
    if (criterion.kind == MacKind::geometric) {
        check_theta(criterion.theta);
    } else {
        check_alpha(criterion.alpha);
        check_theta_max(criterion.theta_max);
    }
}

} // namespace grove
