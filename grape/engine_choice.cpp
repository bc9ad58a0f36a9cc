#include "grape/engine_choice.hpp"

#include <cstdlib>
#include <stdexcept>

#include "engines/engines.hpp"

namespace grove::grape {

EngineChoice choose_gpu_engine(const char* variable, EngineConfig config)
{
    const char* value = std::getenv(variable);
    const std::string asked = value && *value ? value : "";
    if (!asked.empty() && asked != "cpu" && asked != "gpu")
        throw std::runtime_error(std::string(variable) + " must be cpu or gpu (got '" + asked + "')");
    const EngineRegistry& registry = engines();
    EngineChoice choice;
    if (asked == "cpu")
        choice.why_cpu = std::string(variable) + " is cpu";
    else if (!registry.has("direct-gpu"))
        choice.why_cpu = "this build has no GPU engine";
    else if (!registry.gpu_available()) // before find(), which refuses a GPU engine without a GPU
        choice.why_cpu = "no CUDA GPU is visible";
    else if (!registry.find("direct-gpu").make_grape)
        choice.why_cpu = "this build has no GPU GRAPE engine";
    else {
        config.engine = "direct-gpu";
        choice.engine = registry.find("direct-gpu").make_grape(config);
    }
    return choice;
}

} // namespace grove::grape
