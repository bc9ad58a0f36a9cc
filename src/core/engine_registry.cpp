#include "core/engine_registry.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/opening_criterion.hpp"

namespace grove {

void EngineConfig::validate(OptionNames names) const
{
    // A setting as the caller spells it: Python's keyword, or the command line's option.
    const auto name = [&](const std::string& keyword) {
        if (names == OptionNames::python) return keyword;
        if (keyword == "G") return std::string("-G"); // a one-letter option
        std::string option = "--" + keyword;
        std::replace(option.begin(), option.end(), '_', '-');
        return option;
    };
    if (precision != "float" && precision != "mixed" && precision != "double")
        throw std::invalid_argument(name("precision") + " must be float, mixed or double, got '" + precision + "'");
    if (mac != "relative" && theta_max != kMaxTheta)
        throw std::invalid_argument(name("theta_max") + " bounds " + name("mac") +
                                    " relative; it has no effect on theta");
    try {
        check_opening({parse_mac(mac), theta, alpha, theta_max});
    } catch (const std::invalid_argument& e) { // its message starts with the setting's keyword
        throw std::invalid_argument(names == OptionNames::python ? e.what() : "--" + std::string(e.what()));
    }
    // The engines sum with eps^2: a softening whose square is not finite would give NaN forces.
    if (!(gravity.eps >= 0) || !std::isfinite(gravity.eps * gravity.eps))
        throw std::invalid_argument(name("eps") + " must be a finite number >= 0 whose square is finite (got " +
                                    std::to_string(gravity.eps) + ")");
    for (int t = 0; t < kNumParticleTypes; ++t)
        if (!std::isfinite(gravity.eps_of(t) * gravity.eps_of(t)))
            throw std::invalid_argument(name("eps_type") + ": the length of type " + std::to_string(t) +
                                        " must be finite with a finite square");
    if (!(gravity.G > 0) || !std::isfinite(gravity.G))
        throw std::invalid_argument(name("G") + " must be a finite number > 0");
    if (nleaf < 1) throw std::invalid_argument(name("nleaf") + " must be >= 1");
    if (ncrit < 0)
        throw std::invalid_argument(name("ncrit") + " must be >= 1, or 0 for the size by the number of particles");
    if (rebuild_every < 1) throw std::invalid_argument(name("rebuild_every") + " must be >= 1");
}

namespace {

bool ends_with(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

} // namespace

void EngineRegistry::add(EngineEntry entry)
{
    for (auto& e : entries_)
        if (e.name == entry.name) {
            e = std::move(entry);
            return;
        }
    entries_.push_back(std::move(entry));
}

void EngineRegistry::set_device_free_memory(std::function<std::uint64_t(int)> free_memory)
{
    free_memory_ = std::move(free_memory);
}

void EngineRegistry::set_device_count(std::function<int()> device_count)
{
    device_count_ = std::move(device_count);
}

bool EngineRegistry::gpu_available() const
{
    return device_count_ && device_count_() > 0;
}

bool EngineRegistry::has(const std::string& name) const
{
    return std::any_of(entries_.begin(), entries_.end(), [&](const EngineEntry& e) { return e.name == name; });
}

std::string EngineRegistry::resolve(const std::string& name) const
{
    if (name == "direct" || name == "tree") return name + (gpu_available() ? "-gpu" : "-cpu");
    return name;
}

const EngineEntry& EngineRegistry::find(const std::string& name) const
{
    for (const auto& e : entries_) {
        if (e.name != name) continue;
        if (e.needs_gpu && !gpu_available())
            throw std::runtime_error("engine " + name + " needs a CUDA GPU and none is visible; use " +
                                     name.substr(0, name.find('-')) + "-cpu");
        return e;
    }
    if (ends_with(name, "-gpu") && has(name.substr(0, name.size() - 4) + "-cpu"))
        throw std::runtime_error("engine " + name +
                                 " needs a CUDA GPU and this build has no GPU engines (built "
                                 "without nvcc); use " +
                                 name.substr(0, name.size() - 4) + "-cpu");
    std::string known = "direct, tree";
    for (const auto& e : entries_) known += ", " + e.name;
    throw std::runtime_error("unknown engine '" + name + "' (use " + known + ")");
}

std::unique_ptr<ForceEngine> EngineRegistry::make_force(const EngineConfig& config) const
{
    const EngineEntry& e = find(resolve(config.engine));
    if (!e.make_force) throw std::runtime_error("engine " + e.name + " computes no plain forces");
    return e.make_force(config);
}

std::unique_ptr<HermiteEngine> EngineRegistry::make_hermite(const EngineConfig& config, const std::string& role) const
{
    const EngineEntry& e = find(resolve(config.engine));
    if (!e.make_hermite) {
        std::string choices;
        for (const auto& x : entries_)
            if (x.make_hermite) choices += (choices.empty() ? "" : ", ") + x.name;
        throw std::runtime_error(role + " runs on direct, " + choices + " (got '" + config.engine + "')");
    }
    return e.make_hermite(config);
}

} // namespace grove
