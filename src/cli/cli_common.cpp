#include "cli/cli_common.hpp"

#include "core/softening.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/device_list.hpp"
#include "core/memory_check.hpp"
#include "core/softening.hpp"
#include "core/tree_engine.hpp"
#include "engines/engines.hpp"
#include "parallel/communicator.hpp"
#include "tree/mac.hpp"

namespace grove {

std::optional<cxxopts::ParseResult> parse_command(cxxopts::Options& options, int argc, char** argv)
{
    try {
        options.add_options("help")("h,help", "Show this help");
    } catch (const cxxopts::exceptions::option_already_exists&) {
        // parsed before with the same options (grove run --restart parses twice)
    }
    cxxopts::ParseResult result;
    try {
        result = options.parse(argc, argv);
    } catch (const cxxopts::exceptions::exception& e) {
        throw std::runtime_error(std::string(e.what()) + " (see --help)");
    }
    if (result.count("help")) {
        std::cout << options.help() << std::endl;
        return std::nullopt;
    }
    // A word the command does not take is an error, not ignored: "--resident false" would
    // otherwise leave the flag on and run something other than what was asked.
    if (!result.unmatched().empty()) {
        const std::string& word = result.unmatched().front();
        std::string hint;
        if (word == "false" || word == "true" || word == "0" || word == "1")
            hint = " (a flag takes a value after '=': --resident=false)";
        throw std::runtime_error("unexpected argument '" + word + "'" + hint + " (see --help)");
    }
    return result;
}

std::map<std::string, std::string> recorded_options(const cxxopts::ParseResult& result, const std::string& command)
{
    std::map<std::string, std::string> out;
    for (const auto* list : {&result.defaults(), &result.arguments()})
        for (const auto& kv : *list)
            if (kv.key() != "help") out[command + "." + kv.key()] = kv.value();
    return out;
}

void add_input_units_option(cxxopts::Options& options)
{
    options.add_options()("units",
                          "units of an input in a format that holds none: nbody (G = 1; tipsy's default) or gadget "
                          "(kpc, km/s, 1e10 Msun; GADGET binary's default)",
                          cxxopts::value<std::string>());
}

std::optional<Units> input_units(const cxxopts::ParseResult& result)
{
    if (!result.count("units")) return std::nullopt;
    try {
        return units_by_name(result["units"].as<std::string>());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("--units: ") + e.what());
    }
}

std::vector<std::string> without_options(const std::vector<std::string>& args, const std::vector<std::string>& names)
{
    std::vector<std::string> out;
    for (std::size_t k = 0; k < args.size(); ++k) {
        bool dropped = false;
        for (const std::string& name : names) {
            const std::string flag = "--" + name;
            if (args[k] == flag) {
                ++k; // and its value
                dropped = true;
            } else if (args[k].rfind(flag + "=", 0) == 0) {
                dropped = true;
            }
            if (dropped) break;
        }
        if (!dropped) out.push_back(args[k]);
    }
    return out;
}

