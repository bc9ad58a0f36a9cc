#include "core/rank_exchange.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace grove {

bool domain_crossers_each_step()
{
    const char* v = std::getenv("GROVE_DOMAIN_CROSSERS");
    if (!v || std::string(v) == "step") return true;
    if (std::string(v) == "follow") return false;
    throw std::invalid_argument(std::string("GROVE_DOMAIN_CROSSERS must be step or follow, not ") + v);
}

int domain_recut_steps()
{
    const char* v = std::getenv("GROVE_DOMAIN_RECUT");
    if (!v) return kDomainRecutSteps;
    const std::string s(v);
    std::size_t used = 0;
    long steps = -1;
    try {
        steps = std::stol(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (s.empty() || used != s.size() || steps < 0 || steps > 1000000000)
        throw std::invalid_argument("GROVE_DOMAIN_RECUT must be a whole number of steps >= 0 (0: never), not " + s);
    return static_cast<int>(steps);
}

} // namespace grove
