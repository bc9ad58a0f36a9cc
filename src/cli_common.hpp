// Helpers every subcommand shares: option parsing with --help, recording options into a
// snapshot's /RunParameters, and the engine options that select and configure a force engine.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "src/force_engine.hpp"
#include "src/particles.hpp"

namespace grove {

// Parses argv for `options`; prints help and returns nullopt for --help. Throws
// std::runtime_error with cxxopts' message for unknown or malformed options.
std::optional<cxxopts::ParseResult> parse_command(cxxopts::Options& options, int argc, char** argv);

// Copies every option of `result` (given and defaulted) into run_parameters as "command.option".
void record_options(const cxxopts::ParseResult& result, const std::string& command, ParticleSet& particles);

// Engine selection shared by forces, run, accuracy and bench.
struct EngineOptions {
    std::string engine = "direct";    // direct | tree (GPU if present) or an explicit *-cpu / *-gpu
    std::string precision = "double"; // direct-gpu: float | mixed | double
    double theta = 0.5;
    int nleaf = 64;
    int ncrit = 64;
    GravityParams gravity;
};

void add_engine_options(cxxopts::Options& options);
// Reads the options added by add_engine_options; G defaults to the snapshot's units.
EngineOptions engine_options(const cxxopts::ParseResult& result, const ParticleSet& particles);

// Builds the engine named in `opts`, resolving "direct" and "tree" to the GPU engine when a GPU is
// present and to the CPU engine otherwise. Throws for unknown names or GPU engines without a GPU.
std::unique_ptr<ForceEngine> make_engine(const EngineOptions& opts);

// "a,b,,c" -> {"a", "b", "c"}: the comma-separated lists of bench and accuracy options.
std::vector<std::string> split_list(const std::string& text);

// True when this build has the GPU engines and a CUDA device is visible.
bool gpu_available();

} // namespace grove
