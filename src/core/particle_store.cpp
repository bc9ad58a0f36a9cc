#include "core/particle_store.hpp"

#include <cmath>
#include <stdexcept>

#include "core/force_engine.hpp"
#include "core/step_update.hpp"
#include "core/wall_clock.hpp"

namespace grove {

ParticleStore::ParticleStore(ParticleSet& particles, bool may_reorder) : p_(particles), may_reorder_(may_reorder) {}

void ParticleStore::place_on(DeviceParticles* device)
{
    if (device == device_) return;
    if (on_device()) {
        host();
        device_->unload();
    }
    device_ = device;
    // The device may still hold another store's state (an integrator started again): this store's
    // first step loads its own.
    if (device_ && device_->loaded()) device_->unload();
}

ParticleSet& ParticleStore::host()
{
    order_.undo_early(p_);
    apply_pending(0);
    if (on_device() && !host_current_) {
        device_->store(p_);
        host_current_ = true;
    }
    return p_;
}

void ParticleStore::load_on_device()
{
    if (device_ && !device_->loaded()) device_->load(host(), types());
}

bool ParticleStore::device_diagnostics(const std::vector<double>& fractions, Diagnostics& out)
{
    return on_device() && device_->diagnostics(fractions, out);
}

TypesRef ParticleStore::types()
{
    host();
    const std::vector<std::uint32_t>& from = order_.caller_index();
    if (from.empty() || p_.type.empty()) return p_.type;
    slot_types_.resize(from.size());
    for (std::size_t k = 0; k < from.size(); ++k) slot_types_[k] = p_.type[from[k]];
    return slot_types_;
}

void ParticleStore::take_forces(Forces& forces)
{
    if (on_device()) { // an engine that computed on the host's copy: the state is the host's again
        host();
        device_->unload();
    }
    order_.undo_early(p_);
    apply_pending(0);
    if (forces.acc.cols() != p_.pos.cols() || forces.pot.size() != p_.mass.size())
        throw std::logic_error("particle store: forces for another number of particles");
    // Swapped, not copied: at 10^6 particles a copy is a 24 MB pass per step.
    p_.acc.swap(forces.acc);
    p_.pot.swap(forces.pot);
}

void ParticleStore::take_forces_in_order(Forces& forces, std::vector<std::uint32_t>& order)
{
    if (!may_reorder()) throw std::logic_error("particle store: forces in an engine's order, but the order is held");
    if (order.size() != p_.size()) throw std::logic_error("particle store: an order of another length");
    apply_pending(0); // an order not yet applied (no kick between two computations)
    p_.acc.swap(forces.acc);
    p_.pot.swap(forces.pot);
    pending_.swap(order);
    pending_set_ = true;
}

void ParticleStore::move_early(const std::vector<std::uint32_t>& order)
{
    apply_pending(0);
    order_.move_early(p_, order);
}

void ParticleStore::undo_early()
{
    order_.undo_early(p_);
}

bool ParticleStore::apply_pending(double h)
{
    if (!pending_set_) return true;
    const auto start = WallClock::now();
    pending_set_ = false;
    const VelocityKick with{h != 0 ? &p_.acc : nullptr, h};
    const bool finite = order_.adopt(p_, pending_, ParticleOrder::Forces::replaced, with);
    reorder_seconds_ += seconds_since(start);
    return finite;
}

void ParticleStore::restore_order()
{
    order_.undo_early(p_);
    apply_pending(0);
    if (on_device()) {
        host();
        device_->unload();
        ++epoch_;
    }
    const auto start = WallClock::now();
    if (order_.restore(p_)) ++epoch_;
    reorder_seconds_ += seconds_since(start);
}

void ParticleStore::settle_order()
{
    host();
    const auto start = WallClock::now();
    order_.settle(p_);
    reorder_seconds_ += seconds_since(start);
}

void ParticleStore::start_over()
{
    if (on_device()) device_->unload();
    device_ = nullptr;
    host_current_ = true;
    order_.forget();
    pending_set_ = false;
    slot_types_.clear();
    last_drift_ = 0;
    ++epoch_;
}

DeviceTimeBins* ParticleStore::device_time_bins()
{
    DeviceTimeBins* bins = device_ ? device_->time_bins() : nullptr;
    if (!bins) return nullptr;
    if (!device_->loaded()) device_->load(host(), types());
    host_current_ = false;
    return bins;
}

void ParticleStore::kick_drift(double h, double dt)
{
    last_drift_ = dt;
    if (device_) {
        if (!device_->loaded()) device_->load(host(), types());
        device_->kick_drift(h, dt);
        host_current_ = false;
        return;
    }
    order_.undo_early(p_);
    apply_pending(0);
    // Fused over the 3N coordinates: one pass over memory.
    const auto count = static_cast<std::int64_t>(3 * p_.size());
    double* x = p_.pos.data();
    double* v = p_.vel.data();
    const double* a = p_.acc.data();
#pragma omp parallel for schedule(static) if (count > 16384)
    for (std::int64_t i = 0; i < count; ++i) {
        v[i] = kicked(v[i], a[i], h);
        x[i] = drifted(x[i], v[i], dt);
    }
}

bool ParticleStore::kick(double h)
{
    if (on_device()) {
        host_current_ = false;
        return device_->kick(h);
    }
    if (pending_set_) return apply_pending(h); // the move and the kick in one pass
    const auto count = static_cast<std::int64_t>(3 * p_.size());
    const double* a = p_.acc.data();
    const double* x = p_.pos.data();
    double* v = p_.vel.data();
    bool finite = true;
#pragma omp parallel for schedule(static) reduction(&& : finite) if (count > 16384)
    for (std::int64_t i = 0; i < count; ++i) {
        v[i] = kicked(v[i], a[i], h);
        finite = finite && std::isfinite(x[i]) && std::isfinite(v[i]);
    }
    return finite;
}

} // namespace grove
