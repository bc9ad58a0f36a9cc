// grove bench scaling, under mpirun -np K: the force computation of one model on the first 1, 2,
// 4, ... K ranks of the job (each on the GPU of its local rank when there are GPUs), with time,
// speed-up and efficiency per rank count. One mpirun call gives the whole table. Without mpirun,
// direct-gpu scales over the process's own GPUs instead (--gpus, default every visible one).
#include "cli/bench_scaling.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "cli/bench_step.hpp"
#include "cli/cli_common.hpp"
#include "cli/tree_broadcast.hpp"
#include "core/wall_clock.hpp"
#include "engines/engines.hpp"
#include "parallel/distributed_engine.hpp"
#include "tree/build.hpp"

namespace grove {

namespace {

// Every rank needs the same host tree: built by each rank from its own copy of the particles (what
// the distributed engine does), or built by rank 0 and broadcast. Times both across the job.
void compare_tree_sources(const BenchConfig& c, const ParticleSet& p, const Communicator& world)
{
    const BuildParams params{c.nleaf, c.ncrit};
    Octree tree;
    build_octree_into(tree, p.pos, p.mass, params); // warm-up: every rank's storage
    auto time_median = [&](auto&& make_tree) {
        std::vector<double> times;
        for (int r = 0; r < std::max(1, c.repeat); ++r) {
            world.barrier();
            const auto start = WallClock::now();
            make_tree();
            world.barrier();
            times.push_back(seconds_since(start));
        }
        std::sort(times.begin(), times.end());
        return times[times.size() / 2];
    };
    const double each = time_median([&] { build_octree_into(tree, p.pos, p.mass, params); });
    Octree received;
    const double broadcast = time_median([&] {
        if (world.is_root()) build_octree_into(received, p.pos, p.mass, params);
        broadcast_tree(received, world);
    });
    // The build is deterministic, so what arrived equals what each rank built, value for value
    // (groups field by field: their structs have padding).
    int differ = 0;
    auto same_group = [](const Group<double>& x, const Group<double>& y) {
        return x.centre.x == y.centre.x && x.centre.y == y.centre.y && x.centre.z == y.centre.z &&
               x.half_extent.x == y.half_extent.x && x.half_extent.y == y.half_extent.y &&
               x.half_extent.z == y.half_extent.z && x.range.begin == y.range.begin && x.range.end == y.range.end;
    };
    for_each_array_pair(tree, received, [&](const auto& a, const auto& b, const TreeArrayInfo& info) {
        if (info.per_theta) return;
        bool same = a.size() == b.size();
        if constexpr (std::is_same_v<std::decay_t<decltype(a[0])>, Group<double>>)
            same = same && std::equal(a.begin(), a.end(), b.begin(), same_group);
        else
            same = same && std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0;
        if (!same) differ = 1;
    });
    differ = world.max(differ);
    if (world.is_root())
        std::printf("\nthe host tree on %d ranks (until the last rank has it, median of %d): built by every rank "
                    "%.2f ms; built by rank 0 and broadcast %.2f ms; the broadcast trees %s the built ones\n",
                    world.size(), std::max(1, c.repeat), 1e3 * each, 1e3 * broadcast, differ ? "DIFFER FROM" : "equal");
}

} // namespace

namespace {

// The median wall time of repeat force computations after one warm-up, between barriers of comm.
double median_compute_seconds(ForceEngine& engine, const ParticleSet& p, int repeat, const Communicator& comm)
{
    Forces f;
    engine.compute(p.pos, p.mass, f); // warm-up: allocations, first pass
    std::vector<double> times;
    for (int r = 0; r < std::max(1, repeat); ++r) {
        comm.barrier();
        const auto start = WallClock::now();
        engine.compute(p.pos, p.mass, f);
        times.push_back(seconds_since(start));
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// One process, direct-gpu on the first 1, 2, 4, ... of its GPUs (MultiGpuDirectEngine).
int bench_gpu_scaling(const BenchConfig& c, const ParticleSet& p, EngineConfig config, std::vector<int> gpus)
{
    std::printf("grove bench scaling: %s, N = %lld, direct-gpu (float) in one process on GPUs", c.model.c_str(), c.n);
    for (int d : gpus) std::printf(" %d", d);
    std::printf("; median of %d force computations after one warm-up\n\n| GPUs | ms | speed-up | efficiency |\n"
                "|---|---|---|---|\n",
                std::max(1, c.repeat));
    std::vector<std::size_t> counts;
    for (std::size_t k = 1; k < gpus.size(); k *= 2) counts.push_back(k);
    counts.push_back(gpus.size());
    double t1 = 0;
    for (const std::size_t k : counts) {
        config.devices.assign(gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(k));
        auto engine = make_force_engine(config);
        const double median = median_compute_seconds(*engine, p, c.repeat, Communicator::world());
        if (k == 1) t1 = median;
        std::printf("| %zu | %.2f | %.2f | %.0f %% |\n", k, 1e3 * median, t1 / median,
                    100 * t1 / median / static_cast<double>(k));
        std::fflush(stdout);
    }
    return 0;
}

} // namespace

int bench_scaling(const BenchConfig& c)
{
    if (c.decomposition == "domains") return bench_domain_scaling(c);
    const Communicator& world = Communicator::world();
    const ParticleSet p = make_bench_model(c.model, static_cast<std::size_t>(c.n));
    EngineConfig config;
    config.engine = c.engine;
    config.theta = c.theta;
    config.precision = "float";
    config.gravity = {p.units.G, c.eps.value_or(c.model == "galaxy" ? 0.05 : 1.0 / 64)};
    if (!c.gpus.empty() && (world.size() > 1 || engines().resolve(c.engine) != "direct-gpu"))
        throw std::runtime_error("--gpus: the GPUs of one process, for --engine direct-gpu without mpirun");
    if (world.size() == 1 && engines().resolve(c.engine) == "direct-gpu") {
        std::vector<int> gpus = c.gpus;
        if (gpus.empty()) // none named: every visible one
            for (int d = 0; d < engines().device_count(); ++d) gpus.push_back(d);
        if (gpus.size() > 1) return bench_gpu_scaling(c, p, config, gpus);
    }
    if (world.size() > 1 && engines().device_count() > 0) config.device = world.local_rank() % engines().device_count();
    if (world.is_root())
        std::printf(
            "grove bench scaling: %s, N = %lld, engine %s (direct: float), %d ranks in all; median of %d "
            "force computations after one warm-up\n\n| ranks | ms | speed-up | efficiency |\n|---|---|---|---|\n",
            c.model.c_str(), c.n, engines().resolve(c.engine).c_str(), world.size(), std::max(1, c.repeat));
    std::vector<int> counts; // 1, 2, 4, ... and all
    for (int k = 1; k < world.size(); k *= 2) counts.push_back(k);
    counts.push_back(world.size());
    double t1 = 0;
    for (const int k : counts) {
        const std::unique_ptr<Communicator> sub = world.first(k);
        double median = 0;
        if (sub) {
            auto engine = distribute(make_force_engine(config), *sub);
            median = median_compute_seconds(*engine, p, c.repeat, *sub);
        }
        world.barrier();
        if (world.is_root()) {
            if (k == 1) t1 = median;
            std::printf("| %d | %.2f | %.2f | %.0f %% |\n", k, 1e3 * median, t1 / median, 100 * t1 / median / k);
            std::fflush(stdout);
        }
    }
    if (world.size() > 1 && engines().resolve(c.engine).rfind("tree", 0) == 0) compare_tree_sources(c, p, world);
    return 0;
}

} // namespace grove
