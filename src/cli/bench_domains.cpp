// The benchmarks of the tree over Peano-Hilbert domains, under mpirun -np K. Each rank makes its own
// share of the model (own_share) and the shares move to their domains.
//
// grove bench scaling --decomposition domains: the force computation on the first 1, 2, 4, ... K
// ranks, after the domains were cut again twice by the time each rank's particles took. Strong
// scaling: -n particles in all, the same particles for every rank count; weak (--weak): -n per
// rank. Per rank count: the slowest rank's time and phases, the load imbalance, the LET traffic,
// and the errors of a sample against the direct sum in double over every rank's particles.
//
// grove bench step --decomposition domains: leapfrog steps as a run on domains takes them, the
// domains following the particles after every step.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli/bench_scaling.hpp"
#include "cli/bench_step.hpp"
#include "cli/cli_common.hpp"
#include "core/force_errors.hpp"
#include "core/rank_exchange.hpp"
#include "core/wall_clock.hpp"
#include "engines/engines.hpp"
#include "parallel/distributed_diagnostics.hpp"
#include "parallel/domain_tree.hpp"
#include "parallel/domains.hpp"

namespace grove {

namespace {

// This rank's share of a model of `total` particles over the ranks of comm. The model is made in
// chunks, each its own sample of the model from its own seed, so that it is the same set of
// particles for every number of ranks (each rank makes a run of the chunks); masses and IDs make
// the chunks one model.
ParticleSet own_share(const std::string& model, long long total, const Communicator& comm)
{
    const long long chunks = std::max(64, comm.size()), k = comm.size(), r = comm.rank();
    const long long first = chunks * r / k, last = chunks * (r + 1) / k;
    std::vector<ParticleSet> made(static_cast<std::size_t>(last - first));
    std::vector<std::exception_ptr> failed(made.size());
    // The chunks on threads of their own (each a model of its own seed): a rank makes its millions
    // of particles in a fraction of one thread's time. A chunk's error is thrown after the loop.
#pragma omp parallel for schedule(dynamic, 1)
    for (long long j = first; j < last; ++j) {
        const long long begin = total * j / chunks, end = total * (j + 1) / chunks;
        if (end == begin) continue;
        try {
            ParticleSet p =
                make_bench_model(model, static_cast<std::size_t>(end - begin), static_cast<std::uint64_t>(1 + j));
            p.mass *= static_cast<double>(end - begin) / static_cast<double>(total);
            for (std::size_t i = 0; i < p.size(); ++i) p.id[i] = static_cast<std::uint64_t>(begin) + i + 1;
            made[static_cast<std::size_t>(j - first)] = std::move(p);
        } catch (...) {
            failed[static_cast<std::size_t>(j - first)] = std::current_exception();
        }
    }
    for (const std::exception_ptr& e : failed)
        if (e) std::rethrow_exception(e);
    std::vector<ParticleSet> parts;
    for (ParticleSet& p : made)
        if (p.size() > 0) parts.push_back(std::move(p));
    while (parts.size() > 1) { // joined pairwise: each particle copied log2(chunks) times, not chunks times
        std::vector<ParticleSet> joined;
        for (std::size_t i = 0; i + 1 < parts.size(); i += 2) joined.push_back(concatenate(parts[i], parts[i + 1]));
        if (parts.size() % 2) joined.push_back(std::move(parts.back()));
        parts = std::move(joined);
    }
    return parts.empty() ? ParticleSet{} : std::move(parts.front());
}

struct SampleErrors {
    std::vector<double> all;
    std::map<int, std::vector<double>> by_type;
};

// Relative acceleration errors of the particles with IDs stride, 2 stride, ... (`sample` of them)
// against the direct sum in double: each rank sums its own particles' pull on the sample (the
// sample appended massless to them), and the parts are added up.
SampleErrors sample_errors(const ParticleSet& p, const Forces& f, long long total, int sample, EngineConfig config,
                           const Communicator& comm)
{
    const auto s = static_cast<std::size_t>(std::min<long long>(std::max(sample, 1), total));
    const auto stride = static_cast<std::uint64_t>(total) / s;
    std::vector<double> pos(3 * s, 0.0), tree(3 * s, 0.0), type(s, 0.0);
    for (std::size_t i = 0; i < p.size(); ++i) {
        const std::uint64_t id = p.id[i];
        if (id % stride != 0 || id / stride > s) continue;
        const std::size_t slot = id / stride - 1;
        for (int a = 0; a < 3; ++a) {
            pos[3 * slot + a] = p.pos(a, static_cast<Eigen::Index>(i));
            tree[3 * slot + a] = f.acc(a, static_cast<Eigen::Index>(i));
        }
        type[slot] = p.type[i];
    }
    comm.sum(pos.data(), pos.size());
    comm.sum(tree.data(), tree.size());
    comm.sum(type.data(), type.size());
    const auto n = static_cast<Eigen::Index>(p.size()), m = static_cast<Eigen::Index>(s);
    Eigen::Matrix3Xd q(3, n + m);
    q.leftCols(n) = p.pos;
    q.rightCols(m) = Eigen::Map<const Eigen::Matrix3Xd>(pos.data(), 3, m);
    Eigen::VectorXd mass = Eigen::VectorXd::Zero(n + m);
    mass.head(n) = p.mass;
    std::vector<std::int32_t> targets(s);
    for (std::size_t k = 0; k < s; ++k) targets[k] = static_cast<std::int32_t>(n) + static_cast<std::int32_t>(k);
    // Softened by type, the sum needs every particle's type, the sample's too.
    std::vector<std::uint8_t> types(p.type);
    for (std::size_t k = 0; k < s; ++k) types.push_back(static_cast<std::uint8_t>(type[k]));
    config.engine = engines().gpu_available() ? "direct-gpu" : "direct-cpu";
    config.precision = "double";
    Forces exact;
    make_force_engine(config)->compute_subset(q, mass, config.gravity.per_type() ? TypesRef(types) : TypesRef{},
                                              targets, exact);
    comm.sum(exact.acc.data(), 3 * s);
    const Eigen::Matrix3Xd approx = Eigen::Map<const Eigen::Matrix3Xd>(tree.data(), 3, m);
    SampleErrors e;
    e.all = relative_errors(approx, exact.acc);
    for (std::size_t k = 0; k < s; ++k) e.by_type[static_cast<int>(type[k])].push_back(e.all[k]);
    return e;
}

// A phase's seconds in the engine's last computation (0 when it has none by that name).
double phase_seconds(const PhaseTimes& times, const std::string& name)
{
    for (const auto& [phase, seconds] : times)
        if (phase == name) return seconds;
    return 0;
}

} // namespace

int bench_domain_scaling(const BenchConfig& c)
{
    const Communicator& world = Communicator::world();
    if (engines().resolve(c.engine).rfind("tree", 0) != 0)
        throw std::runtime_error("--decomposition domains: a tree engine (tree, tree-cpu, tree-gpu), not " +
                                 engines().resolve(c.engine));
    if (c.n < 64LL * world.size()) throw std::runtime_error("--decomposition domains: -n must be >= 64 per rank");
    const bool galaxy = c.model == "galaxy";
    EngineConfig config;
    config.engine = c.engine;
    config.theta = c.theta;
    config.nleaf = c.nleaf;
    config.ncrit = c.ncrit;
    config.gravity = {make_bench_model(c.model, 64).units.G, c.eps.value_or(galaxy ? 0.05 : 1.0 / 64)};
    if (world.size() > 1 && engines().device_count() > 0) config.device = world.local_rank() % engines().device_count();
    const int repeat = std::max(1, c.repeat);
    if (world.is_root())
        std::printf(
            "grove bench scaling: %s, %s scaling, %lld particles %s, engine %s on Peano-Hilbert domains with locally "
            "essential trees, theta %g; the slowest rank's median of %d force computations after the "
            "domains were cut twice by cost; errors of %d particles against the direct sum\n\n"
            "| ranks | N | ms | efficiency | build | LET walks | exchange | load + evaluate | imbalance | LET MB "
            "sent / rank (max) | LET particles received (max) | p50 | p99 |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
            c.model.c_str(), c.weak ? "weak" : "strong", c.n, c.weak ? "per rank" : "in all",
            engines().resolve(c.engine).c_str(), c.theta, repeat, c.sample);
    std::vector<int> counts; // 1, 2, 4, ... and all
    for (int k = 1; k < world.size(); k *= 2) counts.push_back(k);
    counts.push_back(world.size());
    double t1 = 0;
    std::vector<std::string> component_lines;
    for (const int k : counts) {
        const std::unique_ptr<Communicator> sub = world.first(k);
        const long long total = c.weak ? c.n * k : c.n;
        // Per rank: wall, build, LET walks, exchange, evaluate, work (all but the exchange), MB sent,
        // LET particles received; the slowest of each over the ranks, and the mean work.
        std::vector<double> slowest(8, 0.0);
        double mean_work = 0;
        SampleErrors errors;
        if (sub) {
            ParticleSet p = own_share(c.model, total, *sub);
            move_to_domains(p, *sub);
            auto engine = make_domain_tree_engine(make_force_engine(config), config, *sub);
            Forces f;
            engine->compute(p.pos, p.mass, p.type, f);
            for (int round = 0; round < 2; ++round) { // cut again by what each rank's particles cost
                move_to_domains(p, *sub, std::vector<double>(p.size(), engine->last_cost_per_particle()));
                engine->compute(p.pos, p.mass, p.type, f);
            }
            // Held in the order of the rank's tree, as a run holds them after its first step.
            p = select_particles(p, engine->last_tree_order());
            std::vector<double> walls;
            for (int r = 0; r < repeat; ++r) {
                sub->barrier();
                const auto start = WallClock::now();
                engine->compute(p.pos, p.mass, p.type, f);
                double wall = seconds_since(start);
                sub->max(&wall, 1);
                walls.push_back(wall);
            }
            std::sort(walls.begin(), walls.end());
            const PhaseTimes times = engine->last_phase_times();
            const double build = phase_seconds(times, "build"), walks = phase_seconds(times, "LET walks"),
                         exchange = phase_seconds(times, "exchange"), append = phase_seconds(times, "append");
            double all_phases = 0;
            for (const auto& phase : times) all_phases += phase.second;
            const double evaluate = all_phases - build - walks - exchange - append; // load and the engine's
            const double work = all_phases - exchange;
            slowest = {walls[walls.size() / 2],
                       build,
                       walks,
                       exchange,
                       evaluate,
                       work,
                       1e-6 * static_cast<double>(engine->last_traffic().bytes_sent),
                       static_cast<double>(engine->last_traffic().particles_received)};
            mean_work = work;
            sub->sum(&mean_work, 1);
            mean_work /= k;
            sub->max(slowest.data(), slowest.size());
            errors = sample_errors(p, f, total, c.sample, config, *sub);
        }
        world.barrier();
        if (!world.is_root()) continue;
        const double ms = 1e3 * slowest[0];
        if (k == 1) t1 = ms;
        const double efficiency = c.weak ? t1 / ms : t1 / ms / k;
        const auto pct = percentiles(errors.all, {50, 99});
        std::printf("| %d | %lld | %.1f | %.0f %% | %.1f | %.1f | %.1f | %.1f | %.2f | %.1f | %.0f | %.2e | %.2e |\n",
                    k, total, ms, 100 * efficiency, 1e3 * slowest[1], 1e3 * slowest[2], 1e3 * slowest[3],
                    1e3 * slowest[4], slowest[5] / mean_work, slowest[6], slowest[7], pct[0], pct[1]);
        std::fflush(stdout);
        std::string line = std::to_string(k) + " ranks:";
        for (const auto& [type, values] : errors.by_type) {
            const auto q = percentiles(values, {50, 99});
            char text[96];
            std::snprintf(text, sizeof text, "  %s p50 %.2e p99 %.2e", component_name(type), q[0], q[1]);
            line += text;
        }
        component_lines.push_back(line);
    }
    if (world.is_root() && galaxy) {
        std::printf("\nerrors by component (the same sample):\n");
        for (const std::string& line : component_lines) std::printf("%s\n", line.c_str());
    }
    return 0;
}

int bench_domain_step(const BenchConfig& c)
{
    const Communicator& world = Communicator::world();
    const auto [dt, eps] = step_settings(c);
    if (c.timestep != "shared")
        throw std::runtime_error("grove bench step --decomposition domains times shared steps (--timestep shared)");
    ParticleSet p = own_share(c.model, c.n, world);
    const DomainKeys cut = move_to_domains(p, world);
    // tree-gpu's steps live on each rank's GPU, which builds each next tree while it evaluates.
    const bool lookahead = c.lookahead && c.rebuild_every == 1 && engines().resolve(c.engine) == "tree-gpu";
    IntegratorConfig ic = step_config(c, p, dt, eps, lookahead);
    DomainTreeEngine* domains = nullptr; // the integrator's engine
    if (world.size() > 1 && engines().device_count() > 0)
        ic.engine.device = world.local_rank() % engines().device_count();
    if (world.is_root()) report_engine_choice(c.engine);
    auto integrator = make_integrator(
        ic, engines(),
        [&](std::unique_ptr<ForceEngine> engine) -> std::unique_ptr<ForceEngine> {
            auto made = make_domain_tree_engine(std::move(engine), ic.engine, world);
            domains = made.get();
            return made;
        },
        nullptr);
    if (world.size() > 1) domains->set_domain_keys(cut); // as a run starts
    integrator->start(p);
    Forces first;
    first.acc = p.acc;
    const SampleErrors errors = sample_errors(p, first, c.n, c.sample, ic.engine, world);
    const double e0 = compute_diagnostics(p, p.pot, world).total;
    // Each step as a run on domains takes it: the leapfrog, then the domains cut anew and the
    // particles that crossed a cut moved (parallel/domains.hpp: DomainFollower).
    // Where the steps live on the ranks' GPUs, the particles stay there, each step's crossers
    // move there, and the domains follow them every device_follow_steps() steps, or only at files
    // where the GPUs cut the domains anew themselves (parallel/domains.hpp).
    const bool resident = integrator->resident();
    const int follow_every = device_follow_steps();
    PhaseTimes sums;
    DomainFollower follower;
    double wall = 0, slowest = 0, follow = 0, settle = 0, moved = 0, own_most = 0, own_mean = 0;
    // The ranks' work: the most of any over the mean (the first step's on domains of equal counts).
    const auto work_imbalance = [&] {
        double most = domains->last_work().total(), sum = most;
        world.max(&most, 1);
        world.sum(&sum, 1);
        return sum > 0 ? most * world.size() / sum : 1.0;
    };
    double first_imbalance = 1;
    int follows = 0; // within the measured steps
    for (int s = 1; s <= c.warmup + c.steps; ++s) {
        world.barrier();
        const auto start = WallClock::now();
        integrator->advance_to(s * dt, p);
        if (s == 1) first_imbalance = work_imbalance();
        // This rank's force computation without the LETs' exchange (where it waits for the others):
        // what the domains' cut should even out.
        double own[2] = {domains->last_cost_per_particle() * static_cast<double>(domains->last_particle_count()), 0};
        own[1] = own[0];
        world.barrier(); // the slowest rank's step belongs to the step, not to the domains' cut
        const auto moving = WallClock::now();
        double settled = 0, cut_and_moved = 0;
        const bool followed = !resident || (world.size() > 1 && device_follow_due(s));
        if (followed && s > c.warmup) ++follows;
        if (followed) {
            integrator->settle_order(p);
            integrator->synchronize(p);
            settled = seconds_since(moving);
            const auto cut = WallClock::now();
            // On the host's pipeline each cut takes a frame of its own, which the trees then take (as
            // a run cuts: in the cube itself where the cut is by work).
            const bool move_frame = !resident && !c.cut_by_work;
            const bool changed =
                follower.follow(p, world, c.cut_by_work ? domains->last_work().total() : 0, move_frame);
            if (move_frame) domains->set_domains_frame(follower.frame());
            domains->set_domain_keys(follower.own_keys());
            cut_and_moved = seconds_since(cut);
            if (changed) integrator->resume({}, p);
        }
        double times[4] = {seconds_since(start), seconds_since(moving), settled, cut_and_moved};
        world.max(times, 4);
        world.max(own, 1);
        world.sum(own + 1, 1);
        if (s <= c.warmup) continue;
        own_most += own[0];
        own_mean += own[1] / world.size();
        wall += times[0];
        slowest = std::max(slowest, times[0]);
        follow += times[1];
        settle += times[2];
        moved += times[3];
        for (const auto& [name, seconds] : integrator->last_phases()) add_phase(sums, name, seconds);
    }
    // The slowest rank's time in each phase. The engines name the same phases in the same order,
    // but a rank without particles evaluates nothing and names fewer: the reduction takes the most.
    double phase_count = static_cast<double>(sums.size());
    world.max(&phase_count, 1);
    std::vector<double> phase_seconds(static_cast<std::size_t>(phase_count), 0.0);
    for (std::size_t k = 0; k < sums.size(); ++k) phase_seconds[k] = sums[k].second;
    // And the fastest rank's: where a phase waits for the others (the LETs' exchange), the
    // fastest rank's time is about what the phase itself takes, the difference the wait.
    std::vector<double> fastest_seconds = phase_seconds;
    if (!phase_seconds.empty()) {
        world.max(phase_seconds.data(), phase_seconds.size());
        world.min(fastest_seconds.data(), fastest_seconds.size());
    }
    integrator->synchronize(p); // the counts below are the particles' now
    const LetTraffic& let = domains->last_traffic();
    double traffic[6] = {static_cast<double>(let.bytes_sent),     static_cast<double>(let.bytes_received),
                         static_cast<double>(let.nodes_received), static_cast<double>(let.particles_received),
                         static_cast<double>(let.crossers_sent),  static_cast<double>(let.crossers_received)};
    world.max(traffic, 6);
    // How even the domains' work and counts came out at the end.
    const double last_imbalance = work_imbalance();
    double pairs[2] = {domains->last_work().cell_pairs, domains->last_work().particle_pairs};
    world.max(pairs, 2);
    double counts[2] = {static_cast<double>(p.size()), -static_cast<double>(p.size())};
    world.max(counts, 2);
    // Rank by rank: what each held, summed and took in its list kernels (ms a step), and the LETs
    // it received.
    constexpr std::size_t kRow = 10;
    std::vector<double> rows(kRow * static_cast<std::size_t>(world.size()), 0.0);
    double* row = rows.data() + kRow * static_cast<std::size_t>(world.rank());
    row[0] = static_cast<double>(p.size());
    row[1] = domains->last_work().cell_pairs;
    row[2] = domains->last_work().particle_pairs;
    row[3] = 1e3 * grove::phase_seconds(sums, "nodes") / c.steps;
    row[4] = 1e3 * grove::phase_seconds(sums, "leaves") / c.steps;
    row[5] = static_cast<double>(let.bytes_received) / 1e6;
    row[6] = 1e3 * grove::phase_seconds(sums, "evaluate") / c.steps; // the host's lists
    row[7] = domains->last_work().groups;
    row[8] = domains->last_work().cell_entries;
    row[9] = domains->last_work().leaf_entries;
    world.sum(rows.data(), rows.size());
    // On the GPUs a follow comes every follow_every steps, which a short bench may not reach: one
    // more follow, and the step after it (which loads the particles and builds its first tree
    // from them), measured against the mean step, give its share of a step (after the counts of
    // the last measured step are taken).
    double follow_share = 0, one_follow = 0, step_after = 0;
    double drifted_counts[2] = {0, 0}; // the most and (negated) the fewest particles a rank, before it
    const int extra_step = resident && world.size() > 1 && c.steps > 0 && follow_every > 0 ? 1 : 0;
    if (extra_step) {
        const int s = c.warmup + c.steps + 1;
        world.barrier();
        auto start = WallClock::now();
        integrator->settle_order(p);
        integrator->synchronize(p);
        drifted_counts[0] = static_cast<double>(p.size());
        drifted_counts[1] = -drifted_counts[0];
        if (follower.follow(p, world)) integrator->resume({}, p);
        world.barrier();
        one_follow = seconds_since(start);
        world.max(drifted_counts, 2);
        start = WallClock::now();
        integrator->advance_to(s * dt, p);
        world.barrier();
        step_after = seconds_since(start);
        follow_share = (one_follow + std::max(0.0, step_after - wall / c.steps)) / follow_every;
    }
    integrator->synchronize(p);
    const double de = std::abs((compute_diagnostics(p, p.pot, world).total - e0) / e0);
    if (!world.is_root()) return 0;

    const double per = 1e3 / c.steps;
    const std::string criterion = opening_text(c);
    std::printf("grove bench step: %s, N = %lld on %d Peano-Hilbert domains, %s, eps %.6g, dt %.6g, engine %s; "
                "mean of %d steps after %d warm-up steps, the slowest rank's\n\n",
                c.model.c_str(), c.n, world.size(), criterion.c_str(), eps, dt, integrator->engine_name().c_str(),
                c.steps, c.warmup);
    std::printf("| phase | ms per step (slowest rank) | (fastest rank) |\n|---|---|---|\n");
    for (std::size_t k = 0; k < sums.size(); ++k)
        std::printf("| %s | %.3f | %.3f |\n", sums[k].first.c_str(), per * phase_seconds[k], per * fastest_seconds[k]);
    std::printf("| domains followed (cut anew, particles moved) | %.3f | |\n", per * follow);
    std::printf("| of which: the tree's order settled | %.3f | |\n", per * settle);
    std::printf("| of which: keys, cuts, particles exchanged | %.3f | |\n", per * moved);
    std::printf("| whole step | %.3f | |\n\n", per * wall);
    std::printf("the LETs of the last step, the most of any rank: %.1f MB sent, %.1f MB received, %.0f nodes and "
                "%.0f particles received\n\n",
                traffic[0] / 1e6, traffic[1] / 1e6, traffic[2], traffic[3]);
    if (resident)
        std::printf("the particles that crossed to another domain with the last step, the most of any rank: %.0f "
                    "sent, %.0f received\n\n",
                    traffic[4], traffic[5]);
    std::printf("the last step's pairs, the most of any rank: %.4g target-cell, %.4g target-particle\n\n", pairs[0],
                pairs[1]);
    std::printf("the ranks' work (the pairs, a cell's as %.1f particles'), the most of any over the mean: %.3f at the "
                "first step (equal counts), %.3f at the last (cut to equal %s); particles a rank: %.0f to %.0f\n\n",
                ListWork::kCellPairCost, first_imbalance, last_imbalance,
                c.cut_by_work || (resident && follow_every == 0 && world.size() > 1) ? "work" : "counts", -counts[1],
                counts[0]);
    if (world.size() <= 16) {
        // A list entry's pairs: the targets that share it (cells), times its sources (leaves).
        std::printf("| rank | particles | groups | target-cell pairs | a cell entry's | target-particle pairs | a leaf "
                    "entry's | nodes ms | leaves ms | evaluate ms (host) | LET MB received |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|\n");
        const auto per_entry = [](double pairs, double entries) { return entries > 0 ? pairs / entries : 0.0; };
        for (int r = 0; r < world.size(); ++r) {
            const double* v = rows.data() + kRow * static_cast<std::size_t>(r);
            std::printf("| %d | %.0f | %.0f | %.4g | %.1f | %.4g | %.1f | %.3f | %.3f | %.3f | %.1f |\n", r, v[0], v[7],
                        v[1], per_entry(v[1], v[8]), v[2], per_entry(v[2], v[9]), v[3], v[4], v[6], v[5]);
        }
        std::printf("\n");
    }
    if (resident && follow_every == 0)
        std::printf("the steps on each rank's GPU, the LETs made and appended there; the domains cut anew there "
                    "every %d steps and followed only at files\n\n",
                    domain_recut_steps());
    else if (resident)
        std::printf("the steps on each rank's GPU, the LETs made and appended there; the domains followed every "
                    "%d steps: one follow took %.1f ms and the step after it %.1f ms, %.3f ms a step over %d steps "
                    "(in ms per step below where no follow came within the measured steps); before it, particles "
                    "a rank: %.0f to %.0f\n\n",
                    follow_every, 1e3 * one_follow, 1e3 * step_after, 1e3 * follow_share, follow_every,
                    -drifted_counts[1], drifted_counts[0]);
    else
        std::printf("the ranks' force computations, the LETs' exchange aside: the slowest %.3f ms, the mean %.3f ms "
                    "(imbalance %.2f)\n\n",
                    per * own_most, per * own_mean, own_mean > 0 ? own_most / own_mean : 1.0);
    const auto q = percentiles(errors.all, {50, 99});
    std::printf("| model | N | ranks | criterion | engine | ms per step | slowest step | particles/s | abs(dE/E) after "
                "%d steps | first p50 / p99 |\n|---|---|---|---|---|---|---|---|---|---|\n",
                c.warmup + c.steps + extra_step);
    // Where no follow came within the measured steps, each step takes its share of one.
    const double step_seconds = wall / c.steps + (follows == 0 ? follow_share : 0.0);
    std::printf("| %s | %lld | %d | %s | %s | **%.2f** | %.2f | %.3g | %.2e | %.2e / %.2e |\n", c.model.c_str(), c.n,
                world.size(), criterion.c_str(), integrator->engine_name().c_str(), 1e3 * step_seconds, 1e3 * slowest,
                static_cast<double>(c.n) / step_seconds, de, q[0], q[1]);
    return 0;
}

} // namespace grove
