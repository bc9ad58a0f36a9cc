// grove accuracy FILE --theta LO:HI:STEP (or --mac relative --alpha LIST): tree-versus-direct
// force errors over opening angles or error bounds.
#include <cmath>
#include <cstdio>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/memory_plan.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "core/softening.hpp"
#include "engines/engines.hpp"
#include "parallel/communicator.hpp"
#include "studies/accuracy_study.hpp"

namespace grove {

namespace {

struct AccuracyCommand {
    std::string input, output;
    AccuracyOptions options;
    bool G_given = false;       // -G given; else G comes from the snapshot's units
    std::optional<Units> units; // --units, for an input that holds none
};

AccuracyCommand accuracy_command(const cxxopts::ParseResult& r)
{
    if (!r.count("file")) throw std::runtime_error("missing input snapshot (grove accuracy FILE)");

    AccuracyCommand c;
    c.input = r["file"].as<std::string>();
    c.output = r["output"].as<std::string>();
    refuse_output_over_input(c.output, c.input);
    check_writable(c.output);
    c.G_given = r.count("G") > 0;
    c.units = input_units(r);
    AccuracyOptions& o = c.options;
    try {
        o.mac = parse_mac(r["mac"].as<std::string>());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("--") + e.what());
    }
    if (o.mac == MacKind::geometric && r.count("alpha"))
        throw std::runtime_error("--alpha belongs to --mac relative; the geometric criterion sweeps --theta");
    if (o.mac == MacKind::relative && r.count("theta"))
        throw std::runtime_error("--theta belongs to --mac geometric; the relative criterion sweeps --alpha");
    if (r.count("theta-max")) {
        if (o.mac != MacKind::relative)
            throw std::runtime_error("--theta-max bounds --mac relative; the geometric criterion sweeps --theta");
        o.theta_max = r["theta-max"].as<double>();
        try {
            check_theta_max(o.theta_max);
        } catch (const std::invalid_argument& e) {
            throw std::runtime_error(std::string("--") + e.what());
        }
    }
    o.values = o.mac == MacKind::geometric ? parse_sweep(r["theta"].as<std::string>(), o.mac)
                                           : parse_sweep(r["alpha"].as<std::string>(), o.mac);
    o.nleaf = r["nleaf"].as<int>();
    o.ncrit = r["ncrit"].as<int>();
    o.eps = r["eps"].as<double>();
    if (r.count("eps-type")) {
        GravityParams g = o.gravity();
        set_eps_type_option(r["eps-type"].as<std::string>(), g);
        o.eps_type = g.eps_type;
    }
    o.G = c.G_given ? r["G"].as<double>() : 1.0;
    const long long sample = r["sample"].as<long long>();
    if (sample < 0) throw std::runtime_error("--sample must be >= 0");
    o.sample = static_cast<std::size_t>(sample);
    o.repeat = r["repeat"].as<int>();
    o.seed = r["seed"].as<unsigned long long>();
    if (r.count("target")) {
        o.target = parse_error_target(r["target"].as<std::string>());
        o.target->component = r["target-component"].as<std::string>();
    }
    if (o.nleaf < 1 || o.ncrit < 0)
        throw std::runtime_error("--nleaf must be >= 1 and --ncrit >= 1, or 0 for the size by the number of particles");
    if (!(o.eps >= 0) || !(o.G > 0)) throw std::runtime_error("--eps must be >= 0 and -G > 0");
    if (o.repeat < 1) throw std::runtime_error("--repeat must be >= 1");
    const std::string engine = engines().resolve(r["engine"].as<std::string>());
    if (engine != "tree-cpu" && engine != "tree-gpu")
        throw std::runtime_error("--engine must be tree, tree-cpu or tree-gpu (got '" + engine + "')");
    engines().find(engine); // a GPU engine without a GPU is an error here, before any work
    o.tree_engine = engine;
    o.direct_engine = engines().resolve("direct");
    const std::string decomposition = r["decomposition"].as<std::string>();
    if (decomposition != "replicated" && decomposition != "domains")
        throw std::runtime_error("--decomposition takes replicated or domains (got '" + decomposition + "')");
    o.domains = decomposition == "domains";

