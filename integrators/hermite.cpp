#include "integrators/hermite.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace grove {

namespace {

// The largest power of two <= dt that is <= limit and divides t (t a dyadic rational).
double block_step_size(double dt, double limit, double t, double dt_min)
{
    double b = limit;
    while (b > dt && b >= dt_min) b *= 0.5;
    while (std::fmod(t, b) != 0 && b >= dt_min) b *= 0.5;
    return b;
}

} // namespace

Hermite::Hermite(HermiteEngine& engine, HermiteParams params) : engine_(engine), params_(params)
{
    if (!(params.eta > 0) || !(params.eta_start > 0)) throw std::invalid_argument("hermite: --eta must be > 0");
    if (params.order != 4 && params.order != 6) throw std::invalid_argument("hermite: the order is 4 or 6");
    // Infinity passes the power-of-two test (log2 is infinite, and so is its floor).
    const double l = std::log2(params.dt_max);
    if (!(params.dt_max > 0) || !std::isfinite(params.dt_max) || l != std::floor(l))
        throw std::invalid_argument("hermite: --dt-max must be a finite power of two");
}

void Hermite::evaluate(double t, const std::vector<std::int32_t>& active)
{
    const auto start = std::chrono::steady_clock::now();
    engine_.evaluate(t, active, forces_);
    force_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void Hermite::start(const ParticleSet& p)
{
    const auto n = static_cast<Eigen::Index>(p.size());
    state_.x = p.pos;
    state_.v = p.vel;
    state_.mass = p.mass;
    state_.type = p.type;
    state_.t = Eigen::VectorXd::Constant(n, p.time);
    state_.a = Eigen::Matrix3Xd::Zero(3, n);
    state_.j = Eigen::Matrix3Xd::Zero(3, n);
    if (params_.order == 6) { // the engine sees a 6th-order state and returns the snap
        state_.s = Eigen::Matrix3Xd::Zero(3, n);
        state_.c = Eigen::Matrix3Xd::Zero(3, n);
    }
    if (std::fmod(p.time, params_.dt_max) != 0)
        throw std::invalid_argument("hermite: the start time must be a multiple of --dt-max");
    engine_.set_state(state_);
    active_.resize(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) active_[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
    evaluate(p.time, active_);
    state_.a = forces_.acc;
    state_.j = forces_.jerk;
    if (params_.order == 6) {
        // The snap depends on the accelerations, which the first evaluation did not have yet:
        // evaluate again with them. Crackle stays 0 until the first step.
        engine_.set_state(state_);
        evaluate(p.time, active_);
        state_.s = forces_.snap;
    }
    dt_.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const double a = state_.a.col(i).norm(), j = state_.j.col(i).norm();
        const double dt = j > 0 ? params_.eta_start * a / j : params_.dt_max;
        dt_[i] = block_step_size(dt, params_.dt_max, p.time, params_.dt_min);
        if (dt_[i] < params_.dt_min)
            throw std::runtime_error("hermite: particle " + std::to_string(i) + " needs a first step below 2^-40");
    }
    schedule_.reset(state_.t, dt_);
    engine_.set_state(state_);
}

void Hermite::resume(const ParticleSet& p, const Eigen::Matrix3Xd& jerk, const Eigen::VectorXd& times,
                     const Eigen::VectorXd& steps, long long block_steps, long long particle_steps,
                     const Eigen::Matrix3Xd& snap, const Eigen::Matrix3Xd& crackle)
{
    if (!p.has_forces() || jerk.cols() != p.pos.cols() || times.size() != p.mass.size() ||
        steps.size() != p.mass.size())
        throw std::runtime_error("hermite: the checkpoint's state is incomplete");
    if (params_.order == 6 && (snap.cols() != p.pos.cols() || crackle.cols() != p.pos.cols()))
        throw std::runtime_error("hermite6: the checkpoint has no snap and crackle (was it written by hermite?)");
    state_.s = params_.order == 6 ? snap : Eigen::Matrix3Xd();
    state_.c = params_.order == 6 ? crackle : Eigen::Matrix3Xd();
    state_.x = p.pos;
    state_.v = p.vel;
    state_.a = p.acc;
    state_.j = jerk;
    state_.t = times;
    state_.mass = p.mass;
    state_.type = p.type;
    dt_ = steps;
    schedule_.reset(state_.t, dt_);
    block_steps_ = block_steps;
    particle_steps_ = particle_steps;
    engine_.set_state(state_);
}

bool Hermite::correct4(Eigen::Index i, Eigen::Index k, double t_next)
{
    const double dt = dt_[i];
    double xp[3], vp[3];
    hermite_predict(state_, i, t_next, xp, vp);
    const Eigen::Vector3d a0 = state_.a.col(i), j0 = state_.j.col(i);
    const Eigen::Vector3d a1 = forces_.acc.col(k), j1 = forces_.jerk.col(k);
    // Second and third derivatives at the start of the step from the Hermite interpolant.
    const Eigen::Vector3d a2 = (-6 * (a0 - a1) - dt * (4 * j0 + 2 * j1)) / (dt * dt);
    const Eigen::Vector3d a3 = (12 * (a0 - a1) + 6 * dt * (j0 + j1)) / (dt * dt * dt);
    const double dt3 = dt * dt * dt, dt4 = dt3 * dt, dt5 = dt4 * dt;
    for (int d = 0; d < 3; ++d) {
        state_.x(d, i) = xp[d] + a2[d] * dt4 / 24 + a3[d] * dt5 / 120;
        state_.v(d, i) = vp[d] + a2[d] * dt3 / 6 + a3[d] * dt4 / 24;
    }
    state_.a.col(i) = a1;
    state_.j.col(i) = j1;
    state_.t[i] = t_next;
    // Aarseth's criterion with the derivatives at the end of the step.
    const Eigen::Vector3d a2e = a2 + dt * a3;
    const double na = a1.norm(), nj = j1.norm(), n2 = a2e.norm(), n3 = a3.norm();
    const double num = na * n2 + nj * nj, den = nj * n3 + n2 * n2;
    const double dt_new = den > 0 ? std::sqrt(params_.eta * num / den) : params_.dt_max;
    dt_[i] = block_step_size(std::min(dt_new, 2 * dt), params_.dt_max, t_next, params_.dt_min);
    return dt_[i] < params_.dt_min || !std::isfinite(state_.x(0, i));
}

bool Hermite::correct6(Eigen::Index i, Eigen::Index k, double t_next)
{
    const double h = dt_[i];
    const Eigen::Vector3d x0 = state_.x.col(i), v0 = state_.v.col(i);
    const Eigen::Vector3d a0 = state_.a.col(i), j0 = state_.j.col(i), s0 = state_.s.col(i);
    const Eigen::Vector3d a1 = forces_.acc.col(k), j1 = forces_.jerk.col(k), s1 = forces_.snap.col(k);
    // Nitadori & Makino (2008), eqs. 19-20: time-symmetric, 6th order.
    const Eigen::Vector3d v1 = v0 + h / 2 * (a0 + a1) - h * h / 10 * (j1 - j0) + h * h * h / 120 * (s0 + s1);
    const Eigen::Vector3d x1 = x0 + h / 2 * (v0 + v1) - h * h / 10 * (a1 - a0) + h * h * h / 120 * (j0 + j1);
    // The quintic through a, j, s at both ends: its 3rd, 4th and 5th derivatives at the start,
    // from (c0 h^3, p0 h^4, q0 h^5) = M^-1 (r1, r2, r3) with the residuals of the Taylor series.
    const Eigen::Vector3d r1 = a1 - a0 - h * j0 - h * h / 2 * s0, r2 = (j1 - j0 - h * s0) * h, r3 = (s1 - s0) * h * h;
    const Eigen::Vector3d c0 = (60 * r1 - 24 * r2 + 3 * r3) / (h * h * h);
    const Eigen::Vector3d p0 = (-360 * r1 + 168 * r2 - 24 * r3) / (h * h * h * h);
    const Eigen::Vector3d q0 = (720 * r1 - 360 * r2 + 60 * r3) / (h * h * h * h * h);
    const Eigen::Vector3d c1 = c0 + h * p0 + h * h / 2 * q0, p1 = p0 + h * q0;
    state_.x.col(i) = x1;
    state_.v.col(i) = v1;
    state_.a.col(i) = a1;
    state_.j.col(i) = j1;
    state_.s.col(i) = s1;
    state_.c.col(i) = c1;
    state_.t[i] = t_next;
    // The generalised Aarseth criterion (Nitadori & Makino 2008), with the derivatives at the end
    // of the step: eta ((|a||a2| + |a1|^2) / (|a3||a5| + |a4|^2))^(1/6).
    const double num = a1.norm() * s1.norm() + j1.squaredNorm();
    const double den = c1.norm() * q0.norm() + p1.squaredNorm();
    const double dt_new = den > 0 ? params_.eta * std::pow(num / den, 1.0 / 6) : params_.dt_max;
    dt_[i] = block_step_size(std::min(dt_new, 2 * h), params_.dt_max, t_next, params_.dt_min);
    return dt_[i] < params_.dt_min || !std::isfinite(state_.x(0, i));
}

double Hermite::block_step()
{
    if (schedule_.empty()) throw std::logic_error("hermite: block step before start");
    const double t_next = schedule_.take_next(active_);
    evaluate(t_next, active_);
    const auto m = static_cast<Eigen::Index>(active_.size());
    bool underflow = false;
// A block step often has one or two active particles: a parallel region would cost more.
#pragma omp parallel for schedule(static) reduction(|| : underflow) if (m > 64)
    for (Eigen::Index k = 0; k < m; ++k) {
        const Eigen::Index i = active_[static_cast<std::size_t>(k)];
        underflow = (params_.order == 6 ? correct6(i, k, t_next) : correct4(i, k, t_next)) || underflow;
    }
    if (underflow)
        throw std::runtime_error("hermite: a time step fell below 2^-40 at t = " + std::to_string(t_next) +
                                 " (an unresolved close encounter; use a softening --eps > 0)");
    for (const std::int32_t i : active_) schedule_.put(i, state_.t[i] + dt_[i]);
    engine_.update(state_, active_);
    ++block_steps_;
    particle_steps_ += m;
    return t_next;
}

void Hermite::advance_to(double t, ParticleSet& p)
{
    if (std::fmod(t, params_.dt_max) != 0)
        throw std::invalid_argument("hermite: output times must be multiples of --dt-max");
    // Steps are powers of two dividing dt_max, which divides t: no particle steps past t.
    if (state_.t.minCoeff() > t) throw std::invalid_argument("hermite: cannot advance backwards in time");
    // Every particle is at t once the earliest next time is past it: a particle behind t steps
    // to t at the latest.
    while (schedule_.next_time() <= t) block_step();
    p.pos = state_.x;
    p.vel = state_.v;
    p.time = t;
}

Eigen::VectorXd Hermite::potentials()
{
    const auto n = static_cast<Eigen::Index>(state_.size());
    std::vector<std::int32_t> all(static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
    const double t = state_.t.maxCoeff();
    HermiteForces f;
    engine_.evaluate(t, all, f);
    return f.pot;
}

} // namespace grove
