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

} // namespace grove
