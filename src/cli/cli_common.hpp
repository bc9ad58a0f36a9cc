// Helpers every subcommand shares: option parsing with --help, recording options into a
// snapshot's /RunParameters, and the engine options that select and configure a force engine.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "core/engine_registry.hpp"
#include "core/force_engine.hpp"
#include "core/particles.hpp"

namespace grove {

// Parses argv for `options`; prints help and returns nullopt for --help. Throws
// std::runtime_error with cxxopts' message for unknown or malformed options.
std::optional<cxxopts::ParseResult> parse_command(cxxopts::Options& options, int argc, char** argv);

// Every option of `result` (given and defaulted) as "command.option" -> value, for the
// /RunParameters of the files a command writes.
std::map<std::string, std::string> recorded_options(const cxxopts::ParseResult& result, const std::string& command);

void add_engine_options(cxxopts::Options& options);
// Reads and checks the options added by add_engine_options; G is --G when given, else default_G
// (the snapshot's units).
EngineConfig engine_config(const cxxopts::ParseResult& result, double default_G);

// The force engine of `config` from this build's registry (engines/engines.hpp); says on stderr
// which engine "direct" or "tree" became. Throws for unknown names or GPU engines without a GPU.
std::unique_ptr<ForceEngine> make_force_engine(const EngineConfig& config);

// "a,b,,c" -> {"a", "b", "c"}: the comma-separated lists of bench and accuracy options.
std::vector<std::string> split_list(const std::string& text);
// --gpus: device numbers separated by commas, at least one; throws with the option's name.
std::vector<int> parse_gpus(const std::string& text);

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
