#include "core/softening.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "core/particles.hpp"

namespace grove {

namespace {

int type_of(const std::string& name, const std::string& option)
{
    for (int t = 0; t < kNumParticleTypes; ++t)
        if (name == component_name(t) || name == std::to_string(t)) return t;
    throw std::invalid_argument(option + ": unknown particle type '" + name +
                                "' (0..5, or gas, halo, disk, bulge, stars, boundary)");
}

} // namespace

void parse_softening_types(const std::string& text, GravityParams& gravity, const std::string& option)
{
    GravityParams parsed = gravity;
    parsed.eps_type.fill(-1);
    std::istringstream items(text);
    std::string item;
    bool any = false;
    while (std::getline(items, item, ',')) {
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
            throw std::invalid_argument(option + ": expected TYPE=LENGTH items separated by commas, got '" + item +
                                        "' in '" + text + "'");
        const int t = type_of(item.substr(0, eq), option);
        const std::string value = item.substr(eq + 1);
        char* end = nullptr;
        const double eps = std::strtod(value.c_str(), &end);
        if (end != value.c_str() + value.size() || !(eps >= 0) || !std::isfinite(eps * eps))
            throw std::invalid_argument(option + ": the length of type " + std::to_string(t) +
                                        " must be a finite number >= 0 whose square is finite, got '" + value + "'");
        if (parsed.eps_type[static_cast<std::size_t>(t)] >= 0)
            throw std::invalid_argument(option + ": type " + std::to_string(t) + " is given twice");
        parsed.eps_type[static_cast<std::size_t>(t)] = eps;
        any = true;
    }
    if (!any) throw std::invalid_argument(option + ": expected TYPE=LENGTH items, got an empty list");
    gravity = parsed;
}

std::string softening_types_text(const GravityParams& gravity)
{
    std::string out;
    for (int t = 0; t < kNumParticleTypes; ++t) {
        if (gravity.eps_of(t) == gravity.eps) continue;
        char length[32];
        // The shortest text that reads back to the same double ("0.1", not "0.10000000000000001").
        const auto written = std::to_chars(length, length + sizeof length, gravity.eps_of(t));
        out += (out.empty() ? "" : ",") + std::to_string(t) + '=' + std::string(length, written.ptr);
    }
    return out;
}

std::vector<double> half_squared_softening(const GravityParams& gravity, TypesRef type, std::size_t n,
                                           const std::string& engine)
{
    if (!gravity.per_type()) return {};
    if (type.size() != n)
        throw std::invalid_argument(engine + ": the softening is per particle type, but " +
                                    (type.empty() ? std::string("no types") : std::to_string(type.size()) + " types") +
                                    " came with " + std::to_string(n) + " particles");
    double h[kNumParticleTypes];
    for (int t = 0; t < kNumParticleTypes; ++t) h[t] = 0.5 * (gravity.eps_of(t) * gravity.eps_of(t));
    std::vector<double> out(n);
    std::int64_t bad = INT64_MAX; // the first particle of a type out of range
#pragma omp parallel for schedule(static) reduction(min : bad) if (n > 16384)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(n); ++i) {
        const std::uint8_t t = type[static_cast<std::size_t>(i)];
        if (t >= kNumParticleTypes)
            bad = std::min(bad, i);
        else
            out[static_cast<std::size_t>(i)] = h[t];
    }
    if (bad != INT64_MAX)
        throw std::invalid_argument(engine + ": particle " + std::to_string(bad) + " has type " +
                                    std::to_string(int(type[static_cast<std::size_t>(bad)])) + ", out of 0..5");
    return out;
}

} // namespace grove
