// grove bench scaling, under mpirun -np K: the force computation of one model on the first 1, 2,
// 4, ... K ranks of the job (each on the GPU of its local rank when there are GPUs), with time,
// speed-up and efficiency per rank count. One mpirun call gives the whole table.
#include "cli/bench_scaling.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "cli/bench_step.hpp"
#include "cli/cli_common.hpp"
#include "core/wall_clock.hpp"
#include "engines/engines.hpp"
#include "parallel/distributed_engine.hpp"

namespace grove {

int bench_scaling(const BenchConfig& c)
{
    const Communicator& world = Communicator::world();
    const ParticleSet p = make_bench_model(c.model, static_cast<std::size_t>(c.n));
    EngineConfig config;
    config.engine = c.engine;
    config.theta = c.theta;
    config.precision = "float";
    config.gravity = {p.units.G, c.eps.value_or(c.model == "galaxy" ? 0.05 : 1.0 / 64)};
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
            Forces f;
            engine->compute(p.pos, p.mass, f); // warm-up: allocations, first pass
            std::vector<double> times;
            for (int r = 0; r < std::max(1, c.repeat); ++r) {
                sub->barrier();
                const auto start = WallClock::now();
                engine->compute(p.pos, p.mass, f);
                times.push_back(seconds_since(start));
            }
            std::sort(times.begin(), times.end());
            median = times[times.size() / 2];
        }
        world.barrier();
        if (world.is_root()) {
            if (k == 1) t1 = median;
            std::printf("| %d | %.2f | %.2f | %.0f %% |\n", k, 1e3 * median, t1 / median, 100 * t1 / median / k);
            std::fflush(stdout);
        }
    }
    return 0;
}

} // namespace grove
