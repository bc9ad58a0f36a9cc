// grove bench direct: interaction rates of the GPU direct engine against the device's FP32
// instruction limit (DESIGN.md section 4).
#include <algorithm>
#include <cstdio>
#include <random>
#include <sstream>

#include "src/cli_common.hpp"
#include "src/commands.hpp"
#include "src/ic_models.hpp"
#include "tree/tree_cpu.hpp"

#include <omp.h>
#ifdef GROVE_HAVE_CUDA
#include "gpu/device_info.h"
#include "gpu/direct_gpu.h"
#include "gpu/hermite_gpu.h"
#include "src/bench_tree.hpp"
#endif

namespace grove {

namespace {

// "14:20" -> {14, ..., 20}; "10" -> {10}.
[[maybe_unused]] std::vector<int> parse_exponent_range(const std::string& text, const char* option)
{
    const auto colon = text.find(':');
    try {
        const int lo = std::stoi(text.substr(0, colon));
        const int hi = colon == std::string::npos ? lo : std::stoi(text.substr(colon + 1));
        if (lo < 0 || hi > 30 || lo > hi) throw std::out_of_range(option);
        std::vector<int> out;
        for (int e = lo; e <= hi; ++e) out.push_back(e);
        return out;
    } catch (const std::exception&) {
        throw std::runtime_error(std::string("--") + option +
                                 " takes LO:HI with 0 <= LO <= HI <= 30 (powers of two), got '" + text + "'");
    }
}

#ifdef GROVE_HAVE_CUDA
// Uniform cube [-1,1]^3 with random masses, as in the published reference runs.
void uniform_cube(std::size_t n, Eigen::Matrix3Xd& pos, Eigen::VectorXd& mass, std::uint64_t seed)
{
    ParticleSet p = make_uniform_cube(n, seed, true);
    pos = std::move(p.pos);
    mass = std::move(p.mass);
}

int bench_direct(const cxxopts::ParseResult& r)
{
    const DeviceSummary dev = describe_device();
    const double limit = dev.interaction_limit(13.0);
    const double eps = r["eps"].as<double>();
    const int repeat = std::max(1, r["repeat"].as<int>());
    std::printf("device %s: %d SMs, %.3f GHz, %d FP32 lanes/SM\n", dev.name.c_str(), dev.sm_count, dev.clock_ghz,
                dev.fp32_lanes_per_sm);
    std::printf(
        "FP32 instruction limit = SMs x lanes x clock / 13 instructions per interaction = %.3e interactions/s\n",
        limit);
    std::printf(
        "sources: uniform cube, random masses, eps = %g; median of %d timed runs after one warm-up; kernel time "
        "from CUDA events (force kernel + on-device reduction)\n\n",
        eps, repeat);
    std::printf("| precision | N_i | N_j | splits | kernel ms | interactions/s | of FP32 limit |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    auto run = [&](DirectGpuEngine& engine, const Eigen::Matrix3Xd& pos, const Eigen::VectorXd& mass,
                   const std::vector<std::int32_t>* active, Precision prec) {
        Forces f;
        std::vector<double> times;
        for (int k = 0; k <= repeat; ++k) {
            if (active)
                engine.compute_subset(pos, mass, *active, f);
            else
                engine.compute(pos, mass, f);
            if (k > 0) times.push_back(engine.last_kernel_seconds());
        }
        std::sort(times.begin(), times.end());
        const double t = times[times.size() / 2];
        const double ni = active ? static_cast<double>(active->size()) : static_cast<double>(pos.cols());
        const double rate = ni * static_cast<double>(pos.cols()) / t;
        std::printf("| %s | %.0f | %ld | %d | %.3f | %.3e | %.1f%% |\n", precision_name(prec), ni,
                    static_cast<long>(pos.cols()), engine.last_splits(), t * 1e3, rate, 100 * rate / limit);
        std::fflush(stdout);
    };
    const auto precisions = split_list(r["precision"].as<std::string>());
    for (const auto& pname : precisions) {
        const Precision prec = precision_by_name(pname);
        DirectGpuEngine engine(GravityParams{1.0, eps}, prec);
        for (int e : parse_exponent_range(r["sizes"].as<std::string>(), "sizes")) {
            Eigen::Matrix3Xd pos;
            Eigen::VectorXd mass;
            uniform_cube(std::size_t{1} << e, pos, mass, 42);
            run(engine, pos, mass, nullptr, prec);
        }
    }
    const int sources_exp = r["sources"].as<int>();
    Eigen::Matrix3Xd pos;
    Eigen::VectorXd mass;
    uniform_cube(std::size_t{1} << sources_exp, pos, mass, 43);
    for (const auto& pname : precisions) {
        const Precision prec = precision_by_name(pname);
        DirectGpuEngine engine(GravityParams{1.0, eps}, prec);
        for (int e : parse_exponent_range(r["active"].as<std::string>(), "active")) {
            std::vector<std::int32_t> active(std::size_t{1} << e);
            std::mt19937 rng(static_cast<unsigned>(e));
            std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(pos.cols()) - 1);
            for (auto& a : active) a = pick(rng);
            run(engine, pos, mass, &active, prec);
        }
    }
    return 0;
}
// Hermite kernel (prediction + acc/jerk/pot + reduction) rates: N_i = N_j = 2^sizes, and 2^active
// targets against 2^sources, in mixed and double precision.
int bench_hermite(const cxxopts::ParseResult& r)
{
    const int repeat = std::max(1, r["repeat"].as<int>());
    const double eps = r["eps"].as<double>();
    std::printf("Hermite kernel: on-device prediction of all j, acc + jerk + pot of the active i, j-split reduction; "
                "uniform cube, random masses, eps = %g; median of %d after one warm-up (CUDA events)\n\n",
                eps, repeat);
    std::printf("| precision | N_i | N_j | splits | kernel ms | interactions/s |\n|---|---|---|---|---|---|\n");
    auto run = [&](Precision prec, std::size_t n, std::size_t active_count) {
        Eigen::Matrix3Xd pos;
        Eigen::VectorXd mass;
        uniform_cube(n, pos, mass, 44);
        HermiteState st;
        st.x = pos;
        st.v = Eigen::Matrix3Xd::Zero(3, pos.cols());
        st.a = st.v;
        st.j = st.v;
        st.t = Eigen::VectorXd::Zero(mass.size());
        st.mass = mass;
        HermiteGpuEngine engine(GravityParams{1.0, eps}, prec);
        engine.set_state(st);
        std::vector<std::int32_t> active(active_count);
        for (std::size_t k = 0; k < active_count; ++k) active[k] = static_cast<std::int32_t>((k * 7919) % n);
        HermiteForces f;
        std::vector<double> times;
        for (int k = 0; k <= repeat; ++k) {
            engine.evaluate(0.0, active, f);
            if (k > 0) times.push_back(engine.last_kernel_seconds());
        }
        std::sort(times.begin(), times.end());
        const double t = times[times.size() / 2];
        std::printf("| %s | %zu | %zu | %d | %.3f | %.3e |\n", precision_name(prec), active_count, n,
                    engine.last_splits(), 1e3 * t, static_cast<double>(active_count) * static_cast<double>(n) / t);
        std::fflush(stdout);
    };
    for (const auto& pname : split_list(r["precision"].as<std::string>())) {
        const Precision prec = precision_by_name(pname);
        if (prec == Precision::Float) continue;
        for (int e : parse_exponent_range(r["sizes"].as<std::string>(), "sizes"))
            run(prec, std::size_t{1} << e, std::size_t{1} << e);
        for (int e : parse_exponent_range(r["active"].as<std::string>(), "active"))
            run(prec, std::size_t{1} << r["sources"].as<int>(), std::size_t{1} << e);
    }
    return 0;
}
#endif

// Host tree build split into its phases for Plummer spheres of 10^e particles, and the
// interaction-list lengths the walk produces.
int bench_tree_build(const cxxopts::ParseResult& r)
{
    const int repeat = std::max(1, r["repeat"].as<int>());
    const TreeParams params{0.5, r["nleaf"].as<int>(), r["ncrit"].as<int>()};
    std::printf("host tree build, Plummer sphere, nleaf %d, ncrit %d, %d OpenMP threads, median of %d builds after one "
                "warm-up (ms)\n\n",
                params.nleaf, params.ncrit, omp_get_max_threads(), repeat);
    std::printf(
        "| N | keys | sort | build | moments | groups | total | Mparticles/s |\n|---|---|---|---|---|---|---|---|\n");
    std::vector<std::pair<long, Octree>> trees;
    for (const auto& text : split_list(r["build-sizes"].as<std::string>())) {
        const long n = static_cast<long>(std::stod(text));
        if (n <= 0) throw std::runtime_error("--build-sizes takes positive particle counts, e.g. 1e5,1e6");
        const ParticleSet p = make_plummer(static_cast<std::size_t>(n), 5);
        std::vector<BuildTimes> runs;
        Octree tree;
        for (int k = 0; k <= repeat; ++k) {
            BuildTimes t;
            build_octree_into(tree, p.pos, p.mass, params, &t);
            if (k > 0) runs.push_back(t);
        }
        std::sort(runs.begin(), runs.end(),
                  [](const BuildTimes& a, const BuildTimes& b) { return a.total() < b.total(); });
        const BuildTimes& t = runs[runs.size() / 2];
        std::printf("| %ld | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n", n, 1e3 * t.keys, 1e3 * t.sort,
                    1e3 * t.build, 1e3 * t.moments, 1e3 * t.groups, 1e3 * t.total(), n / t.total() * 1e-6);
        std::fflush(stdout);
        trees.emplace_back(n, std::move(tree));
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

} // namespace

int command_bench(int argc, char** argv)
{
    cxxopts::Options options("grove bench",
                             "Benchmarks. `grove bench direct`: GPU direct-summation interaction rates\n"
                             "for N_i = N_j = 2^sizes and for 2^active targets against 2^sources sources.");
    options.add_options()("what",
                          "What to benchmark: direct (GPU), hermite (GPU Hermite kernel), tree (GPU treecode) or "
                          "tree-build (host octree)",
                          cxxopts::value<std::string>())("build-sizes", "tree-build: comma-separated particle counts",
                                                         cxxopts::value<std::string>()->default_value("1e5,1e6"))(
        "nleaf", "tree-build: nleaf", cxxopts::value<int>()->default_value("64"))(
        "ncrit", "tree-build: ncrit", cxxopts::value<int>()->default_value("64"))(
        "sizes", "log2 N range for all-on-all runs, LO:HI", cxxopts::value<std::string>()->default_value("14:20"))(
        "active", "log2 range of active targets, LO:HI", cxxopts::value<std::string>()->default_value("6:14"))(
        "sources", "log2 of the sources for the active runs",
        cxxopts::value<int>()->default_value("20"))("precision", "Comma-separated precisions: float,mixed,double",
                                                    cxxopts::value<std::string>()->default_value("float,mixed,double"))(
        "eps", "Plummer softening", cxxopts::value<double>()->default_value("0.01"))(
        "repeat", "Timed runs per point (median reported)", cxxopts::value<int>()->default_value("3"));
    options.add_options("tree")("models", "tree: comma-separated models, uniform (cube, random masses) and galaxy",
                                cxxopts::value<std::string>()->default_value("uniform,galaxy"))(
        "tree-sizes", "tree: comma-separated log2 N (uniform uses 2^e - 1 particles)",
        cxxopts::value<std::string>()->default_value("20,23"))(
        "thetas", "tree: comma-separated opening angles", cxxopts::value<std::string>()->default_value("0.5,0.75"))(
        "tree-eps", "tree: Plummer softening", cxxopts::value<double>()->default_value("0"))(
        "sample", "tree: particles whose error is measured against direct summation",
        cxxopts::value<int>()->default_value("16384"));
    options.parse_positional({"what"});
    options.positional_help("direct|hermite|tree|tree-build");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    const std::string what = parsed->count("what") ? (*parsed)["what"].as<std::string>() : "";
    if (what == "tree-build") return bench_tree_build(*parsed);
    if (what != "direct" && what != "tree" && what != "hermite")
        throw std::runtime_error("grove bench: say what to benchmark: direct, hermite, tree or tree-build");
#ifdef GROVE_HAVE_CUDA
    if (!gpu_available()) throw std::runtime_error("grove bench " + what + " needs a CUDA GPU and none is visible");
    if (what == "hermite") return bench_hermite(*parsed);
    return what == "tree" ? bench_tree(*parsed) : bench_direct(*parsed);
#else
    throw std::runtime_error("grove bench " + what +
                             " needs the GPU engines; this build has none (built without nvcc)");
#endif
}

} // namespace grove
