#include "integrators/integrator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

#include "core/tree_engine.hpp"
#include "integrators/block_leapfrog.hpp"
#include "integrators/hermite.hpp"
#include "integrators/leapfrog.hpp"

namespace grove {

namespace {

class LeapfrogIntegrator final : public Integrator {
  public:
    LeapfrogIntegrator(std::unique_ptr<ForceEngine> engine, double dt, bool keep_engine_order)
        : engine_(std::move(engine)), leapfrog_(*engine_, dt), keep_engine_order_(keep_engine_order)
    {
    }
    std::string name() const override { return "leapfrog"; }
    std::string engine_name() const override { return engine_->name(); }
    double interval() const override { return leapfrog_.dt(); }
    void start(ParticleSet& p) override
    {
        leapfrog_.start(bind(p));
        add_phases();
    }
    void advance_to(double t, ParticleSet& p) override
    {
        ParticleStore& s = bound(p);
        const double loops_before = leapfrog_.integration_seconds(), reorder_before = s.reorder_seconds();
        leapfrog_.step(s);
        add_phases();
        p.time = t; // no accumulated rounding in the clock
        last_ = leapfrog_.last_phase_times();
        last_.emplace_back("reorder", s.reorder_seconds() - reorder_before);
        last_.emplace_back("integration", leapfrog_.integration_seconds() - loops_before);
    }
    PhaseTimes last_phases() const override { return last_; }
    // Every step computes the forces; a store on a device brings them (and the particles) back here.
    void synchronize(ParticleSet& p) override { bound(p).host(); }
    bool diagnostics_where_they_are(ParticleSet& p, const std::vector<double>& fractions, Diagnostics& out) override
    {
        return bound(p).device_diagnostics(fractions, out);
    }
    void load_on_device(ParticleSet& p) override { bound(p).load_on_device(); }
    void restore_order(ParticleSet& p) override { bound(p).restore_order(); }
    void settle_order(ParticleSet& p) override { bound(p).settle_order(); }
    IntegratorState save(ParticleSet&) const override { return {}; } // the particles carry the forces
    void resume(const IntegratorState&, ParticleSet& p) override { leapfrog_.resume(bind(p)); }
    double force_seconds() const override { return leapfrog_.force_seconds(); }
    bool resident() const override { return leapfrog_.is_resident() && keep_engine_order_; }
    const ForceEngine* force_engine() const override { return engine_.get(); }
    std::string summary() const override
    {
        std::string s = "force engine phases:";
        for (const auto& [name, v] : phases_) s += " " + name + " " + std::to_string(v).substr(0, 6);
        return s;
    }

