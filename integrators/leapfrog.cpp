#include "integrators/leapfrog.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/tree_engine.hpp"
#include "core/wall_clock.hpp"

namespace grove {

Leapfrog::Leapfrog(ForceEngine& engine, double dt, bool resident) : engine_(engine), dt_(dt)
{
    if (!(dt > 0) || !std::isfinite(dt)) throw std::invalid_argument("leapfrog: --dt must be a finite number > 0");
    if (TreeEngine* tree = as_tree_engine(engine); tree && resident) device_ = tree->device_particles();
}

void Leapfrog::place(ParticleStore& s) const
{
    s.place_on(device_ && s.may_reorder() ? device_ : nullptr);
}

void Leapfrog::start(ParticleStore& s)
{
    place(s);
    const ParticleStore::OrderHold hold(s); // the caller reads these forces: its order
    const auto start = WallClock::now();
    engine_.compute(s);
    force_seconds_ += seconds_since(start);
    started_ = true;
}

void Leapfrog::resume(ParticleStore& s)
{
    // (A domain may hold no particle, and so no force.)
    if (s.host().size() > 0 && !s.host().has_forces())
        throw std::runtime_error("leapfrog: the checkpoint has no accelerations");
    place(s);
    started_ = true;
}

void Leapfrog::step(ParticleStore& s)
{
    if (!started_) throw std::logic_error("leapfrog: step() before start()");
    const double half = 0.5 * dt_;
    // The kicks and the drift run as the host's loops, or on the engine's device as part of its
    // work there: the step's time not spent in the host's loops or moves is the engine's.
    const bool on_host = s.device() == nullptr;
    const auto start = WallClock::now();
    const double moves_before = s.reorder_seconds();
    double loops = 0;
    auto timed = [&](auto&& operation) {
        const auto t = WallClock::now();
        const double moves = s.reorder_seconds();
        operation();
        if (on_host) loops += seconds_since(t) - (s.reorder_seconds() - moves);
    };
    timed([&] { s.kick_drift(half, dt_); });
    engine_.compute(s);
    bool finite = true;
    timed([&] { finite = s.kick(half); });
    force_seconds_ += seconds_since(start) - loops - (s.reorder_seconds() - moves_before);
    integration_seconds_ += loops;
    s.advance_time(dt_);
    ++steps_;
    if (!finite)
        throw std::runtime_error("leapfrog: positions or velocities became non-finite at t = " +
                                 std::to_string(s.time()) + " (time step too large for the softening?)");
}

} // namespace grove