void add_engine_options(cxxopts::Options& options)
{
    options.add_options("engine")(
        "engine", "Force engine: direct, tree (GPU when present, else CPU), direct-cpu, tree-cpu, direct-gpu, tree-gpu",
        cxxopts::value<std::string>()->default_value("direct"))("precision",
                                                                "direct-gpu arithmetic: float, mixed or double",
                                                                cxxopts::value<std::string>()->default_value("double"))(
        "theta", "Tree opening angle, 0 < theta <= 1.1547 (2/sqrt(3); larger ones all give the same lists)",
        cxxopts::value<double>()->default_value("0.5"))(
        "mac",
        "Tree opening criterion: geometric (theta) or relative (open a cell when G M l^2 / d^4 > alpha |a|, "
        "|a| from the previous step)",
        cxxopts::value<std::string>()->default_value("geometric"))(
        "alpha", "Tree: the relative criterion's error bound, 0 < alpha <= 1",
        cxxopts::value<double>()->default_value("0.001"))(
        "theta-max",
        "Tree, relative criterion: also open every cell that the geometric criterion at this angle opens, "
        "0 < theta-max <= 1.1547 (default: no bound but the floor); a bound near 0.7 keeps the energy "
        "drift of galaxy runs at the geometric criterion's for the same median error",
        cxxopts::value<double>())("nleaf", "Tree: most particles in a leaf cell",
                                  cxxopts::value<int>()->default_value(std::to_string(kDefaultNleaf)))(
        "ncrit", "Tree: most particles in a group that walks the tree together (" GROVE_AUTO_NCRIT_HELP ")",
        cxxopts::value<int>()->default_value(std::to_string(kDefaultNcrit)))(
        "rebuild-every", "Tree: build the tree every K force evaluations and refit it in between",
        cxxopts::value<int>()->default_value("1"))(
        "lookahead",
        "tree-gpu, leapfrog: build the next tree from predicted positions while the GPU evaluates, and only "
        "refit it at the next step (--lookahead=false: build every step)",
        cxxopts::value<bool>()->default_value("true"))(
        "resident",
        "tree-gpu, leapfrog with --lookahead and the geometric criterion: keep the particles on the GPU and run "
        "whole steps there (--resident=false: positions and forces cross to the host every step)",
        cxxopts::value<bool>()->default_value("true"))("eps", "Plummer softening length (length units; 0 allowed)",
                                                       cxxopts::value<double>()->default_value("0"))(
        "eps-type",
        "Softening by particle type, e.g. halo=0.1,disk=0.05,bulge=0.02 or 1=0.1,2=0.05 (types not named take "
        "--eps); a pair is softened with sqrt((eps_i^2 + eps_j^2) / 2)",
        cxxopts::value<std::string>())("G", "Gravitational constant (default: from the snapshot's units)",
                                       cxxopts::value<double>())(
        "gpus",
        "direct-gpu: the GPUs that share each force evaluation, e.g. 0,2 (default: every visible one; "
        "under mpirun, each rank its own)",
        cxxopts::value<std::string>())(
        "gpu-memory",
        "GPU engines: the most device memory to use, e.g. 40G (default: what the device has free); a job that "
        "cannot fit is refused before it starts, and tree-gpu walks its lists in batches that fit",
        cxxopts::value<std::string>())(
        "list-memory",
        "Tree: the most memory the interaction lists may hold at once, e.g. 2G (default: from the memory "
        "there is); the groups are walked and evaluated in batches that fit",
        cxxopts::value<std::string>());
}

void set_eps_type_option(const std::string& text, GravityParams& gravity)
{
    try {
        parse_softening_types(text, gravity, "--eps-type");
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
    }
}

EngineConfig engine_config(const cxxopts::ParseResult& result, double default_G)
{
    EngineConfig o;
    o.engine = result["engine"].as<std::string>();
    o.precision = result["precision"].as<std::string>();
    o.theta = result["theta"].as<double>();
    o.mac = result["mac"].as<std::string>();
    o.alpha = result["alpha"].as<double>();
    if (result.count("theta-max")) o.theta_max = result["theta-max"].as<double>();
    o.nleaf = result["nleaf"].as<int>();
    o.ncrit = result["ncrit"].as<int>();
    o.rebuild_every = result["rebuild-every"].as<int>();
    o.lookahead = result["lookahead"].as<bool>();
    o.resident = result["resident"].as<bool>();
    if (o.rebuild_every != 1) o.lookahead = false; // refits between builds: nothing to look ahead for
    if (result.count("gpu-memory")) o.gpu_memory = parse_bytes(result["gpu-memory"].as<std::string>(), "--gpu-memory");
    if (result.count("list-memory"))
        o.list_memory = parse_bytes(result["list-memory"].as<std::string>(), "--list-memory");
    o.gravity.eps = result["eps"].as<double>();
    if (result.count("eps-type")) set_eps_type_option(result["eps-type"].as<std::string>(), o.gravity);
    o.gravity.G = result.count("G") ? result["G"].as<double>() : default_G;
    try {
        o.validate(EngineConfig::OptionNames::command_line);
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
    }
    // Under mpirun, one GPU per rank on each node (docs/user-guide.md).
    const Communicator& comm = Communicator::world();
    if (result.count("gpus")) {
        if (comm.size() > 1)
            throw std::runtime_error(
                "--gpus is for one process; under mpirun each rank takes the GPU of its local rank");
        o.devices = parse_gpus(result["gpus"].as<std::string>());
        if (engines().resolve(o.engine) != "direct-gpu")
            throw std::runtime_error("--gpus is for the direct-gpu engine (this run uses " +
                                     engines().resolve(o.engine) + ")");
    }
    if (comm.size() > 1 && engines().device_count() > 0) o.device = comm.local_rank() % engines().device_count();
    return o;
}