  private:
    ParticleStore& bind(ParticleSet& p)
    {
        // The same set again (a run on domains resumes after every step): the store starts over
        // but keeps its scratch arrays' memory.
        if (store_ && store_->holds(p))
            store_->start_over();
        else
            store_ = std::make_unique<ParticleStore>(p, keep_engine_order_);
        return *store_;
    }
    ParticleStore& bound(ParticleSet& p)
    {
        if (!store_ || !store_->holds(p)) throw std::logic_error("leapfrog: particles other than start()'s");
        return *store_;
    }
    void add_phases()
    {
        for (const auto& [name, v] : leapfrog_.last_phase_times()) phases_[name] += v;
    }
    std::unique_ptr<ForceEngine> engine_;
    Leapfrog leapfrog_;
    bool keep_engine_order_;
    std::unique_ptr<ParticleStore> store_; // over the particles of the last start() or resume()
    std::map<std::string, double> phases_;
    PhaseTimes last_;
};

// The leapfrog with hierarchical steps, on the caller's arrays in the caller's order, or on the
// device of a tree engine that runs time bins there (the store keeps the caller's order on the
// host). At each dt_max every particle is due, so the particles with their forces are the whole
// state: its bins are chosen again from the accelerations, and a checkpoint needs nothing more.
// Within a dt_max (a pause) a checkpoint also keeps the tick, the bins and the dt_max's profile.
class BlockLeapfrogIntegrator final : public Integrator {
  public:
    BlockLeapfrogIntegrator(std::unique_ptr<ForceEngine> engine, GravityParams gravity, double dt_max, double eta,
                            double eta_dyn)
        : engine_(std::move(engine)), block_(*engine_, gravity, dt_max, eta, eta_dyn), dt_max_(dt_max)
    {
        if (TreeEngine* tree = as_tree_engine(*engine_))
            if (DeviceParticles* device = tree->device_particles(); device && device->time_bins()) device_ = device;
    }
    std::string name() const override { return "leapfrog (block steps)"; }
    std::string engine_name() const override { return engine_->name(); }
    double interval() const override { return dt_max_; }
    void start(ParticleSet& p) override
    {
        block_.start(p);
        bind(p);
    }
    void advance_to(double t, ParticleSet& p) override
    {
        ParticleStore& s = bound(p);
        const auto start = std::chrono::steady_clock::now();
        const double force_before = block_.force_seconds();
        within_ = !block_.advance(s, pause_);
        // No accumulated rounding in the clock: t, or within the dt_max its tick's time before t.
        p.time =
            within_ ? t - std::ldexp(dt_max_, -kMaxBin) * static_cast<double>(kTicksPerMaxStep - block_.tick()) : t;
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double force = block_.force_seconds() - force_before;
        last_ = block_.last_device_phases(); // the engine's phases, where the ticks ran on its device
        if (last_.empty()) last_ = {{"force", force}};
        last_.emplace_back("integration", std::max(0.0, wall - force));
    }
    PhaseTimes last_phases() const override { return last_; }
    void pause_when(std::function<bool()> pause) override { pause_ = std::move(pause); }
    bool within_interval() const override { return within_; }
    // At dt_max every particle's forces are current; a device brings them (and the particles) here.
    void synchronize(ParticleSet& p) override { bound(p).host(); }
    bool diagnostics_where_they_are(ParticleSet& p, const std::vector<double>& fractions, Diagnostics& out) override
    {
        return bound(p).device_diagnostics(fractions, out);
    }
    void load_on_device(ParticleSet& p) override { bound(p).load_on_device(); }
    // The store never moves the particles, but a device's state is dropped here as the shared
    // leapfrog's is: a run continued past a checkpoint then loads it afresh, as its restart does.
    void restore_order(ParticleSet& p) override { bound(p).restore_order(); }
    IntegratorState save(ParticleSet& snapshot) const override
    {
        IntegratorState s;
        s.counters = {{"ticks", block_.ticks_stepped()}, {"forces", block_.forces_computed()}};
        if (!within_) return s;
        s.counters.emplace_back("tick", block_.tick());
        const std::vector<std::uint8_t>& bins = block_.bins();
        if (bins.size() != snapshot.size()) throw std::logic_error("block time steps: bins for other particles");
        Eigen::MatrixXd bin(1, static_cast<Eigen::Index>(bins.size()));
        for (std::size_t i = 0; i < bins.size(); ++i) bin(0, static_cast<Eigen::Index>(i)) = bins[i];
        s.fields.push_back({"bin", bin});
        const EnclosedMassProfile& profile = block_.profile();
        std::vector<double> values(profile.centre, profile.centre + 3);
        values.push_back(profile.mass);
        values.insert(values.end(), profile.radius, profile.radius + kProfilePoints);
        s.arrays.push_back({"mass_profile", values});
        return s;
    }
    void resume(const IntegratorState& s, ParticleSet& p) override
    {
        within_ = s.has_counter("tick") && s.counter("tick") > 0;
        if (within_)
            resume_within(s, p);
        else
            block_.resume(p, s.counter("ticks"), s.counter("forces"));
        bind(p);
    }
    double force_seconds() const override { return block_.force_seconds(); }
    bool resident() const override { return device_ != nullptr; }
    const ForceEngine* force_engine() const override { return engine_.get(); }
    std::vector<std::pair<std::string, long long>> log_counts() const override
    {
        std::vector<std::pair<std::string, long long>> out;
        const std::vector<long long> count = block_.particles_per_bin();
        for (std::size_t k = 0; k < count.size(); ++k) out.emplace_back("bin" + std::to_string(k), count[k]);
        return out;
    }
    std::vector<SubstepCost> substep_costs() const override
    {
        std::vector<SubstepCost> out;
        const auto& costs = block_.tick_costs();
        for (std::size_t k = 0; k < costs.size(); ++k)
            if (costs[k].ticks > 0)
                out.push_back({"bins " + std::to_string(k) + (k == 0 ? " (all)" : "+"), costs[k].ticks, costs[k].due,
                               costs[k].seconds, costs[k].phases});
        return out;
    }
    std::string summary() const override
    {
        std::string bins;
        const std::vector<long long> count = block_.particles_per_bin();
        for (std::size_t k = 0; k < count.size(); ++k)
            if (count[k] > 0) bins += " " + std::to_string(k) + ":" + std::to_string(count[k]);
        return "block steps: " + std::to_string(block_.ticks_stepped()) + " ticks, " +
               std::to_string(block_.forces_computed()) +
               " particle forces; particles per bin (dt_max / 2^k) at the end:" + bins;
    }

