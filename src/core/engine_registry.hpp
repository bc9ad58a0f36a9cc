// The one place engines are chosen by name. Each engine library adds its entries ({name,
// needs_gpu, factories}); the command line, the tests, the GRAPE libraries and Python all create
// engines through a registry, so none of them needs to know which engines a build has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/force_engine.hpp"
#include "core/grape_engine.hpp"
#include "core/hermite_engine.hpp"
#include "core/opening_criterion.hpp"

namespace grove {

// The tree's default cell and group sizes, for every tree engine and command, chosen by sweeps on
// the GPU (bench/results/step.md and tree-kernels.md): groups of up to 96 particles walking trees
// of leaves of up to 32 give the shortest leapfrog step at 2^20 and smaller errors than 64 and 64.
// Larger trees want larger groups (their lists grow, and a group's walk is shared by more
// targets): ncrit = 0 (kAutoNcrit, the default) means groups of up to 96 below kLargeGroupsFrom
// particles and 192 from there, where 192 became the faster one.
constexpr int kDefaultNleaf = 32;
constexpr int kAutoNcrit = 0;
constexpr int kDefaultNcrit = kAutoNcrit;
constexpr int kSmallGroups = 96, kLargeGroups = 192;
constexpr std::size_t kLargeGroupsFrom = 3'000'000;
// What the options' help says ncrit = 0 means (the three constants above, in words).
#define GROVE_AUTO_NCRIT_HELP "0: 96 below 3 million particles, 192 from there"

// The most particles per group in a tree of n particles, for an ncrit option (0: by n, as above).
constexpr int resolved_ncrit(int ncrit, std::size_t n)
{
    return ncrit > 0 ? ncrit : n >= kLargeGroupsFrom ? kLargeGroups : kSmallGroups;
}

// Everything an engine factory may read; each engine takes what applies to it.
struct EngineConfig {
    std::string engine = "direct";    // a registered name, or "direct" / "tree" (GPU when present)
    std::string precision = "double"; // direct-gpu: float | mixed | double (the others are double)
    double theta = 0.5;               // tree opening angle
    std::string mac = "geometric";    // tree opening criterion: geometric (theta) | relative (alpha)
    double alpha = 1e-3;              // tree: the relative criterion's error bound
    double theta_max = kMaxTheta;     // tree: the relative criterion's geometric bound (OpeningCriterion)
    int nleaf = kDefaultNleaf;        // tree: most particles in a leaf cell
    int ncrit = kDefaultNcrit;        // tree: most particles in a group (0: by N, resolved_ncrit)
    int rebuild_every = 1;            // tree: full builds every K evaluations, refits between
    bool lookahead = true;            // tree-gpu: build the next tree from the integrator's prediction
    bool resident = true;             // tree-gpu, leapfrog: whole steps on the device (needs lookahead)
                                      // while an evaluation runs (from the store's predicted drift)
    int device = -1;                  // GPU engines that take one: the CUDA device (-1: the current)
    std::vector<int> devices;         // direct-gpu forces: the CUDA devices that share each evaluation
                                      // (empty: `device` if set, else every visible one)
    std::uint64_t gpu_memory = 0;     // GPU engines: bytes they may hold on their device (0: what is free)
    std::uint64_t list_memory = 0;    // tree engines: bytes their interaction lists may hold at once
                                      // (0: chosen from the memory there is); walked in batches within
    GravityParams gravity;

    // Throws std::invalid_argument naming the setting as `names` spells it (Python's keyword or
    // the command line's option) for a value no engine could use: an unknown precision or
    // criterion, theta or alpha out of range, a softening whose square overflows, G not > 0,
    // nleaf < 1, ncrit < 0, rebuild_every < 1. Every command and the Python module check with it.
    enum class OptionNames { python, command_line };
    void validate(OptionNames names = OptionNames::python) const;
};

struct EngineEntry {
    std::string name; // e.g. "tree-gpu"
    bool needs_gpu = false;
    // A factory may be empty: a tree engine has no Hermite form.
    std::function<std::unique_ptr<ForceEngine>(const EngineConfig&)> make_force;
    std::function<std::unique_ptr<HermiteEngine>(const EngineConfig&)> make_hermite;
    // The GRAPE libraries' engine (grape/); empty where the engine has none.
    std::function<std::unique_ptr<GrapeEngine>(const EngineConfig&)> make_grape = nullptr;
};

class EngineRegistry {
  public:
    void add(EngineEntry entry); // replaces an entry of the same name
    // The GPU library installs its device count; without one there is no GPU.
    void set_device_count(std::function<int()> device_count);

    // And a query of a device's free memory (bytes; device -1: the current one).
    void set_device_free_memory(std::function<std::uint64_t(int)> free_memory);

    bool gpu_available() const;
    int device_count() const { return device_count_ ? device_count_() : 0; }
    // 0 where unknown (no GPU).
    std::uint64_t device_free_memory(int device) const { return free_memory_ ? free_memory_(device) : 0; }
    bool has(const std::string& name) const;

    // "direct" / "tree" -> "direct-gpu" / "tree-gpu" when a GPU is visible, else the -cpu engine;
    // other names unchanged.
    std::string resolve(const std::string& name) const;
    // The entry for a resolved name. Throws std::runtime_error naming the choices for an unknown
    // name, and saying why for a GPU engine without a GPU (or a build without GPU engines).
    const EngineEntry& find(const std::string& name) const;

    std::unique_ptr<ForceEngine> make_force(const EngineConfig& config) const;
    // `role` names the caller in the error for an engine without a Hermite form.
    std::unique_ptr<HermiteEngine> make_hermite(const EngineConfig& config, const std::string& role) const;

  private:
    std::vector<EngineEntry> entries_;
    std::function<int()> device_count_;
    std::function<std::uint64_t(int)> free_memory_;
};

} // namespace grove