    return c;
}

int run_accuracy(const AccuracyCommand& c)
{
    const std::string& in = c.input;
    const std::size_t n = snapshot_particle_count(in);
    check_memory_plan(Workload::accuracy, n, "grove accuracy on " + in, c.options.tree_engine);
    check_device_plan(Workload::accuracy, n, "grove accuracy on " + in, c.options.tree_engine, 0, -1);
    const ParticleSet p = read_snapshot(in, c.units);
    AccuracyOptions o = c.options;
    if (!c.G_given) o.G = p.units.G;
    if (!(o.G > 0)) throw std::runtime_error("-G must be > 0");
    const Communicator& comm = Communicator::world();
    if (comm.is_root())
        std::fprintf(stderr, "grove accuracy: %zu particles, %s against %s (double)%s\n", p.size(),
                     o.tree_engine.c_str(), o.direct_engine.c_str(), o.sample ? ", sampled" : "");
    const AccuracyStudy s = run_accuracy_study(p, o);
    const std::string& out = c.output;
    if (!comm.is_root()) return 0; // every rank has the study; the first writes it
    write_accuracy_hdf5(out, s, o, in);

    const std::string by_type = softening_types_text(o.gravity());
    std::printf("%s: N = %zu, compared %zu, eps %g%s%s, nleaf %d, ncrit %d; %s vs %s; host build + upload %.3f s; "
                "direct %.3f s%s\n\n",
                in.c_str(), p.size(), s.targets.size(), o.eps, by_type.empty() ? "" : " by type ", by_type.c_str(),
                o.nleaf, resolved_ncrit(o.ncrit, p.size()), o.tree_engine.c_str(), o.direct_engine.c_str(),
                s.build_seconds, s.direct_seconds, o.sample ? " (scaled to all N)" : "");
    // The cost side of each row: interactions per particle (what the error is bought with), the
    // walk and evaluation alone, and end to end with the host build and upload.
    const char* param = OpeningCriterion{o.mac}.parameter_name();
    if (o.domains)
        std::printf(
            "on %d Peano-Hilbert domains with locally essential trees: each row's times are one computation over the "
            "domains, the tree builds, LET walks and exchange included\n\n",
            comm.size());
    char bound[64] = "";
    if (o.theta_max < kMaxTheta) std::snprintf(bound, sizeof bound, ", bounded by theta-max %g", o.theta_max);
    if (o.mac == MacKind::relative)
        std::printf("relative criterion%s: |a| from one geometric pass at theta = %.2f (%.1f ms%s, not in the rows: a "
                    "run takes the previous step's)\n\n",
                    bound, kFirstPassTheta, 1e3 * s.first_pass_seconds,
                    o.domains ? " with the first row's evaluation" : "");
    std::printf("| %s | component | p50 | p90 | p99 | p99.9 | max | pot p50 | nodes/group | leaves/group | "
                "interactions/particle | walk+eval ms | end-to-end ms | speed-up vs direct |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                param);
    for (const auto& t : s.results) {
        const double tree_s = t.evaluate_seconds + s.build_seconds;
        const double interactions = t.stats.node_interactions_per_particle + t.stats.leaf_interactions_per_particle;
        for (const auto& e : t.errors) {
            const auto& q = e.acc_percentiles;
            std::printf("| %.3g | %s | %.2e | %.2e | %.2e | %.2e | %.2e | %.2e | %.0f | %.0f | %.0f | %.1f | %.1f | "
                        "%.0f |\n",
                        t.value, e.component.c_str(), q[0], q[1], q[2], q[3], q[4], e.pot_percentiles[0],
                        t.stats.nodes_per_group, t.stats.leaves_per_group, interactions, 1e3 * t.evaluate_seconds,
                        1e3 * tree_s, s.direct_seconds / tree_s);
        }
    }
    if (std::isfinite(s.fit_amplitude) && std::isfinite(s.fit_exponent))
        std::printf("\nmedian error (all particles) ~ %.3g * %s^%.2f (least squares in log-log)\n", s.fit_amplitude,
                    param, s.fit_exponent);
    else
        std::printf("\nno power-law fit of the median error (it needs two or more %s values with errors > 0)\n", param);
    if (s.search) {
        const TargetSearch& t = *s.search;
        const double interactions =
            t.best.stats.node_interactions_per_particle + t.best.stats.leaf_interactions_per_particle;
        if (t.reachable)
            std::printf("target p%g <= %.3g (%s): %s = %.4g gives p%g = %.3e with %.0f interactions per particle "
                        "(walk+eval %.1f ms); %zu evaluations\n",
                        t.target.percentile, t.target.value, t.target.component.c_str(), param, t.best.value,
                        t.target.percentile, t.best_error, interactions, 1e3 * t.best.evaluate_seconds,
                        t.probes.size());
        else
            std::printf("target p%g <= %.3g (%s) is not met at any %s >= %g: there p%g = %.3e (float or "
                        "softening limits, or a sample too small for this percentile)\n",
                        t.target.percentile, t.target.value, t.target.component.c_str(), param, t.best.value,
                        t.target.percentile, t.best_error);
    }
    std::printf("wrote %s\n", out.c_str());
    return 0;
}

} // namespace

int command_accuracy(int argc, char** argv)
{
    cxxopts::Options options("grove accuracy",
                             "Tree-versus-direct force errors for a range of opening angles (or, with --mac\n"
                             "relative, of error bounds alpha): one tree build, one double-precision direct\n"
                             "reference (GPU when present), then per value the relative acceleration error\n"
                             "percentiles for all particles and per component, interactions per particle and\n"
                             "timings. Writes a table to stdout and everything to an HDF5 file.");
    options.add_options()("file", "Input snapshot (HDF5)", cxxopts::value<std::string>())(
        "o,output", "Output HDF5 file", cxxopts::value<std::string>()->default_value("accuracy.hdf5"))(
        "theta", "geometric criterion: LO:HI:STEP or a comma-separated list, each in (0, 1.1547]",
        cxxopts::value<std::string>()->default_value("0.2:1.0:0.1"))(
        "mac",
        "opening criterion: geometric (opening angle theta) or relative (open a cell when "
        "G M l^2 / d^4 > alpha |a|)",
        cxxopts::value<std::string>()->default_value("geometric"))(
        "alpha", "relative criterion: LO:HI:STEP or a comma-separated list, each in (0, 1]",
        cxxopts::value<std::string>()->default_value("1e-4,2e-4,5e-4,1e-3,2e-3,5e-3,1e-2"))(
        "theta-max",
        "relative criterion: also open every cell that the geometric criterion at this angle opens, in (0, 1.1547] "
        "(default: no bound but the floor)",
        cxxopts::value<double>())("engine", "tree engine: tree (GPU when present), tree-cpu or tree-gpu",
                                  cxxopts::value<std::string>()->default_value("tree"))(
        "nleaf", "most particles in a leaf", cxxopts::value<int>()->default_value(std::to_string(kDefaultNleaf)))(
        "ncrit", "most particles in a group (" GROVE_AUTO_NCRIT_HELP ")",
        cxxopts::value<int>()->default_value(std::to_string(kDefaultNcrit)))(
        "eps", "Plummer softening (length units)", cxxopts::value<double>()->default_value("0"))(
        "eps-type", "Softening by particle type, e.g. halo=0.1,disk=0.05,bulge=0.02 (types not named take --eps)",
        cxxopts::value<std::string>())("G", "gravitational constant (default: the snapshot's units)",
                                       cxxopts::value<double>())(
        "sample", "compare K random particles only (0 = all); the reference then costs K x N",
        cxxopts::value<long long>()->default_value("0"))("repeat", "tree evaluations per theta (median time)",
                                                         cxxopts::value<int>()->default_value("1"))(
        "seed", "seed of the sample", cxxopts::value<unsigned long long>()->default_value("1"))(
        "target",
        "also find the largest theta (or alpha; the fewest interactions) whose error meets pQ=VALUE, e.g. "
        "p99=1e-3, by bisection between 0.05 and 1.1547 (alpha: 1e-6 and 1)",
        cxxopts::value<std::string>())("target-component",
                                       "component the target applies to (all, bulge, disk, halo...)",
                                       cxxopts::value<std::string>()->default_value("all"))(
        "decomposition",
        "under mpirun: replicated (one tree, every rank a share of its groups: one process's table) or "
        "domains (each rank the tree of one Peano-Hilbert domain with the others' locally essential trees; "
        "each row one computation over the domains, build included)",
        cxxopts::value<std::string>()->default_value("replicated"));
    add_input_units_option(options);
    options.parse_positional({"file"});
    options.positional_help("FILE [--theta 0.2:1.0:0.1 | --mac relative --alpha 1e-4,1e-3] [-o accuracy.hdf5]");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    return run_accuracy(accuracy_command(*parsed));
}

} // namespace grove
