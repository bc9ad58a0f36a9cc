// grove run FILE -o DIR: the command line of a run, parsed into a RunConfig; the run itself is
// run_simulation.cpp.
#include <filesystem>
#include <optional>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/run_simulation.hpp"

namespace grove {

namespace {

namespace fs = std::filesystem;

void add_run_options(cxxopts::Options& options)
{
    options.add_options()("file", "Initial snapshot (HDF5)", cxxopts::value<std::string>())(
        "o,output", "Output directory (created; must not hold a previous run)", cxxopts::value<std::string>())(
        "integrator", "leapfrog or hermite", cxxopts::value<std::string>()->default_value("leapfrog"))(
        "dt", "leapfrog: time step (time units of the snapshot)", cxxopts::value<double>())(
        "eta", "hermite: Aarseth accuracy parameter", cxxopts::value<double>()->default_value("0.01"))(
        "dt-max", "hermite: largest block step, a power of two (diagnostics come at its multiples)",
        cxxopts::value<double>()->default_value("0.0625"))(
        "t-end",
        "Time to stop at (time units): a whole number of --dt (leapfrog) or --dt-max (hermite) steps after the "
        "snapshot's time",
        cxxopts::value<double>())("snapshot-every", "Time between snapshots (default t-end / 10)",
                                  cxxopts::value<double>())(
        "log-every", "Steps (leapfrog) or dt-max intervals (hermite) between diagnostics lines",
        cxxopts::value<int>()->default_value("10"))("checkpoint-every",
                                                    "Wall-clock seconds between checkpoints (DIR/checkpoint.hdf5)",
                                                    cxxopts::value<double>()->default_value("1800"))(
        "checkpoint-steps", "Also checkpoint every K steps or intervals (0: off)",
        cxxopts::value<long long>()->default_value("0"))(
        "restart", "Continue the run in DIR from its checkpoint (takes no other options)",
        cxxopts::value<std::string>());
    add_engine_options(options);
    options.parse_positional({"file"});
    options.positional_help("FILE -o DIR --t-end T (--dt DT | --integrator hermite)");
}

RunConfig run_config(const cxxopts::ParseResult& r, std::vector<std::string> args)
{
    if (!r.count("file")) throw std::runtime_error("missing input snapshot (grove run FILE -o DIR)");
    if (!r.count("output")) throw std::runtime_error("missing output directory (-o DIR)");
    RunConfig c;
    c.input = r["file"].as<std::string>();
    c.output = r["output"].as<std::string>();
    c.integrator.integrator = r["integrator"].as<std::string>();
    if (c.integrator.integrator != "leapfrog" && c.integrator.integrator != "hermite")
        throw std::runtime_error("unknown --integrator '" + c.integrator.integrator + "' (use leapfrog or hermite)");
    const bool hermite = c.integrator.integrator == "hermite";
    if (!hermite && !r.count("dt")) throw std::runtime_error("leapfrog needs --dt");
    if (!r.count("t-end")) throw std::runtime_error("missing --t-end");
    if (r.count("dt")) c.integrator.dt = r["dt"].as<double>();
    c.integrator.eta = r["eta"].as<double>();
    c.integrator.dt_max = r["dt-max"].as<double>();
    c.integrator.engine = engine_config(r, 1.0);
    c.G_given = r.count("G") > 0;
    c.t_end = r["t-end"].as<double>();
    if (r.count("snapshot-every")) c.snapshot_every = r["snapshot-every"].as<double>();
    c.log_every = r["log-every"].as<int>();
    c.checkpoint_every = r["checkpoint-every"].as<double>();
    c.checkpoint_steps = r["checkpoint-steps"].as<long long>();
    c.argv = std::move(args);
    c.recorded = recorded_options(r, "run");
    return c;
}

} // namespace

int command_run(int argc, char** argv)
{
    cxxopts::Options options("grove run",
                             "Evolve a snapshot. Writes DIR/snapshot_NNNN.hdf5, DIR/diagnostics.txt,\n"
                             "DIR/run.yml and a timing breakdown at the end.\n"
                             "  leapfrog: kick-drift-kick with shared step --dt, any engine\n"
                             "  hermite:  4th-order Hermite, block time steps (--eta, --dt-max), direct engines");
    add_run_options(options);
    auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    // A restart re-reads the original command line from the checkpoint.
    std::optional<Checkpoint> restart;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (parsed->count("restart")) {
        if (argc != 3) throw std::runtime_error("--restart DIR takes no other options (they come from the checkpoint)");
        const fs::path cp = fs::path((*parsed)["restart"].as<std::string>()) / "checkpoint.hdf5";
        if (!fs::exists(cp)) throw std::runtime_error("no checkpoint at " + cp.string());
        restart = read_checkpoint(cp.string());
        args = restart->argv;
        std::vector<char*> c_argv{argv[0]};
        for (auto& a : args) c_argv.push_back(a.data());
        parsed = parse_command(options, static_cast<int>(c_argv.size()), c_argv.data());
    }
    return run_simulation(run_config(*parsed, std::move(args)), std::move(restart));
}

} // namespace grove
