// grove bench tree (GPU builds only). For each model, N and theta: the host build phases, the
// upload, every GPU phase from CUDA events, list lengths, interaction rate, busy lane fraction and
// the error against the double-precision GPU direct engine on a random sample of particles.
#include "cli/bench_tree.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include <omp.h>

#include "cli/cli_common.hpp"
#include "core/force_errors.hpp"
#include "core/galaxy_model.hpp"
#include "core/ic_models.hpp"
#include "gpu/device_info.h"
#include "gpu/direct_gpu.h"
#include "gpu/kernel_costs.hpp"
#include "gpu/tree_gpu.h"

namespace grove {

namespace {

double lookup(const PhaseTimes& t, const char* name)
{
    for (const auto& [k, v] : t)
        if (k == name) return v;
    return 0;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Row {
    std::string model;
    long n;
    double theta;
    BuildTimes build;
    double pack, upload;
    PhaseTimes gpu; // medians
    TreeGpuStats stats;
    double p50, p99;
};

} // namespace

namespace {

std::vector<double> parse_thetas(const std::string& list)
{
    std::vector<double> thetas;
    for (const auto& t : split_list(list)) {
        try {
            thetas.push_back(std::stod(t));
        } catch (const std::logic_error&) {
            throw std::runtime_error("--thetas takes comma-separated numbers > 0, got '" + t + "'");
        }
        if (!(thetas.back() > 0)) throw std::runtime_error("--thetas takes numbers > 0");
    }
    if (thetas.empty()) throw std::runtime_error("--thetas is empty");
    return thetas;
}

ParticleSet bench_model(const std::string& model, const std::string& size, long& n)
{
    int exponent = 0;
    try {
        exponent = std::stoi(size);
    } catch (const std::logic_error&) {
        exponent = -1;
    }
    if (exponent < 1 || exponent > 30)
        throw std::runtime_error("--tree-sizes takes log2 N between 1 and 30, got '" + size + "'");
    n = (1L << exponent) - (model == "uniform" ? 1 : 0);
    if (model == "uniform") return make_uniform_cube(static_cast<std::size_t>(n), 11, true);
    if (model == "galaxy") return make_galaxy(static_cast<std::size_t>(n), 11, GalaxyParams{});
    if (model == "plummer") return make_plummer(static_cast<std::size_t>(n), 11);
    throw std::runtime_error("--models takes uniform, galaxy and plummer, got '" + model + "'");
}

// One model and size: the host build, the upload, then every theta's evaluation, each timed as the
// median of `repeat` after a warm-up, with its errors on a sample against the GPU direct sum.
void bench_model_size(const BenchConfig& r, const std::string& model, const std::string& size,
                      const std::vector<double>& thetas, std::vector<Row>& rows)
{
    const int repeat = std::max(1, r.repeat);
    long n = 0;
    const ParticleSet p = bench_model(model, size, n);
    const GravityParams gravity{model == "galaxy" ? p.units.G : 1.0, r.tree_eps};
    const std::vector<std::int32_t> targets =
        sample_indices(p.size(), static_cast<std::size_t>(std::max(1, r.sample)), 7);
    Forces ref;
    DirectGpuEngine(gravity, Precision::Double).compute_subset(p.pos, p.mass, targets, ref);
    std::vector<BuildTimes> builds;
    Octree tree;
    for (int k = 0; k <= repeat; ++k) {
        BuildTimes t;
        build_octree_into(tree, p.pos, p.mass, BuildParams{r.nleaf, r.ncrit}, &t);
        if (k > 0) builds.push_back(t);
    }
    std::sort(builds.begin(), builds.end(),
              [](const BuildTimes& a, const BuildTimes& b) { return a.total() < b.total(); });
    TreeGpuEngine engine(TreeParams{thetas.front(), {r.nleaf, r.ncrit}}, gravity);
    std::vector<double> packs, uploads;
    for (int k = 0; k <= repeat; ++k) {
        engine.upload(tree);
        if (k > 0) {
            packs.push_back(lookup(engine.last_phase_times(), "pack"));
            uploads.push_back(lookup(engine.last_phase_times(), "upload"));
        }
    }
    for (double theta : thetas) {
        Forces f;
        std::vector<PhaseTimes> runs;
        for (int k = 0; k <= repeat; ++k) {
            engine.evaluate(OpeningCriterion::geometric(theta), f);
            if (k > 0) runs.push_back(engine.last_phase_times());
        }
        Row row{model, n, theta, builds[builds.size() / 2], median(packs), median(uploads), {}, {}, 0, 0};
        for (const auto& [name, value] : runs.front()) {
            std::vector<double> v;
            for (const auto& run : runs) v.push_back(lookup(run, name.c_str()));
            row.gpu.emplace_back(name, median(v));
        }
        row.stats = engine.statistics(tree);
        const auto q = percentiles(relative_errors(select_columns(f.acc, targets), ref.acc), {50, 99});
        row.p50 = q[0];
        row.p99 = q[1];
        rows.push_back(row);
        std::fprintf(stderr, "  done: %s N = %ld theta = %.2f\n", model.c_str(), n, theta);
    }
}

// The yardstick of the leaf lists: the direct float kernel's all-on-all rate at 2^20, as
// `grove bench direct` measures it (uniform cube, random masses, eps = 0.01; one warm-up).
double direct_float_rate()
{
    const ParticleSet cube = make_uniform_cube(std::size_t{1} << 20, 42, true);
    DirectGpuEngine direct(GravityParams{1.0, 0.01}, Precision::Float);
    Forces f;
    std::vector<double> times;
    for (int k = 0; k <= 2; ++k) {
        direct.compute(cube.pos, cube.mass, f);
        if (k > 0) times.push_back(direct.last_kernel_seconds());
    }
    return static_cast<double>(cube.size()) * static_cast<double>(cube.size()) / median(times);
}

void print_phases(const std::vector<Row>& rows)
{
    std::printf(
        "times in ms; walk+eval = opening radii + pass 1 + scan + pass 2 + nodes + leaves; total = host build + "
        "pack + upload + walk+eval + download (with the conversion to the caller's doubles)\n\n");
    std::printf(
        "| model | N | theta | keys | sort | build | moments | groups | pack | upload | r_open | pass 1 | scan | "
        "pass 2 | nodes | leaves | download + convert | walk+eval | total |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row& w : rows) {
        const auto g = [&](const char* name) { return 1e3 * lookup(w.gpu, name); };
        const double walk_eval = g("opening radii") + g("pass 1") + g("scan") + g("pass 2") + g("nodes") + g("leaves");
        const double total = 1e3 * (w.build.total() + w.pack + w.upload) + walk_eval + g("download") + g("convert");
        std::printf("| %s | %ld | %.2f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f | %.3f | %.2f | %.2f | %.2f | "
                    "%.2f | %.2f | %.2f | **%.2f** | %.1f |\n",
                    w.model.c_str(), w.n, w.theta, 1e3 * w.build.keys, 1e3 * w.build.sort, 1e3 * w.build.build,
                    1e3 * w.build.moments, 1e3 * w.build.groups, 1e3 * w.pack, 1e3 * w.upload, g("opening radii"),
                    g("pass 1"), g("scan"), g("pass 2"), g("nodes"), g("leaves"), g("download") + g("convert"),
                    walk_eval, total);
    }
}

void print_lists(const std::vector<Row>& rows, const DeviceSummary& dev, double direct_rate)
{
    std::printf("\n| model | N | theta | nodes/group | leaves/group | p-node/particle | p-p/particle | interactions/s "
                "(nodes+leaves kernels) | busy lanes (nodes, leaves) | median error | 99th pct error |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (const Row& w : rows) {
        const double eval = lookup(w.gpu, "nodes") + lookup(w.gpu, "leaves");
        std::printf("| %s | %ld | %.2f | %.0f | %.0f | %.0f | %.0f | %.3e | %.1f%% (%.1f%%, %.1f%%) | %.2e | %.2e |\n",
                    w.model.c_str(), w.n, w.theta, w.stats.lists.nodes_per_group, w.stats.lists.leaves_per_group,
                    w.stats.lists.node_interactions_per_particle, w.stats.lists.leaf_interactions_per_particle,
                    w.stats.interactions / eval, 100 * w.stats.busy, 100 * w.stats.busy_nodes,
                    100 * w.stats.busy_leaves, w.p50, w.p99);
    }
    const double node_limit = dev.limit(kTreeNodeCost), leaf_limit = dev.limit(kTreeLeafCost);
    std::printf("\nlist kernels against their limits (instructions per interaction counted in their PTX, "
                "bench/kernel_instructions.py: nodes %.1f FP32 + %.1f MUFU + %.1f other, limit %.3e/s; leaves %.1f "
                "FP32 + %.1f MUFU + %.1f other, limit %.3e/s) and the leaf lists against the direct float kernel "
                "(all-on-all 2^20: %.3e/s)\n\n",
                kTreeNodeCost.fp32, kTreeNodeCost.mufu, kTreeNodeCost.other, node_limit, kTreeLeafCost.fp32,
                kTreeLeafCost.mufu, kTreeLeafCost.other, leaf_limit, direct_rate);
    std::printf("| model | N | theta | node lists /s | of their limit | leaf lists /s | of their limit | of the direct "
                "float kernel |\n|---|---|---|---|---|---|---|---|\n");
    for (const Row& w : rows) {
        const double n = static_cast<double>(w.n);
        const double nodes = n * w.stats.lists.node_interactions_per_particle / lookup(w.gpu, "nodes");
        const double leaves = n * w.stats.lists.leaf_interactions_per_particle / lookup(w.gpu, "leaves");
        std::printf("| %s | %ld | %.2f | %.3e | %.1f%% | %.3e | %.1f%% | %.1f%% |\n", w.model.c_str(), w.n, w.theta,
                    nodes, 100 * nodes / node_limit, leaves, 100 * leaves / leaf_limit, 100 * leaves / direct_rate);
    }
}

} // namespace

int bench_tree(const BenchConfig& r)
{
    const int repeat = std::max(1, r.repeat);
    const std::vector<double> thetas = parse_thetas(r.thetas);
    const DeviceSummary dev = describe_device();
    std::printf("device %s (%d SMs); host: %d OpenMP threads\n", dev.name.c_str(), dev.sm_count, omp_get_max_threads());
    std::printf("nleaf %d, ncrit %d (" GROVE_AUTO_NCRIT_HELP "), eps %g (uniform) / %g kpc "
                "(galaxy); GPU phases: median of %d evaluations after "
                "one warm-up (CUDA events); host build: median of %d builds; errors: |a_tree - a_direct| / |a_direct| "
                "for %d random particles against the double-precision GPU direct engine\n\n",
                r.nleaf, r.ncrit, r.tree_eps, r.tree_eps, repeat, repeat, std::max(1, r.sample));
    std::vector<Row> rows;
    for (const auto& model : split_list(r.models))
        for (const auto& size : split_list(r.tree_sizes)) bench_model_size(r, model, size, thetas, rows);
    const double direct_rate = direct_float_rate();
    print_phases(rows);
    print_lists(rows, dev, direct_rate);
    return 0;
}

} // namespace grove
