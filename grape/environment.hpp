// Reading the libraries' settings from the environment (grape/README.md lists them).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "core/device_list.hpp"

namespace grove::grape {

// A positive integer from the environment variable `name`, or `fallback` (with one line on stderr,
// prefixed by `library`, when the variable is set to something else).
inline long env_count(const char* library, const char* name, long fallback)
{
    const char* text = std::getenv(name);
    if (!text || !*text) return fallback;
    char* end = nullptr;
    const long v = std::strtol(text, &end, 10);
    if (*end != '\0' || v < 1) {
        std::fprintf(stderr, "grove %s: %s=%s is not a positive integer; using %ld\n", library, name, text, fallback);
        return fallback;
    }
    return v;
}

// GROVE_DEVICES ("0" or "1,2"): the CUDA devices the library may use, empty when unset. Sets
// `ok` false (with one line on stderr, prefixed by `library`) when it is not such a list.
inline std::vector<int> env_devices(const char* library, bool& ok)
{
    const char* text = std::getenv("GROVE_DEVICES");
    const std::optional<std::vector<int>> devices = parse_device_list(text ? text : "");
    ok = devices.has_value();
    if (!ok) std::fprintf(stderr, "grove %s: GROVE_DEVICES=%s is not a list of device numbers\n", library, text);
    return devices.value_or(std::vector<int>{});
}

} // namespace grove::grape
