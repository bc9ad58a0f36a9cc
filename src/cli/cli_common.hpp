// Helpers every subcommand shares: option parsing with --help, recording options into a
// snapshot's /RunParameters, and the engine options that select and configure a force engine.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "core/units.hpp"

#include "core/engine_registry.hpp"
#include "core/force_engine.hpp"
#include "core/memory_plan.hpp"
#include "core/particles.hpp"

namespace grove {

// Parses argv for `options`; prints help and returns nullopt for --help. Throws
// std::runtime_error with cxxopts' message for unknown or malformed options.
std::optional<cxxopts::ParseResult> parse_command(cxxopts::Options& options, int argc, char** argv);

// Every option of `result` (given and defaulted) as "command.option" -> value, for the
// /RunParameters of the files a command writes.
std::map<std::string, std::string> recorded_options(const cxxopts::ParseResult& result, const std::string& command);

// --units: the units of an input in a format that holds none (tipsy, GADGET binary), and the
// value given, if any (read_snapshot's default otherwise); throws naming the accepted ones.
void add_input_units_option(cxxopts::Options& options);
std::optional<Units> input_units(const cxxopts::ParseResult& result);

// A command line without the options `names` (--name VALUE or --name=VALUE, each name without its
// dashes), the rest in order.
std::vector<std::string> without_options(const std::vector<std::string>& args, const std::vector<std::string>& names);

void add_engine_options(cxxopts::Options& options);
// Reads and checks the options added by add_engine_options; G is --G when given, else default_G
// (the snapshot's units).
EngineConfig engine_config(const cxxopts::ParseResult& result, double default_G);

// --eps-type's lengths into `gravity` (core/softening.hpp); throws std::runtime_error with the
// option's error.
void set_eps_type_option(const std::string& text, GravityParams& gravity);

// The force engine of `config` from this build's registry (engines/engines.hpp); says on stderr
// which engine "direct" or "tree" became. Throws for unknown names or GPU engines without a GPU.
std::unique_ptr<ForceEngine> make_force_engine(const EngineConfig& config);

// "a,b,,c" -> {"a", "b", "c"}: the comma-separated lists of bench and accuracy options.
std::vector<std::string> split_list(const std::string& text);
// --gpus: device numbers separated by commas, at least one; throws with the option's name.
std::vector<int> parse_gpus(const std::string& text);

// --domain-cut, under --decomposition domains: where the domains follow the particles, cut to
// equal particle counts ("counts") or to equal work ("work": the pairs each rank's engine summed
// in its last step). Returns whether by work; throws std::runtime_error for another value.
bool domain_cut_by_work(const std::string& value);
constexpr const char* kDomainCutHelp =
    "under --decomposition domains, where the domains follow the particles: cut to equal particle counts "
    "(counts) or to equal work, the pairs each rank's tree summed in its last step (work)";

// What a job holds for n particles: the engine's device bytes per particle besides its
// interaction lists, the lists, and the process's peak resident host memory per particle.
struct MemoryUse {
    double device_per_particle = 0, host_per_particle = 0;
    double list_bytes = 0;
    int list_batches = 0;
};
MemoryUse memory_use(const ForceEngine* engine, std::size_t n);
// One line of it ("memory: ..."), for the start of a run and the benchmarks.
std::string describe(const MemoryUse& use);
// A memory size: bytes, or a number with K, M, G or T (powers of 1024), e.g. 512M, 70G, 1.5T.
// `option` names it in the error for anything else.
std::uint64_t parse_bytes(const std::string& text, const std::string& option);
// The device side of a job's memory plan (core/memory_plan.hpp) for `engine` (a resolved name):
// against gpu_memory (--gpu-memory) where given, and what the device has free where it is known.
void check_device_plan(Workload job, std::size_t n, const std::string& what, const std::string& engine,
                       std::uint64_t gpu_memory, int device);

// Throws std::runtime_error when `output` names the same file as `input` (writing it would
// destroy the input before it is read again, or leave a result under the input's name).
void refuse_output_over_input(const std::string& output, const std::string& input);

// Throws std::runtime_error naming `path` when a file cannot be created there (checked before
// long work, so that a bad -o fails at once rather than after it).
void check_writable(const std::string& path);

// True when this build has the GPU engines and a CUDA device is visible.
bool gpu_available();

// Prints which engine "direct" or "tree" resolves to on this machine (stderr); other names as is.
void report_engine_choice(const std::string& engine);

} // namespace grove