  private:
    void resume_within(const IntegratorState& s, ParticleSet& p)
    {
        const Eigen::MatrixXd& bin = s.field("bin");
        std::vector<std::uint8_t> bins(static_cast<std::size_t>(bin.cols()));
        for (std::size_t i = 0; i < bins.size(); ++i) {
            const double k = bin(0, static_cast<Eigen::Index>(i));
            if (!(k >= 0 && k <= kMaxBin) || k != std::floor(k))
                throw std::runtime_error("block time steps: the checkpoint holds a bin that is none");
            bins[i] = static_cast<std::uint8_t>(k);
        }
        const std::vector<double>& values = s.array("mass_profile");
        if (values.size() != 4 + kProfilePoints)
            throw std::runtime_error("block time steps: the checkpoint's mass profile has the wrong length");
        EnclosedMassProfile profile = profile_about(values[3], values.data());
        std::copy(values.begin() + 4, values.end(), profile.radius);
        block_.resume_within(p, s.counter("ticks"), s.counter("forces"), s.counter("tick"), std::move(bins), profile);
    }
    void bind(ParticleSet& p)
    {
        store_ = std::make_unique<ParticleStore>(p, false);
        store_->place_on(device_);
    }
    ParticleStore& bound(ParticleSet& p)
    {
        if (!store_ || !store_->holds(p)) throw std::logic_error("block time steps: particles other than start()'s");
        return *store_;
    }
    std::unique_ptr<ForceEngine> engine_;
    BlockLeapfrog block_;
    double dt_max_;
    DeviceParticles* device_ = nullptr; // where the particles live between outputs, if anywhere
    std::unique_ptr<ParticleStore> store_;
    PhaseTimes last_;
    std::function<bool()> pause_;
    bool within_ = false; // the last advance_to() paused within its dt_max
};

class HermiteIntegrator final : public Integrator {
  public:
    HermiteIntegrator(std::unique_ptr<HermiteEngine> engine, HermiteParams params)
        : engine_(std::move(engine)), hermite_(*engine_, params), dt_max_(params.dt_max)
    {
    }
    std::string name() const override { return hermite_.order() == 6 ? "hermite6" : "hermite"; }
    std::string engine_name() const override { return engine_->name(); }
    double interval() const override { return dt_max_; }
    void start(ParticleSet& p) override
    {
        hermite_.start(p);
        synchronize(p);
    }
    void advance_to(double t, ParticleSet& p) override
    {
        const double force_before = hermite_.force_seconds();
        const auto start = std::chrono::steady_clock::now();
        hermite_.advance_to(t, p);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const double force = hermite_.force_seconds() - force_before;
        last_ = {{"force", force}, {"integration", std::max(0.0, wall - force)}};
    }
    PhaseTimes last_phases() const override { return last_; }
    void synchronize(ParticleSet& p) override
    {
        p.pot = hermite_.potentials();
        p.acc = hermite_.state().a;
    }
    IntegratorState save(ParticleSet& snapshot) const override
    {
        snapshot.acc = hermite_.state().a;
        if (snapshot.pot.size() != snapshot.mass.size()) snapshot.pot = Eigen::VectorXd::Zero(snapshot.mass.size());
        IntegratorState s;
        s.fields = {{"jerk", hermite_.state().j},
                    {"particle_time", hermite_.state().t.transpose()},
                    {"particle_step", hermite_.steps().transpose()}};
        if (hermite_.order() == 6) {
            s.fields.push_back({"snap", hermite_.state().s});
            s.fields.push_back({"crackle", hermite_.state().c});
        }
        s.counters = {{"block_steps", hermite_.block_steps()}, {"particle_steps", hermite_.particle_steps()}};
        return s;
    }
    void resume(const IntegratorState& s, ParticleSet& p) override
    {
        const Eigen::MatrixXd& jerk = s.field("jerk");
        if (jerk.rows() != 3) throw std::runtime_error("hermite: the checkpoint's jerk is not 3 x N");
        const bool sixth = hermite_.order() == 6;
        hermite_.resume(p, jerk, s.field("particle_time").transpose(), s.field("particle_step").transpose(),
                        s.counter("block_steps"), s.counter("particle_steps"),
                        sixth ? Eigen::Matrix3Xd(s.field("snap")) : Eigen::Matrix3Xd(),
                        sixth ? Eigen::Matrix3Xd(s.field("crackle")) : Eigen::Matrix3Xd());
    }
    double force_seconds() const override { return hermite_.force_seconds(); }
    std::string summary() const override
    {
        return name() + ": " + std::to_string(hermite_.block_steps()) + " block steps, " +
               std::to_string(hermite_.particle_steps()) + " particle steps";
    }

