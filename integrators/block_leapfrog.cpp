#include "integrators/block_leapfrog.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/diagnostics.hpp"
#include "core/step_update.hpp"
#include "core/wall_clock.hpp"

namespace grove {

namespace {

// The enclosed mass about the centre of mass, at the profile's fractions, from the host's arrays.
EnclosedMassProfile enclosed_mass_profile(const ParticleSet& p)
{
    const double mass = p.mass.sum();
    if (!(mass > 0)) throw std::runtime_error("block time steps: the dynamical time needs a positive total mass");
    const Eigen::Vector3d centre = p.pos * p.mass / mass;
    EnclosedMassProfile profile = profile_about(mass, centre.data());
    const std::vector<double> radii = lagrangian_radii(
        p.pos, p.mass, centre, std::vector<double>(profile.fraction, profile.fraction + kProfilePoints));
    std::copy(radii.begin(), radii.end(), profile.radius);
    return profile;
}

} // namespace

BlockLeapfrog::BlockLeapfrog(ForceEngine& engine, GravityParams gravity, double dt_max, double eta, double eta_dyn)
    : engine_(engine), gravity_(gravity), dt_max_(dt_max), eta_(eta), eta_dyn_(eta_dyn)
{
    if (!(dt_max > 0) || !std::isfinite(dt_max))
        throw std::invalid_argument("block time steps: --dt-max must be a finite number > 0");
    if (!(eta > 0) || !std::isfinite(eta))
        throw std::invalid_argument("block time steps: --eta must be a finite number > 0");
    if (!(eta_dyn >= 0) || !std::isfinite(eta_dyn))
        throw std::invalid_argument("block time steps: --eta-dyn must be a finite number >= 0");
    for (int t = 0; t < kNumParticleTypes; ++t)
        if (!(gravity.eps_of(t) > 0))
            throw std::invalid_argument("block time steps: the step criterion sqrt(2 eta eps / |a|) needs a "
                                        "softening > 0 for every particle type (--eps, --eps-type)");
    subsets_ = engine.computes_subsets();
}

void BlockLeapfrog::count_tick(long long due, double seconds, const PhaseTimes& phases)
{
    TickCost& c = tick_costs_[static_cast<std::size_t>(longest_due_bin(tick_ % kTicksPerMaxStep))];
    ++c.ticks;
    c.due += due;
    c.seconds += seconds;
    for (const auto& [name, s] : phases) add_phase(c.phases, name, s);
}

double BlockLeapfrog::half_step(int bin) const
{
    return std::ldexp(dt_max_, -bin - 1);
}

std::vector<long long> BlockLeapfrog::particles_per_bin() const
{
    if (!device_count_.empty()) return device_count_;
    std::vector<long long> count(kMaxBin + 1, 0);
    for (std::uint8_t k : bins_) ++count[k];
    return count;
}

void BlockLeapfrog::compute_forces(ParticleSet& p, const std::vector<std::int32_t>& due)
{
    const auto start = WallClock::now();
    compute_due_forces(p, due);
    force_seconds_ += seconds_since(start);
}

void BlockLeapfrog::compute_due_forces(ParticleSet& p, const std::vector<std::int32_t>& due)
{
    const auto n = static_cast<Eigen::Index>(p.size());
    // The relative criterion's |a|: each particle's last forces, which a checkpoint keeps, so that a
    // restart opens the same cells (the engine's own would be its last full evaluation's).
    if (p.has_forces()) engine_.set_acceleration_estimate(p.acc);
    if (due.empty() || !subsets_) {
        engine_.compute(p.pos, p.mass, p.type, scratch_);
        if (due.empty()) {
            p.acc.swap(scratch_.acc);
            p.pot.swap(scratch_.pot);
            forces_computed_ += n;
            return;
        }
        for (std::int32_t i : due) {
            p.acc.col(i) = scratch_.acc.col(i);
            p.pot[i] = scratch_.pot[i];
        }
    } else {
        engine_.compute_subset(p.pos, p.mass, p.type, due, scratch_);
        for (std::size_t k = 0; k < due.size(); ++k) {
            p.acc.col(due[k]) = scratch_.acc.col(static_cast<Eigen::Index>(k));
            p.pot[due[k]] = scratch_.pot[static_cast<Eigen::Index>(k)];
        }
    }
    forces_computed_ += static_cast<long long>(due.size());
}

void BlockLeapfrog::rebin_and_open(ParticleSet& p, const std::vector<std::int32_t>& due, bool all, bool open)
{
    const auto n = static_cast<std::int32_t>(p.size());
    if (all && eta_dyn_ > 0) profile_ = enclosed_mass_profile(p);
    const auto one = [&](std::int32_t i) {
        const auto c = static_cast<Eigen::Index>(i);
        const double eps = gravity_.eps_of(p.type[static_cast<std::size_t>(i)]);
        double wanted = gadget_time_step(eta_, eps, p.acc.col(c).norm());
        if (eta_dyn_ > 0)
            wanted = capped_step(wanted, dynamical_time_step(eta_dyn_, gravity_.G, profile_, p.pos(0, c), p.pos(1, c),
                                                             p.pos(2, c), eps));
        const int k = next_bin(bins_[static_cast<std::size_t>(i)], bin_for_step(wanted, dt_max_), tick_);
        bins_[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(k);
        if (!open) return;
        const double h = half_step(k);
        for (int d = 0; d < 3; ++d) p.vel(d, c) = kicked(p.vel(d, c), p.acc(d, c), h);
    };
    if (all)
        for (std::int32_t i = 0; i < n; ++i) one(i);
    else
        for (std::int32_t i : due) one(i);
}

void BlockLeapfrog::start(ParticleSet& p)
{
    device_count_.clear();
    if (p.size() == 0) throw std::invalid_argument("block time steps: no particles");
    compute_forces(p, {});
    bins_.assign(p.size(), static_cast<std::uint8_t>(kMaxBin)); // the first binning may take any bin
    tick_ = 0;
    rebin_and_open(p, {}, true, false); // the bins the first step will take, for the first report
    started_ = true;
}

void BlockLeapfrog::resume(ParticleSet& p, long long ticks, long long forces)
{
    device_count_.clear();
    if (!p.has_forces()) throw std::runtime_error("block time steps: the checkpoint has no accelerations");
    bins_.assign(p.size(), static_cast<std::uint8_t>(kMaxBin));
    tick_ = 0;
    rebin_and_open(p, {}, true, false);
    substeps_ = ticks;
    forces_computed_ = forces;
    started_ = true;
}

void BlockLeapfrog::resume_within(ParticleSet& p, long long ticks, long long forces, Tick tick,
                                  std::vector<std::uint8_t> bins, const EnclosedMassProfile& profile)
{
    device_count_.clear();
    if (!(tick > 0 && tick < kTicksPerMaxStep))
        throw std::runtime_error("block time steps: the checkpoint's tick " + std::to_string(tick) +
                                 " lies outside a dt_max");
    if (bins.size() != p.size())
        throw std::runtime_error("block time steps: the checkpoint's bins are not one per particle");
    // Every tick so far stepped by the shortest occupied bin, so the tick is a multiple of its step.
    const int shortest = bins.empty() ? 0 : *std::max_element(bins.begin(), bins.end());
    if (shortest > kMaxBin || tick % ticks_of_bin(shortest) != 0)
        throw std::runtime_error("block time steps: the checkpoint's bins do not fit its tick");
    bins_ = std::move(bins);
    profile_ = profile;
    tick_ = tick;
    substeps_ = ticks;
    forces_computed_ = forces;
    started_ = true;
}

bool BlockLeapfrog::advance(ParticleSet& p, const PauseRequest& pause)
{
    if (!started_) throw std::logic_error("block time steps: advance() before start()");
    if (bins_.size() != p.size()) throw std::logic_error("block time steps: another number of particles");
    // At a multiple of dt_max every particle is due: bins from the accelerations there, and the
    // opening kicks the last call left. Within one (after a pause) the due particles have had theirs.
    if (tick_ == 0) rebin_and_open(p, {}, true, true);
    std::vector<std::int32_t> due;
    const auto n = static_cast<Eigen::Index>(p.size());
    while (tick_ < kTicksPerMaxStep) {
        const auto tick_start = WallClock::now();
        const int shortest = *std::max_element(bins_.begin(), bins_.end());
        const double dt = std::ldexp(dt_max_, -shortest);
        for (Eigen::Index i = 0; i < n; ++i)
            for (int d = 0; d < 3; ++d) p.pos(d, i) = drifted(p.pos(d, i), p.vel(d, i), dt);
        tick_ += ticks_of_bin(shortest);
        p.time += dt;
        ++substeps_;
        due.clear();
        for (Eigen::Index i = 0; i < n; ++i)
            if (bin_due(bins_[static_cast<std::size_t>(i)], tick_)) due.push_back(static_cast<std::int32_t>(i));
        const bool all_due = static_cast<Eigen::Index>(due.size()) == n;
        compute_forces(p, all_due ? std::vector<std::int32_t>{} : due);
        bool finite = true;
        for (std::int32_t i : due) { // the closing half-kick of each due particle's step
            const auto c = static_cast<Eigen::Index>(i);
            const double h = half_step(bins_[static_cast<std::size_t>(i)]);
            for (int d = 0; d < 3; ++d) {
                p.vel(d, c) = kicked(p.vel(d, c), p.acc(d, c), h);
                finite = finite && std::isfinite(p.vel(d, c)) && std::isfinite(p.pos(d, c));
            }
        }
        if (!finite)
            throw std::runtime_error("block time steps: positions or velocities became non-finite at t = " +
                                     std::to_string(p.time) + " (--dt-max too large, or --eta?)");
        if (tick_ < kTicksPerMaxStep) rebin_and_open(p, due, false, true);
        count_tick(static_cast<long long>(due.size()), seconds_since(tick_start));
        if (tick_ < kTicksPerMaxStep && pause && pause()) {
            potentials_where_paused(p);
            return false;
        }
    }
    tick_ = 0;
    return true;
}

void BlockLeapfrog::potentials_where_paused(ParticleSet& p)
{
    // Within a dt_max only the due particles' forces are current: the others' potentials are those
    // of their last due tick. What a pause saves takes every particle's where it is now; the
    // accelerations stay each particle's last, which the steps go on from.
    const auto start = WallClock::now();
    if (p.has_forces()) engine_.set_acceleration_estimate(p.acc);
    engine_.compute(p.pos, p.mass, p.type, scratch_);
    p.pot = scratch_.pot;
    force_seconds_ += seconds_since(start);
}

bool BlockLeapfrog::advance(ParticleStore& s, const PauseRequest& pause)
{
    if (!started_) throw std::logic_error("block time steps: advance() before start()");
    if (std::exchange(drop_device_, false)) {
        // After a pause the device's state goes (where restore_order() has not dropped it yet):
        // the particles load afresh, as a run restarted from a checkpoint written there finds
        // them, so that the two go on alike to the bit.
        s.restore_order();
    }
    if (DeviceTimeBins* device = s.device_time_bins()) return advance_on_device(*device, s, pause);
    return advance(s.host(), pause);
}

// The loop of advance() with the bins where the particles are: the host keeps the timeline and
// the particles per bin, which tell it each tick's step and how many are due.
bool BlockLeapfrog::advance_on_device(DeviceTimeBins& device, ParticleStore& s, const PauseRequest& pause)
{
    BinRule rule;
    rule.eta = eta_;
    rule.dt_max = dt_max_;
    rule.eta_dyn = eta_dyn_;
    for (int t = 0; t < kNumParticleTypes; ++t) rule.eps_of_type[static_cast<std::size_t>(t)] = gravity_.eps_of(t);
    device_phases_.clear();
    const auto add_phases = [&] {
        for (const auto& [name, seconds] : engine_.last_phase_times()) add_phase(device_phases_, name, seconds);
    };
    auto start = WallClock::now();
    // Within a dt_max (after a pause, or from a checkpoint written there) the device has loaded
    // the particles afresh and takes the bins and profile back.
    BinCounts bins = tick_ == 0 ? device.open_all(rule) : device.continue_within(rule, bins_, profile_);
    force_seconds_ += seconds_since(start);
    while (tick_ < kTicksPerMaxStep) {
        const int shortest = bins.shortest();
        const double dt = std::ldexp(dt_max_, -shortest);
        tick_ += ticks_of_bin(shortest);
        const long long due = bins.due_at(tick_);
        start = WallClock::now();
        const auto tick_start = start;
        device.drift(dt, tick_, due);
        s.advance_time(dt);
        ++substeps_;
        engine_.compute(s);
        bins = device.close(tick_ < kTicksPerMaxStep);
        force_seconds_ += seconds_since(start);
        add_phases();
        forces_computed_ += due;
        count_tick(due, seconds_since(tick_start), engine_.last_phase_times());
        if (!bins.finite)
            throw std::runtime_error("block time steps: positions or velocities became non-finite at t = " +
                                     std::to_string(s.time()) + " (--dt-max too large, or --eta?)");
        if (tick_ < kTicksPerMaxStep && pause && pause()) {
            bins_ = device.bins_in_load_order();
            profile_ = device.profile();
            device_count_ = bins.count;
            drop_device_ = true;
            return false;
        }
    }
    device_count_ = bins.count;
    tick_ = 0;
    return true;
}

} // namespace grove
