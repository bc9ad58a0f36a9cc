// grove bench: the host tree build here; the GPU benchmarks (direct, hermite, tree) in
// bench_gpu.cpp.
#include <algorithm>
#include <cstdio>
#include <string>

#include <omp.h>

#include "cli/bench_config.hpp"
#include "cli/bench_gpu.hpp"
#include "cli/bench_scaling.hpp"
#include "cli/bench_step.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/ic_models.hpp"
#include "core/particle_order.hpp"
#include "integrators/block_leapfrog.hpp"
#include "parallel/communicator.hpp"
#include "tree/build.hpp"
#include "tree/interaction_lists.hpp"
#include "tree/mac.hpp"

namespace grove {

namespace {

// Host tree build split into its phases for Plummer spheres of 10^e particles, and the
// interaction-list lengths the walk produces. Each size is built twice: from the model's order
// (random in space, as initial conditions come) and as a leapfrog run on a tree sees it, in the
// last build's Morton order after one drift of dt = 1/64 (Henon units; core/particle_order.hpp),
// where the sort meets nearly sorted keys and the gather reads nearly in sequence.
int bench_tree_build(const BenchConfig& r)
{
    const int repeat = std::max(1, r.repeat);
    const BuildParams params{r.nleaf, r.ncrit};
    std::printf("host tree build, Plummer sphere, nleaf %d, ncrit %d, %d OpenMP threads, median of %d builds after one "
                "warm-up (ms)\n\n",
                params.nleaf, params.ncrit, omp_get_max_threads(), repeat);
    std::printf("| N | input order | keys | sort | build | moments | groups | total | Mparticles/s |\n"
                "|---|---|---|---|---|---|---|---|---|\n");
    std::vector<std::pair<long, Octree>> trees;
    for (const auto& text : split_list(r.build_sizes)) {
        const long n = static_cast<long>(std::stod(text));
        if (n <= 0) throw std::runtime_error("--build-sizes takes positive particle counts, e.g. 1e5,1e6");
        ParticleSet p = make_plummer(static_cast<std::size_t>(n), 5);
        Octree tree;
        auto time_builds = [&](const char* order) {
            std::vector<BuildTimes> runs;
            for (int k = 0; k <= repeat; ++k) {
                BuildTimes t;
                build_octree_into(tree, p.pos, p.mass, params, &t);
                if (k > 0) runs.push_back(t);
            }
            std::sort(runs.begin(), runs.end(),
                      [](const BuildTimes& a, const BuildTimes& b) { return a.total() < b.total(); });
            const BuildTimes& t = runs[runs.size() / 2];
            std::printf("| %ld | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", n, order, 1e3 * t.keys,
                        1e3 * t.sort, 1e3 * t.build, 1e3 * t.moments, 1e3 * t.groups, 1e3 * t.total(),
                        n / t.total() * 1e-6);
            std::fflush(stdout);
        };
        time_builds("model's");
        trees.emplace_back(n, tree);
        ParticleOrder order;
        order.adopt(p, tree.order);
        p.pos += p.vel / 64;
        time_builds("last build's, one step on");
    }
    std::printf(
        "\ninteraction lists (mean per group: nodes, leaves; per particle: particle-node and particle-particle "
        "interactions)\n\n| N | theta | groups | nodes/group | leaves/group | p-node/particle | p-p/particle |\n"
        "|---|---|---|---|---|---|---|\n");
    for (auto& [n, tree] : trees) {
        for (double theta : {0.5, 0.75}) {
            set_opening_radii(tree, theta);
            const TreeStats s = list_statistics(tree, build_interaction_lists(tree));
            std::printf("| %ld | %.2f | %lld | %.1f | %.1f | %.1f | %.1f |\n", n, theta,
                        static_cast<long long>(s.num_groups), s.nodes_per_group, s.leaves_per_group,
                        s.node_interactions_per_particle, s.leaf_interactions_per_particle);
        }
    }
    return 0;
}

BenchConfig bench_config(const cxxopts::ParseResult& r)
{
    BenchConfig c;
    c.what = r.count("what") ? r["what"].as<std::string>() : "";
    c.build_sizes = r["build-sizes"].as<std::string>();
    c.nleaf = r["nleaf"].as<int>();
    c.ncrit = r["ncrit"].as<int>();
    c.sizes = r["sizes"].as<std::string>();
    c.active = r["active"].as<std::string>();
    c.sources = r["sources"].as<int>();
    c.precision = r["precision"].as<std::string>();
    if (r.count("eps")) c.eps = r["eps"].as<double>();
    if (r.count("eps-type")) c.eps_type = r["eps-type"].as<std::string>();
    c.repeat = r["repeat"].as<int>();
    c.models = r["models"].as<std::string>();
    c.tree_sizes = r["tree-sizes"].as<std::string>();
    c.thetas = r["thetas"].as<std::string>();
    c.tree_eps = r["tree-eps"].as<double>();
    c.sample = r["sample"].as<int>();
    c.model = r["model"].as<std::string>();
    c.n = r["n"].as<long long>();
    c.theta = r["theta"].as<double>();
    c.mac = r["mac"].as<std::string>();
    c.alpha = r["alpha"].as<double>();
    if (r.count("theta-max")) {
        if (c.mac != "relative")
            throw std::runtime_error("--theta-max bounds --mac relative; it has no effect on theta");
        c.theta_max = r["theta-max"].as<double>();
    }
    if (r.count("dt")) c.dt = r["dt"].as<double>();
    c.timestep = r["timestep"].as<std::string>();
    c.eta = r["eta"].as<double>();
    c.eta_dyn = r["eta-dyn"].as<double>();
    c.steps = r["steps"].as<int>();
    c.warmup = r["warmup"].as<int>();
    c.rebuild_every = r["rebuild-every"].as<int>();
    c.engine = r["engine"].as<std::string>();
    const std::string order = r["particle-order"].as<std::string>();
    if (order != "tree" && order != "caller")
        throw std::runtime_error("--particle-order takes tree or caller (got '" + order + "')");
    c.keep_engine_order = order == "tree";
    c.lookahead = r["lookahead"].as<bool>();
    c.resident = r["resident"].as<bool>();
    if (r.count("gpu-memory")) c.gpu_memory = parse_bytes(r["gpu-memory"].as<std::string>(), "--gpu-memory");
    if (r.count("list-memory")) c.list_memory = parse_bytes(r["list-memory"].as<std::string>(), "--list-memory");
    if (r.count("gpus")) c.gpus = parse_gpus(r["gpus"].as<std::string>());
    c.decomposition = r["decomposition"].as<std::string>();
    if (c.decomposition != "replicated" && c.decomposition != "domains")
        throw std::runtime_error("--decomposition takes replicated or domains (got '" + c.decomposition + "')");
    c.weak = r["weak"].as<bool>();
    c.cut_by_work = domain_cut_by_work(r["domain-cut"].as<std::string>());
    if (c.cut_by_work && c.decomposition != "domains")
        throw std::runtime_error("--domain-cut work needs --decomposition domains");
    if (c.weak && c.decomposition != "domains") throw std::runtime_error("--weak needs --decomposition domains");
    return c;
}

} // namespace

int command_bench(int argc, char** argv)
{
    cxxopts::Options options("grove bench",
                             "Benchmarks. `grove bench direct`: GPU direct-summation interaction rates\n"
                             "for N_i = N_j = 2^sizes and for 2^active targets against 2^sources sources.");
    options.add_options()("what",
                          "What to benchmark: direct (GPU), hermite (GPU Hermite kernel), tree (GPU treecode), "
                          "tree-build (host octree) or step (leapfrog steps on any tree engine)",
                          cxxopts::value<std::string>())("build-sizes", "tree-build: comma-separated particle counts",
                                                         cxxopts::value<std::string>()->default_value("1e5,1e6"))(
        "nleaf", "tree, tree-build, step: most particles in a leaf cell",
        cxxopts::value<int>()->default_value(std::to_string(kDefaultNleaf)))(
        "ncrit", "tree, tree-build, step: most particles in a group (" GROVE_AUTO_NCRIT_HELP ")",
        cxxopts::value<int>()->default_value(std::to_string(kDefaultNcrit)))(
        "sizes", "log2 N range for all-on-all runs, LO:HI", cxxopts::value<std::string>()->default_value("14:20"))(
        "active", "log2 range of active targets, LO:HI", cxxopts::value<std::string>()->default_value("6:14"))(
        "sources", "log2 of the sources for the active runs",
        cxxopts::value<int>()->default_value("20"))("precision", "Comma-separated precisions: float,mixed,double",
                                                    cxxopts::value<std::string>()->default_value("float,mixed,double"))(
        "eps", "Plummer softening (direct, hermite: default 0.01; step: 1/64, or 0.05 kpc for galaxy)",
        cxxopts::value<double>())("repeat", "Timed runs per point (median reported)",
                                  cxxopts::value<int>()->default_value("3"));
    options.add_options("step")("model", "step: plummer (Henon units), galaxy (GADGET units) or uniform",
                                cxxopts::value<std::string>()->default_value("plummer"))(
        "eps-type", "step: softening by type, e.g. halo=0.1,disk=0.05,bulge=0.02 (types not named take --eps)",
        cxxopts::value<std::string>())(
        "timestep",
        "step: shared, or block (hierarchical steps of --dt / 2^k from GADGET's criterion with --eta; a row is "
        "then one --dt, every particle's step ending there)",
        cxxopts::value<std::string>()->default_value("shared"))(
        "eta", "step, --timestep block: GADGET's accuracy parameter",
        cxxopts::value<double>()->default_value(std::to_string(kDefaultBlockEta)))(
        "eta-dyn",
        "step, --timestep block: cap each step at this times the dynamical time sqrt(r^3 / (G M(<r))) (0: none)",
        cxxopts::value<double>()->default_value(std::to_string(kDefaultEtaDyn)))(
        "n", "step: particles", cxxopts::value<long long>()->default_value("1048576"))(
        "theta", "step: opening angle, in (0, 1.1547]", cxxopts::value<double>()->default_value("0.5"))(
        "mac", "step: opening criterion, geometric (theta) or relative (alpha)",
        cxxopts::value<std::string>()->default_value("geometric"))(
        "alpha", "step: the relative criterion's error bound, in (0, 1]",
        cxxopts::value<double>()->default_value("0.001"))(
        "theta-max", "step, relative criterion: also open the cells the geometric one at this angle opens",
        cxxopts::value<double>())("dt", "step: leapfrog step (default 1/64; 2.5e-4 for galaxy)",
                                  cxxopts::value<double>())("steps", "step: timed steps",
                                                            cxxopts::value<int>()->default_value("64"))(
        "warmup", "step: steps before timing", cxxopts::value<int>()->default_value("3"))(
        "rebuild-every", "step: tree rebuilt every K steps, refitted between",
        cxxopts::value<int>()->default_value("1"))("engine", "step: force engine (tree: GPU when present)",
                                                   cxxopts::value<std::string>()->default_value("tree"))(
        "particle-order",
        "step: between steps the particles stay in the tree's Morton order (tree) or in the model's (caller)",
        cxxopts::value<std::string>()->default_value("tree"))(
        "lookahead",
        "step, tree-gpu: build the next tree from predicted positions while the GPU evaluates "
        "(--lookahead=false: build every step)",
        cxxopts::value<bool>()->default_value("true"))(
        "resident",
        "step, tree-gpu with look-ahead: whole steps on the GPU, the particles kept there "
        "(--resident=false: on the host)",
        cxxopts::value<bool>()->default_value("true"))(
        "gpu-memory", "step, tree-gpu: the most device memory to use, e.g. 40G (default: what is free)",
        cxxopts::value<std::string>())(
        "list-memory", "step: the most memory the interaction lists may hold at once, e.g. 2G (default: chosen)",
        cxxopts::value<std::string>());
    options.add_options("scaling")("gpus",
                                   "scaling, direct-gpu in one process: the GPUs to spread over, e.g. 0,1 "
                                   "(default: every visible one)",
                                   cxxopts::value<std::string>())(
        "decomposition",
        "scaling and step, tree engines: replicated (every rank builds the whole tree, evaluates a share; scaling "
        "only) "
        "or domains "
        "(each rank its Peano-Hilbert domain's tree with the others' locally essential trees; each rank makes its own "
        "particles, and the errors of a --sample are measured against direct summation)",
        cxxopts::value<std::string>()->default_value("replicated"))(
        "domain-cut", std::string("step: ") + kDomainCutHelp, cxxopts::value<std::string>()->default_value("counts"))(
        "weak", "scaling, domains: -n particles per rank (weak scaling) instead of in all",
        cxxopts::value<bool>()->default_value("false"));
    options.add_options("tree")("models",
                                "tree: comma-separated models: uniform (cube, random masses), galaxy, plummer",
                                cxxopts::value<std::string>()->default_value("uniform,galaxy"))(
        "tree-sizes", "tree: comma-separated log2 N (uniform uses 2^e - 1 particles)",
        cxxopts::value<std::string>()->default_value("20,23"))(
        "thetas", "tree: comma-separated opening angles", cxxopts::value<std::string>()->default_value("0.5,0.75"))(
        "tree-eps", "tree: Plummer softening", cxxopts::value<double>()->default_value("0"))(
        "sample", "tree: particles whose error is measured against direct summation",
        cxxopts::value<int>()->default_value("16384"));
    options.parse_positional({"what"});
    options.positional_help("direct|hermite|tree|tree-build|step|scaling");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    const BenchConfig c = bench_config(*parsed);
    if (c.what == "step" && c.decomposition == "domains") return bench_domain_step(c);
    if (Communicator::world().size() > 1 && c.what != "scaling")
        throw std::runtime_error(
            "under mpirun, grove bench runs only `scaling`, and `step` with --decomposition domains");
    if (c.what == "scaling") return bench_scaling(c);
    if (c.what == "tree-build") return bench_tree_build(c);
    if (c.what == "step") return bench_step(c);
    if (c.what != "direct" && c.what != "tree" && c.what != "hermite")
        throw std::runtime_error(
            "grove bench: say what to benchmark: direct, hermite, tree, tree-build, step or scaling");
    return bench_gpu(c.what, c);
}

} // namespace grove
