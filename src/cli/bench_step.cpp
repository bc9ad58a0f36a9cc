#include "cli/bench_step.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include <omp.h>

#include "cli/cli_common.hpp"
#include "core/diagnostics.hpp"
#include "core/force_engine.hpp"
#include "core/force_errors.hpp"
#include "core/galaxy_model.hpp"
#include "core/ic_models.hpp"
#include "core/memory_plan.hpp"
#include "core/tree_engine.hpp"
#include "core/wall_clock.hpp"
#include "engines/engines.hpp"
#include "integrators/integrator.hpp"

namespace grove {

namespace {

std::string compact(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", v);
    return text;
}

// Where a phase runs, by the names the tree engines give their phases.
const char* phase_place(const std::string& name)
{
    for (const char* gpu :
         {"kick-drift", "refit", "opening radii", "pass 1", "scan", "pass 2", "nodes", "leaves", "kick"})
        if (name == gpu) return "GPU";
    if (name.rfind(kLostEvaluationPhase, 0) == 0) return "GPU"; // and why, after it
    for (const char* transfer : {"upload", "download"})
        if (name == transfer) return "transfer";
    // Beside the GPU's work (the look-ahead build and its parts, the resident step's sort).
    if (name.rfind("look-ahead", 0) == 0 || name == "keys and sort") return "background";
    return "host";
}

} // namespace

ParticleSet make_bench_model(const std::string& model, std::size_t n, std::uint64_t seed)
{
    if (model == "plummer") return make_plummer(n, seed);
    if (model == "galaxy") return make_galaxy(n, seed, GalaxyParams{});
    if (model == "uniform") return make_uniform_cube(n, seed, false);
    throw std::runtime_error("--model takes plummer, galaxy or uniform (got '" + model + "')");
}

namespace {

// A phase's sum over the timed steps and its slowest step: a phase beside the GPU (the look-ahead
// build) costs a step only when it outlasts the GPU's work, which the mean alone does not show.
struct StepTimes {
    PhaseTimes sums, slowest;
    double wall = 0, slowest_step = 0;
};

StepTimes time_steps(Integrator& integrator, ParticleSet& p, const BenchConfig& c, double dt)
{
    StepTimes t;
    for (int s = 1; s <= c.warmup + c.steps; ++s) {
        const auto start = WallClock::now();
        integrator.advance_to(s * dt, p);
        if (s <= c.warmup) continue;
        const double step_seconds = seconds_since(start);
        t.wall += step_seconds;
        t.slowest_step = std::max(t.slowest_step, step_seconds);
        for (const auto& [name, seconds] : integrator.last_phases()) {
            const std::size_t k = add_phase(t.sums, name, seconds);
            if (k == t.slowest.size())
                t.slowest.emplace_back(name, seconds);
            else
                t.slowest[k].second = std::max(t.slowest[k].second, seconds);
        }
    }
    return t;
}

// The phase table; returns the milliseconds per step on the host, in transfers and on the GPU.
std::array<double, 3> print_phases(const StepTimes& t, int steps)
{
    const double per = 1e3 / steps;
    std::printf("| phase | where | ms per step | slowest step |\n|---|---|---|---|\n");
    std::array<double, 3> split{}; // host, transfer, GPU
    for (std::size_t k = 0; k < t.sums.size(); ++k) {
        const auto& [name, seconds] = t.sums[k];
        const std::string place = phase_place(name);
        std::printf("| %s | %s | %.3f | %.3f |\n", name.c_str(), place.c_str(), per * seconds,
                    1e3 * t.slowest[k].second);
        if (place == "background") continue;
        split[place == "GPU" ? 2 : place == "transfer" ? 1 : 0] += per * seconds;
    }
    std::printf("| whole step | | %.3f | %.3f |\n", per * t.wall, 1e3 * t.slowest_step);
    return split;
}

} // namespace

StepSettings step_settings(const BenchConfig& c)
{
    if (c.n < 2) throw std::runtime_error("-n must be >= 2");
    const double dt = c.dt.value_or(c.model == "galaxy" ? 2.5e-4 : 1.0 / 64);
    if (!(dt > 0)) throw std::runtime_error("--dt must be > 0");
    if (c.steps < 1 || c.warmup < 0) throw std::runtime_error("--steps must be >= 1 and --warmup >= 0");
    const double eps = c.eps.value_or(c.model == "galaxy" ? 0.05 : 1.0 / 64);
    if (!(eps >= 0)) throw std::runtime_error("--eps must be >= 0");
    return {dt, eps};
}

std::string opening_text(const BenchConfig& c)
{
    if (c.mac != "relative") return "theta " + compact(c.theta);
    return "alpha " + compact(c.alpha) + (c.theta_max < kMaxTheta ? " theta-max " + compact(c.theta_max) : "");
}

IntegratorConfig step_config(const BenchConfig& c, const ParticleSet& p, double dt, double eps, bool lookahead)
{
    IntegratorConfig ic;
    ic.integrator = "leapfrog";
    ic.engine.engine = c.engine;
    ic.engine.theta = c.theta;
    ic.engine.mac = c.mac;
    ic.engine.alpha = c.alpha;
    ic.engine.theta_max = c.theta_max;
    ic.engine.nleaf = c.nleaf;
    ic.engine.ncrit = c.ncrit;
    ic.engine.gravity = {p.units.G, eps};
    if (!c.eps_type.empty()) set_eps_type_option(c.eps_type, ic.engine.gravity);
    ic.engine.rebuild_every = c.rebuild_every;
    ic.engine.lookahead = lookahead;
    ic.engine.resident = c.resident;
    ic.engine.gpu_memory = c.gpu_memory;
    ic.engine.list_memory = c.list_memory;
    ic.dt = dt;
    ic.timestep = c.timestep;
    ic.dt_max = dt; // block steps: every particle's step ends at each dt
    ic.eta = c.eta;
    ic.eta_dyn = c.eta_dyn;
    ic.keep_engine_order = c.keep_engine_order;
    return ic;
}

int bench_step(const BenchConfig& c)
{
    const auto [dt, eps] = step_settings(c);
    if (c.rebuild_every < 1) throw std::runtime_error("--rebuild-every must be >= 1");
    check_memory_plan(Workload::run, static_cast<std::size_t>(c.n), "grove bench step", engines().resolve(c.engine),
                      "leapfrog", c.resident);
    check_device_plan(Workload::run, static_cast<std::size_t>(c.n), "grove bench step", engines().resolve(c.engine),
                      c.gpu_memory, -1);
    ParticleSet p = make_bench_model(c.model, static_cast<std::size_t>(c.n));
    // Only tree-gpu looks ahead (tree-cpu has no GPU time to hide a build behind), and only when
    // it builds every step.
    const bool lookahead = c.lookahead && c.rebuild_every == 1 && engines().resolve(c.engine) == "tree-gpu";
    const IntegratorConfig ic = step_config(c, p, dt, eps, lookahead);
    report_engine_choice(c.engine);
    // Force errors against the double-precision direct sum on a fixed sample of particles. Each
    // reference from an engine of its own, made and dropped while no tree engine holds the
    // device: the tree's lists take what memory is free.
    const std::vector<std::int32_t> targets =
        sample_indices(p.size(), static_cast<std::size_t>(std::max(1, c.sample)), 7);
    EngineConfig direct = ic.engine;
    direct.engine = "direct";
    direct.precision = "double";
    auto reference = [&] { // at the particles' current positions
        Forces ref;
        engines().make_force(direct)->compute_subset(p.pos, p.mass, p.type, targets, ref);
        return ref.acc;
    };
    auto sample_errors = [&](const Eigen::Matrix3Xd& all_acc, const Eigen::Matrix3Xd& ref) {
        return percentiles(relative_errors(select_columns(all_acc, targets), ref), {50, 90, 99});
    };
    const Eigen::Matrix3Xd first_reference = reference();
    auto integrator = make_integrator(ic, engines());
    integrator->start(p);
    const auto errors = sample_errors(p.acc, first_reference);
    const double e0 = compute_diagnostics(p, p.pot).total;
    const StepTimes times = time_steps(*integrator, p, c, dt);
    const std::string block_summary = integrator->summary();
    const std::vector<SubstepCost> ticks = integrator->substep_costs();
    const MemoryUse memory = memory_use(integrator->force_engine(), p.size());
    integrator->restore_order(p); // the sample's indices are in the model's order
    const bool resident = integrator->resident();
    const std::string engine_name = integrator->engine_name();
    integrator.reset(); // its device memory, before the fresh engine below takes its own
    const double de = std::abs((compute_diagnostics(p, p.pot).total - e0) / e0);
    // What reuse costs: the last step's forces (from a tree refitted `age` times) and a fresh build's
    // at the same positions, against the direct sum.
    const int age = (c.warmup + c.steps) % c.rebuild_every;
    const Eigen::Matrix3Xd last_reference = reference();
    const auto last_errors = sample_errors(p.acc, last_reference);
    EngineConfig fresh_config = ic.engine;
    fresh_config.rebuild_every = 1;
    Forces fresh;
    const auto fresh_engine = engines().make_force(fresh_config);
    fresh_engine->set_acceleration_estimate(p.acc); // the relative criterion's |a|, as in the run
    fresh_engine->compute(p.pos, p.mass, p.type, fresh);
    const auto fresh_errors = sample_errors(fresh.acc, last_reference);

    const std::string criterion = opening_text(c);
    std::printf(
        "grove bench step: %s, N = %lld, %s, eps %.6g%s%s, dt %.6g, nleaf %d, ncrit %d, rebuild every %d; "
        "particles between steps in the %s order; look-ahead %s; resident %s; engine %s; %d OpenMP threads; mean of %d "
        "steps after %d "
        "warm-up steps\n\n",
        c.model.c_str(), c.n, criterion.c_str(), eps, c.eps_type.empty() ? "" : " by type ", c.eps_type.c_str(), dt,
        c.nleaf, resolved_ncrit(c.ncrit, static_cast<std::size_t>(c.n)), c.rebuild_every,
        c.keep_engine_order ? "tree's" : "model's", lookahead ? "on" : "off", resident ? "on" : "off",
        engine_name.c_str(), omp_get_max_threads(), c.steps, c.warmup);
    std::printf("%s\n\n", describe(memory).c_str());
    if (c.timestep == "block") // the work per bin: one row below is one dt_max
        std::printf(
            "block steps (eta %g, eta-dyn %g; a row's step is one dt_max; counted over the warm-up and timed steps): "
            "%s\n\n",
            c.eta, c.eta_dyn, block_summary.c_str());
    if (!ticks.empty()) { // what a tick costs against one where every bin is due (the first row)
        const auto ms_per = [](const SubstepCost& t) { return 1e3 * t.seconds / static_cast<double>(t.count); };
        std::printf("ticks by the longest bin due at them, over the warm-up and timed steps; a tick's wall time runs "
                    "from its drift to its kicks\n\n");
        std::printf("| ticks due | ticks | particles due per tick | share of N | ms per tick | of the all-due tick |\n"
                    "|---|---|---|---|---|---|\n");
        for (const SubstepCost& t : ticks) {
            const double per = static_cast<double>(t.particles) / static_cast<double>(t.count);
            std::printf("| %s | %lld | %.0f | %.2f %% | %.3f | %.1f %% |\n", t.kind.c_str(), t.count, per,
                        100 * per / static_cast<double>(p.size()), ms_per(t), 100 * ms_per(t) / ms_per(ticks.front()));
        }
        std::printf("\n");
        // The engine's phases per tick of each kind, where it times them (tree-gpu's device).
        PhaseTimes names;
        for (const SubstepCost& t : ticks)
            for (const auto& [name, seconds] : t.phases) add_phase(names, name, 0);
        if (!names.empty()) {
            std::printf("| ticks due |");
            for (const auto& [name, unused] : names) std::printf(" %s |", name.c_str());
            std::printf("\n|---|");
            for (std::size_t k = 0; k < names.size(); ++k) std::printf("---|");
            std::printf("\n");
            for (const SubstepCost& t : ticks) {
                std::printf("| %s |", t.kind.c_str());
                for (const auto& [name, unused] : names) {
                    double seconds = 0;
                    for (const auto& [own, s] : t.phases)
                        if (own == name) seconds = s;
                    std::printf(" %.3f |", 1e3 * seconds / static_cast<double>(t.count));
                }
                std::printf("\n");
            }
            std::printf("\n");
        }
    }
    const auto [host, transfer, gpu] = print_phases(times, c.steps);
    std::printf("\nforce errors against the double-precision direct sum for %zu random particles: at the first "
                "step (fresh build); at the last step, from a tree refitted %d times since its build; and from a "
                "fresh build at the last step's positions\n\n",
                targets.size(), age);
    std::printf(
        "| model | N | criterion | K | engine | ms per step | particles/s | host | transfers | GPU | device "
        "B/particle | lists GB | host B/particle | abs(dE/E) after %d steps | first p50 / p99 | last p50 / p99 | "
        "fresh p50 / p99 |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        c.warmup + c.steps);
    const double ms = 1e3 * times.wall / c.steps;
    std::printf(
        "| %s | %lld | %s | %d | %s | **%.2f** | %.3g | %.2f | %.2f | %.2f | %.0f | %.3g | %.0f | %.2e | %.2e / "
        "%.2e | %.2e / %.2e | %.2e / %.2e |\n",
        c.model.c_str(), c.n, criterion.c_str(), c.rebuild_every, engine_name.c_str(), ms,
        static_cast<double>(c.n) / (ms * 1e-3), host, transfer, gpu, memory.device_per_particle,
        memory.list_bytes * 1e-9, memory.host_per_particle, de, errors[0], errors[2], last_errors[0], last_errors[2],
        fresh_errors[0], fresh_errors[2]);
    return 0;
}

} // namespace grove
