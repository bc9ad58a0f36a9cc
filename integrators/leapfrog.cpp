#include "integrators/leapfrog.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace grove {

namespace {

std::runtime_error non_finite(double t)
{
    return std::runtime_error("leapfrog: positions or velocities became non-finite at t = " + std::to_string(t) +
                              " (time step too large for the softening?)");
}

} // namespace

Leapfrog::Leapfrog(ForceEngine& engine, double dt, bool keep_engine_order, bool resident)
    : engine_(engine), dt_(dt), keep_engine_order_(keep_engine_order)
{
    if (!(dt > 0) || !std::isfinite(dt)) throw std::invalid_argument("leapfrog: --dt must be a finite number > 0");
    if (resident && keep_engine_order) resident_ = engine.resident_leapfrog();
}

PhaseTimes Leapfrog::last_phase_times() const
{
    return resident_ && resident_->loaded() ? resident_->last_phase_times() : engine_.last_phase_times();
}

void Leapfrog::synchronize(ParticleSet& p)
{
    if (!resident_ || !resident_->loaded() || synchronized_) return;
    const auto start = std::chrono::steady_clock::now();
    resident_->store(p);
    synchronized_ = true;
    // The engine's time: the copy back and the potentials, which the steps leave out.
    force_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bool Leapfrog::compute_forces(ParticleSet& p, double kick, bool may_reorder)
{
    const auto start = std::chrono::steady_clock::now();
    if (p.has_forces()) engine_.set_acceleration_estimate(p.acc);
    bool reordered = false;
    if (may_reorder) {
        // The particles follow the engine's order while its device works, if it says the order
        // early (tree-gpu); only the closing kick waits for this call's forces.
        bool moved_early = false;
        const ForceEngine::EarlyMove early = [&](const std::vector<std::uint32_t>& order) {
            order_.move_early(p, order);
            moved_early = true;
        };
        try {
            reordered = engine_.compute_in_own_order(p.pos, p.mass, forces_, engine_order_, early);
        } catch (...) {
            order_.undo_early(p);
            throw;
        }
        if (moved_early && !reordered) {
            order_.undo_early(p);
            throw std::logic_error("leapfrog: the engine moved the particles early but handed no order over");
        }
    } else {
        engine_.compute(p.pos, p.mass, forces_);
    }
    force_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool finite = true;
    if (reordered) { // the forces come in the engine's order: the particles follow them there
        const auto moved = std::chrono::steady_clock::now();
        const VelocityKick with{kick > 0 ? &forces_.acc : nullptr, kick};
        finite = order_.adopt(p, engine_order_, ParticleOrder::Forces::replaced, with);
        reorder_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - moved).count();
    }
    // Swapped, not copied: at 1e6 particles a copy is a 24 MB pass per step.
    p.acc.swap(forces_.acc);
    p.pot.swap(forces_.pot);
    if (kick > 0 && !reordered) {
        const auto count = static_cast<std::int64_t>(3 * p.size());
        const double* a = p.acc.data();
        const double* x = p.pos.data();
        double* v = p.vel.data();
#pragma omp parallel for schedule(static) reduction(&& : finite) if (count > 16384)
        for (std::int64_t i = 0; i < count; ++i) {
            v[i] += kick * a[i];
            finite = finite && std::isfinite(x[i]) && std::isfinite(v[i]);
        }
    }
    return finite;
}

void Leapfrog::restore_order(ParticleSet& p)
{
    if (resident_ && resident_->loaded()) {
        // The host's particles are kept in the caller's order. The next step starts the device
        // afresh from them, as a run restarted from this output's checkpoint does, so that both
        // continue bit for bit alike.
        synchronize(p);
        resident_->unload();
        return;
    }
    const auto start = std::chrono::steady_clock::now();
    if (order_.restore(p)) engine_.particles_reordered();
    reorder_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Leapfrog::start(ParticleSet& p)
{
    if (resident_) resident_->unload();
    compute_forces(p, 0, false); // the caller reads these forces: its order
    started_ = true;
}

void Leapfrog::resume(const ParticleSet& p)
{
    if (!p.has_forces()) throw std::runtime_error("leapfrog: the checkpoint has no accelerations");
    if (resident_) resident_->unload();
    started_ = true;
}

void Leapfrog::step(ParticleSet& p)
{
    if (!started_) throw std::logic_error("leapfrog: step() before start()");
    if (resident_) {
        const auto start = std::chrono::steady_clock::now();
        if (!resident_->loaded()) resident_->load(p, dt_);
        synchronized_ = false;
        const bool finite = resident_->step();
        force_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        p.time += dt_;
        ++steps_;
        if (!finite) throw non_finite(p.time);
        return;
    }
    const double half = 0.5 * dt_, dt = dt_;
    // Fused OpenMP loops over the 3N coordinates: each is one pass over memory.
    const auto count = static_cast<std::int64_t>(3 * p.size());
    double* x = p.pos.data();
    double* v = p.vel.data();
    const double* a0 = p.acc.data();
#pragma omp parallel for schedule(static) if (count > 16384)
    for (std::int64_t i = 0; i < count; ++i) {
        v[i] += half * a0[i];
        x[i] += dt * v[i];
    }
    // Next step's positions, to first order: x + dt (v + dt a), with this step's a for the next.
    engine_.hint_next_drift(p.vel, p.acc, dt);
    const bool finite = compute_forces(p, half, keep_engine_order_); // and the closing half-kick
    p.time += dt_;
    ++steps_;
    if (!finite) throw non_finite(p.time);
}

} // namespace grove
