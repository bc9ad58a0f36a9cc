#include "cli/run_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace grove {

namespace {

// Every run ends exactly at --t-end: a span that is not a whole number of steps is refused with the
// nearest choices that are (a last step of another length would break the leapfrog's symmetry and
// Hermite's block times).
void check_whole_steps(const RunPlan& plan, double steps_exact)
{
    const double t_end = plan.t_end, t_start = plan.t_start, interval = plan.interval;
    if (std::abs(plan.time_of(plan.total_steps) - t_end) <= 1e-9 * std::max(1.0, std::abs(t_end))) return;
    const long long below = static_cast<long long>(std::floor(steps_exact)), above = below + 1;
    char what[256];
    std::snprintf(
        what, sizeof what,
        "--t-end %.10g is not a whole number of %s steps of %.10g after %.10g: use --t-end %.10g or "
        "%.10g%s",
        t_end, plan.by_dt_max ? "--dt-max" : "--dt", interval, t_start,
        t_start + static_cast<double>(std::max(1LL, below)) * interval, t_start + static_cast<double>(above) * interval,
        plan.by_dt_max ? "" : (", or --dt " + std::to_string((t_end - t_start) / static_cast<double>(above))).c_str());
    throw std::runtime_error(what);
}

} // namespace

RunPlan RunPlan::make(const RunConfig& config, double t_start)
{
    RunPlan plan;
    plan.by_dt_max = config.integrator.steps_by_dt_max();
    plan.t_start = t_start;
    plan.t_end = config.t_end;
    plan.interval = plan.by_dt_max ? config.integrator.dt_max : config.integrator.dt;
    if (!(plan.interval > 0) || !std::isfinite(plan.interval))
        throw std::runtime_error("--dt / --dt-max must be finite and > 0");
    if (!(plan.t_end > t_start))
        throw std::runtime_error("--t-end must be later than the snapshot's time " + std::to_string(t_start));
    const double steps_exact = (plan.t_end - t_start) / plan.interval;
    if (!(steps_exact <= 1e12))
        throw std::runtime_error("--dt " + std::to_string(plan.interval) + " would take " +
                                 std::to_string(steps_exact) + " steps to --t-end; choose a larger step");
    plan.total_steps = std::llround(steps_exact);
    if (plan.total_steps < 1) throw std::runtime_error("--t-end is less than one step after the start");
    check_whole_steps(plan, steps_exact);
    plan.snapshot_every = config.snapshot_every ? *config.snapshot_every : (plan.t_end - t_start) / 10;
    if (!(plan.snapshot_every > 0)) throw std::runtime_error("--snapshot-every must be > 0");
    plan.log_every = config.log_every;
    if (plan.log_every < 1) throw std::runtime_error("--log-every must be >= 1");
    plan.checkpoint_every = config.checkpoint_every;
    plan.checkpoint_steps = config.checkpoint_steps;
    if (!(plan.checkpoint_every > 0) || plan.checkpoint_steps < 0)
        throw std::runtime_error("--checkpoint-every must be > 0 and --checkpoint-steps >= 0");
    return plan;
}

double RunPlan::after(double t, double next) const
{
    while (next <= t + 1e-6 * interval) next += snapshot_every;
    return next;
}

} // namespace grove
