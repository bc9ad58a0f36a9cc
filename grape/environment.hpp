// Reading the libraries' settings from the environment (grape/README.md lists them).
#pragma once

#include <cstdio>
#include <cstdlib>

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

} // namespace grove::grape
