// grove run FILE -o DIR: the command line of a run, parsed into a RunConfig; the run itself is
// run_simulation.cpp.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/run_simulation.hpp"
#include "engines/engines.hpp"
#include "integrators/block_leapfrog.hpp"
#include "parallel/domain_files.hpp"

namespace grove {

namespace {

namespace fs = std::filesystem;

void add_run_options(cxxopts::Options& options)
{
    options.add_options()("file", "Initial snapshot (HDF5)", cxxopts::value<std::string>())(
        "o,output", "Output directory (created; must not hold a previous run)",
        cxxopts::value<std::string>())("integrator", "leapfrog, hermite (4th order) or hermite6 (6th order)",
                                       cxxopts::value<std::string>()->default_value("leapfrog"))(
        "dt", "leapfrog: time step (time units of the snapshot)", cxxopts::value<double>())(
        "timestep",
        "leapfrog: shared (every particle steps by --dt) or block (each particle by --dt-max / 2^k, from "
        "GADGET's criterion sqrt(2 --eta eps / |a|); docs/block-timesteps.md)",
        cxxopts::value<std::string>()->default_value("shared"))(
        "eta",
        "hermite: Aarseth accuracy parameter (default 0.01; hermite6: 0.1, in eta ((|a||a2| + |a1|^2) / "
        "(|a3||a5| + |a4|^2))^(1/6)); --timestep block: GADGET's (default 0.025)",
        cxxopts::value<double>())(
        "eta-dyn",
        "--timestep block: cap each step at this times the dynamical time sqrt(r^3 / (G M(<r))), r about the "
        "centre of mass (default 0.2; 0: GADGET's criterion alone; docs/block-timesteps.md)",
        cxxopts::value<double>())("dt-max",
                                  "hermite: largest block step, a power of two (diagnostics come at its multiples); "
                                  "--timestep block: the longest step",
                                  cxxopts::value<double>()->default_value("0.0625"))(
        "t-end",
        "Time to stop at (time units): a whole number of --dt (leapfrog) or --dt-max (hermite) steps after the "
        "snapshot's time",
        cxxopts::value<double>())("snapshot-every", "Time between snapshots (default t-end / 10)",
                                  cxxopts::value<double>())(
        "log-every", "Steps (leapfrog) or dt-max intervals (hermite) between diagnostics lines",
        cxxopts::value<int>()->default_value("10"))(
        "checkpoint-every",
        "Wall-clock seconds between checkpoints (DIR/checkpoint.hdf5; with --timestep block one falls due "
        "within a dt_max too, after the tick under way)",
        cxxopts::value<double>()->default_value("1800"))("checkpoint-steps",
                                                         "Also checkpoint every K steps or intervals (0: off)",
                                                         cxxopts::value<long long>()->default_value("0"))(
        "decomposition",
        "under mpirun, the tree leapfrog: replicated (every rank holds every particle and evaluates a share "
        "of the groups: bit-identical to one process) or domains (each rank holds one Peano-Hilbert domain, cut anew "
        "every step, and evaluates it on its tree with the other domains' locally essential trees; the "
        "files gathered on the first rank)",
        cxxopts::value<std::string>()->default_value("replicated"))(
        "domain-cut", kDomainCutHelp, cxxopts::value<std::string>()->default_value("counts"))(
        "restart",
        "Continue the run in DIR from its checkpoint (every finished or interrupted run leaves one); may "
        "give a later --t-end to extend it and new --snapshot-every, --log-every, --checkpoint-every, "
        "--checkpoint-steps",
        cxxopts::value<std::string>())(
        "target",
        "tree leapfrog: choose theta (or with --mac relative alpha) at the start for this error, pQ=VALUE "
        "(e.g. p50=2e-4, p99=1e-3): the largest whose relative acceleration error against the direct sum "
        "meets it on a sample, as grove accuracy --target finds it; run.yml reports the value and the error",
        cxxopts::value<std::string>())("target-component",
                                       "--target: the component it applies to (all, bulge, "
                                       "disk, halo...)",
                                       cxxopts::value<std::string>()->default_value("all"))(
        "target-sample", "--target: particles compared with the direct sum",
        cxxopts::value<long long>()->default_value("4096"));
    add_engine_options(options);
    add_input_units_option(options);
    options.parse_positional({"file"});
    options.positional_help("FILE -o DIR --t-end T (--dt DT | --integrator hermite)");
}

// What a restart may change.
const char* const kRestartOptions[] = {"t-end", "snapshot-every", "log-every", "checkpoint-every", "checkpoint-steps"};

// `args` with each option of `overrides` replacing its earlier value (--name VALUE or --name=VALUE).
std::vector<std::string> with_options(const std::vector<std::string>& args,
                                      const std::vector<std::pair<std::string, std::string>>& overrides)
{
    std::vector<std::string> names;
    for (const auto& [name, value] : overrides) names.push_back(name);
    std::vector<std::string> out = without_options(args, names);
    for (const auto& [name, value] : overrides) {
        out.push_back("--" + name);
        out.push_back(value);
    }
    return out;
}

RunConfig run_config(const cxxopts::ParseResult& r, std::vector<std::string> args)
{
    if (!r.count("file")) throw std::runtime_error("missing input snapshot (grove run FILE -o DIR)");
    if (!r.count("output")) throw std::runtime_error("missing output directory (-o DIR)");
    RunConfig c;
    c.input = r["file"].as<std::string>();
    c.output = r["output"].as<std::string>();
    c.integrator.integrator = r["integrator"].as<std::string>();
    if (c.integrator.integrator != "leapfrog" && c.integrator.integrator != "hermite" &&
        c.integrator.integrator != "hermite6")
        throw std::runtime_error("unknown --integrator '" + c.integrator.integrator +
                                 "' (use leapfrog, hermite or hermite6)");
    const bool hermite = c.integrator.integrator != "leapfrog";
    if (hermite && r.count("gpus"))
        throw std::runtime_error("--gpus: the Hermite integrators compute on one GPU (the leapfrog on several)");
    c.integrator.timestep = r["timestep"].as<std::string>();
    if (c.integrator.timestep != "shared" && c.integrator.timestep != "block")
        throw std::runtime_error("unknown --timestep '" + c.integrator.timestep + "' (use shared or block)");
    const bool block = c.integrator.timestep == "block";
    if (block && hermite)
        throw std::runtime_error("--timestep block is the leapfrog's; Hermite has block steps of its own");
    if (block && r.count("dt")) throw std::runtime_error("--timestep block takes --dt-max and --eta, not --dt");
    if (block && !r.count("dt-max")) throw std::runtime_error("--timestep block needs --dt-max");
    if (!hermite && !block && !r.count("dt")) throw std::runtime_error("leapfrog needs --dt");
    if (!r.count("t-end")) throw std::runtime_error("missing --t-end");
    if (r.count("dt")) c.integrator.dt = r["dt"].as<double>();
    // Aarseth's parameter has another scale at 6th order (grove run --help).
    c.integrator.eta = r.count("eta")                          ? r["eta"].as<double>()
                       : c.integrator.integrator == "hermite6" ? 0.1
                       : block                                 ? kDefaultBlockEta
                                                               : 0.01;
    c.integrator.dt_max = r["dt-max"].as<double>();
    if (!block && r.count("eta-dyn")) throw std::runtime_error("--eta-dyn is --timestep block's");
    c.integrator.eta_dyn = r.count("eta-dyn") ? r["eta-dyn"].as<double>() : block ? kDefaultEtaDyn : 0;
    c.integrator.engine = engine_config(r, 1.0);
    c.G_given = r.count("G") > 0;
    c.input_units = input_units(r);
    c.t_end = r["t-end"].as<double>();
    if (r.count("snapshot-every")) c.snapshot_every = r["snapshot-every"].as<double>();
    c.log_every = r["log-every"].as<int>();
    c.checkpoint_every = r["checkpoint-every"].as<double>();
    c.checkpoint_steps = r["checkpoint-steps"].as<long long>();
    const std::string decomposition = r["decomposition"].as<std::string>();
    if (decomposition != "replicated" && decomposition != "domains")
        throw std::runtime_error("--decomposition takes replicated or domains (got '" + decomposition + "')");
    c.domains = decomposition == "domains";
    c.cut_by_work = domain_cut_by_work(r["domain-cut"].as<std::string>());
    if (c.cut_by_work && !c.domains) throw std::runtime_error("--domain-cut work needs --decomposition domains");
    if (c.domains && (hermite || block))
        throw std::runtime_error("--decomposition domains: the leapfrog with one shared step (--dt)");
    if (c.domains && engines().resolve(c.integrator.engine.engine).rfind("tree", 0) != 0)
        throw std::runtime_error("--decomposition domains: a tree engine (tree, tree-cpu, tree-gpu), not " +
                                 engines().resolve(c.integrator.engine.engine));
    if (r.count("target")) {
        if (hermite) throw std::runtime_error("--target chooses the opening of a tree leapfrog, not of a Hermite run");
        if (r.count("theta") || r.count("alpha"))
            throw std::runtime_error(
                "--target chooses --theta (or with --mac relative --alpha): give one or the other");
        RunTarget t;
        t.target = parse_error_target(r["target"].as<std::string>());
        t.target.component = r["target-component"].as<std::string>();
        const long long sample = r["target-sample"].as<long long>();
        if (sample < 1) throw std::runtime_error("--target-sample must be >= 1");
        t.sample = static_cast<std::size_t>(sample);
        c.target = t;
    }
    c.argv = std::move(args);
    c.recorded = recorded_options(r, "run");
    return c;
}

} // namespace

int command_run(int argc, char** argv)
{
    cxxopts::Options options(
        "grove run", "Evolve a snapshot. Writes DIR/snapshot_NNNN.hdf5, DIR/diagnostics.txt,\n"
                     "DIR/run.yml and a timing breakdown at the end.\n"
                     "  leapfrog: kick-drift-kick with shared step --dt, any engine\n"
                     "  hermite:  4th-order Hermite, block time steps (--eta, --dt-max), direct engines\n"
                     "  hermite6: 6th-order Hermite (Nitadori & Makino 2008), block time steps, direct engines (GPU: "
                     "double precision)");
    add_run_options(options);
    auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    // A restart re-reads the original command line from the checkpoint; it may change when the run
    // ends and how often it writes (kRestartOptions), nothing else.
    std::optional<Checkpoint> restart;
    std::vector<std::string> args(argv + 1, argv + argc);
    std::vector<std::pair<std::string, std::string>> overrides;
    std::string restart_dir, restart_path;
    if (parsed->count("restart")) {
        for (const auto& kv : parsed->arguments()) {
            if (kv.key() == "restart") continue;
            if (std::find(std::begin(kRestartOptions), std::end(kRestartOptions), kv.key()) ==
                std::end(kRestartOptions))
                throw std::runtime_error("--restart DIR takes only --t-end, --snapshot-every, --log-every, "
                                         "--checkpoint-every and --checkpoint-steps (the rest comes from the "
                                         "checkpoint); got --" +
                                         kv.key());
            overrides.emplace_back(kv.key(), kv.value());
        }
        restart_dir = (*parsed)["restart"].as<std::string>();
        const fs::path cp = fs::path(restart_dir) / "checkpoint.hdf5";
        if (!fs::exists(cp)) throw std::runtime_error("no checkpoint at " + cp.string());
        restart_path = cp.string();
        args = with_options(read_checkpoint_record(restart_path).argv, overrides);
        std::vector<char*> c_argv{argv[0]};
        for (auto& a : args) c_argv.push_back(a.data());
        parsed = parse_command(options, static_cast<int>(c_argv.size()), c_argv.data());
    }
    RunConfig config = run_config(*parsed, std::move(args));
    if (config.integrator.timestep == "block" && !parsed->count("eta-dyn")) {
        // The cap goes into the command line that the checkpoint keeps, so that a restart takes
        // the run's own even if the default moves; a block run's checkpoint without it was made
        // before the cap existed, and goes on as it began, without one.
        if (!restart_path.empty()) config.integrator.eta_dyn = 0;
        char value[32];
        std::snprintf(value, sizeof value, "%.17g", config.integrator.eta_dyn);
        config.argv.insert(config.argv.end(), {"--eta-dyn", value});
    }
    if (!restart_path.empty()) {
        // On domains each rank reads its share of the particles; otherwise every rank all of them.
        restart = config.domains ? read_checkpoint_on_domains(restart_path, Communicator::world())
                                 : read_checkpoint(restart_path);
        config.output = restart_dir; // the directory as named now, wherever the run began
        config.cadence_changed =
            std::any_of(overrides.begin(), overrides.end(), [](const auto& o) { return o.first == "snapshot-every"; });
    }
    return run_simulation(config, std::move(restart));
}

} // namespace grove