  private:
    std::unique_ptr<HermiteEngine> engine_;
    Hermite hermite_;
    double dt_max_;
    PhaseTimes last_;
};

} // namespace

std::unique_ptr<Integrator> make_integrator(const IntegratorConfig& c, const EngineRegistry& engines,
                                            const ForceEngineWrapper& wrap, const HermiteEngineWrapper& wrap_hermite)
{
    if (c.integrator == "leapfrog" && c.timestep == "block") {
        auto engine = engines.make_force(c.engine);
        return std::make_unique<BlockLeapfrogIntegrator>(wrap ? wrap(std::move(engine)) : std::move(engine),
                                                         c.engine.gravity, c.dt_max, c.eta, c.eta_dyn);
    }
    if (c.timestep != "shared" && c.timestep != "block")
        throw std::runtime_error("unknown --timestep '" + c.timestep + "' (use shared or block)");
    if (c.integrator == "leapfrog") {
        auto engine = engines.make_force(c.engine);
        return std::make_unique<LeapfrogIntegrator>(wrap ? wrap(std::move(engine)) : std::move(engine), c.dt,
                                                    c.keep_engine_order);
    }
    if (c.integrator == "hermite" || c.integrator == "hermite6") {
        const int order = c.integrator == "hermite6" ? 6 : 4;
        // The start-up criterion eta_start |a| / |j| keeps the 4th order's scale for both.
        const double eta_start = order == 6 ? 0.01 : c.eta;
        auto engine = engines.make_hermite(c.engine, "--integrator " + c.integrator);
        return std::make_unique<HermiteIntegrator>(wrap_hermite ? wrap_hermite(std::move(engine)) : std::move(engine),
                                                   HermiteParams{c.eta, eta_start, c.dt_max, 0x1.0p-40, order});
    }
    throw std::runtime_error("unknown --integrator '" + c.integrator + "' (use leapfrog, hermite or hermite6)");
}

} // namespace grove