std::uint64_t parse_bytes(const std::string& text, const std::string& option)
{
    const auto refuse = [&] {
        return std::runtime_error(option + " takes a size in bytes or with K, M, G or T, e.g. 40G (got '" + text +
                                  "')");
    };
    std::size_t used = 0;
    double value = 0;
    try {
        value = std::stod(text, &used);
    } catch (const std::exception&) {
        throw refuse();
    }
    const std::string unit = text.substr(used);
    double scale = 1;
    if (unit == "K" || unit == "k")
        scale = 1024.0;
    else if (unit == "M")
        scale = 1024.0 * 1024;
    else if (unit == "G")
        scale = 1024.0 * 1024 * 1024;
    else if (unit == "T")
        scale = 1024.0 * 1024 * 1024 * 1024;
    else if (!unit.empty())
        throw refuse();
    const double bytes = value * scale;
    if (!(bytes >= 1) || !(bytes < 1.8e19)) throw refuse();
    return static_cast<std::uint64_t>(bytes);
}

void check_device_plan(Workload job, std::size_t n, const std::string& what, const std::string& engine,
                       std::uint64_t gpu_memory, int device)
{
    if (planned_device_bytes_per_particle(job, engine) == 0) return;
    const std::uint64_t free_bytes = engines().gpu_available() ? engines().device_free_memory(device) : 0;
    std::uint64_t room = gpu_memory;
    if (free_bytes > 0) room = room > 0 ? std::min(room, free_bytes) : free_bytes;
    check_device_memory_plan(job, n, what, engine, room);
}

MemoryUse memory_use(const ForceEngine* engine, std::size_t n)
{
    MemoryUse use;
    if (n == 0) return use;
    const TreeEngine* tree = engine ? as_tree_engine(*engine) : nullptr;
    const DeviceMemory device = tree ? tree->device_memory() : DeviceMemory{};
    use.device_per_particle = static_cast<double>(device.held - device.lists) / static_cast<double>(n);
    use.list_bytes = static_cast<double>(device.lists);
    use.list_batches = device.list_batches;
    use.host_per_particle = static_cast<double>(peak_resident_bytes()) / static_cast<double>(n);
    return use;
}

std::string describe(const MemoryUse& use)
{
    char text[256];
    if (use.device_per_particle > 0)
        std::snprintf(text, sizeof text,
                      "memory: device %.0f bytes per particle besides %.3g GB of interaction lists (walked in %d "
                      "batch%s); host %.0f bytes per particle at its peak so far",
                      use.device_per_particle, use.list_bytes * 1e-9, use.list_batches,
                      use.list_batches == 1 ? "" : "es", use.host_per_particle);
    else
        std::snprintf(text, sizeof text, "memory: host %.0f bytes per particle at its peak so far",
                      use.host_per_particle);
    return text;
}

bool domain_cut_by_work(const std::string& value)
{
    if (value != "counts" && value != "work")
        throw std::runtime_error("--domain-cut takes counts or work (got '" + value + "')");
    return value == "work";
}

std::vector<int> parse_gpus(const std::string& text)
{
    const std::optional<std::vector<int>> devices = parse_device_list(text);
    if (!devices || devices->empty())
        throw std::runtime_error("--gpus takes device numbers separated by commas (got '" + text + "')");
    return *devices;
}

std::vector<std::string> split_list(const std::string& text)
{
    std::vector<std::string> out;
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');)
        if (!item.empty()) out.push_back(item);
    return out;
}

void refuse_output_over_input(const std::string& output, const std::string& input)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(output, ec) && fs::exists(input, ec) && fs::equivalent(output, input, ec))
        throw std::runtime_error("the output " + output + " is the input " + input + "; choose another -o");
}

void check_writable(const std::string& path)
{
    const std::string probe = path + ".tmp." + std::to_string(::getpid()); // cleaned up like any temporary
    std::FILE* f = std::fopen(probe.c_str(), "wb");
    if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    std::fclose(f);
    std::remove(probe.c_str());
}

bool gpu_available()
{
    return engines().gpu_available();
}

void report_engine_choice(const std::string& engine)
{
    if (engine != "direct" && engine != "tree") return;
    const bool gpu = gpu_available();
    std::cerr << "grove: engine " << engine << " -> " << engines().resolve(engine)
              << (gpu ? " (GPU found)" : " (no GPU found; running on the CPU)") << std::endl;
}

std::unique_ptr<ForceEngine> make_force_engine(const EngineConfig& config)
{
    report_engine_choice(config.engine);
    return engines().make_force(config);
}

} // namespace grove
