// The particles' state between steps: where it lives (the host's arrays, or an engine's device) and
// in which order (the caller's, or the order of an engine's last tree, with the way back). The
// leapfrog's operations (kick, drift) are applied by the store where the state is; engines compute
// forces on a store (ForceEngine::compute) and hand their forces back in their own order when the
// store allows it. Files, diagnostics and Python see the caller's order (restore_order).
#pragma once

#include <cstdint>
#include <vector>

#include "core/array_views.hpp"
#include "core/device_particles.hpp"
#include "core/particle_order.hpp"
#include "core/particles.hpp"

namespace grove {

struct Forces; // core/force_engine.hpp

class ParticleStore {
  public:
    // Keeps `particles` (not a copy) for the store's life; they are in the caller's order now.
    // may_reorder: engines may move the particles into their order between outputs.
    explicit ParticleStore(ParticleSet& particles, bool may_reorder = true);
    ParticleStore(const ParticleStore&) = delete;
    ParticleStore& operator=(const ParticleStore&) = delete;

    // ---- Where the state lives
    // From the next kick_drift() on, the state lives on `device` (an engine's, which outlives the
    // store's use of it); null keeps it on the host.
    void place_on(DeviceParticles* device);
    DeviceParticles* device() const { return device_; }
    bool on_device() const { return device_ && device_->loaded(); }
    bool holds(const ParticleSet& particles) const { return &particles == &p_; }
    // The host's arrays, current: a pending move applied, the device's state copied back (it stays
    // there). In the caller's order only after restore_order() or where nothing moved them.
    ParticleSet& host();

    // Hands the state to the device now, where one is placed (as the next kick_drift() would).
    void load_on_device();
    // The diagnostics of a state that lives on the device, made there (DeviceParticles::
    // diagnostics); false where the caller must compute them from host().
    bool device_diagnostics(const std::vector<double>& fractions, Diagnostics& out);
    // ---- Order
    bool may_reorder() const { return may_reorder_ && hold_ == 0; }
    // While one lives, engines hand forces back in the particles' current order (start of a run).
    class OrderHold {
      public:
        explicit OrderHold(ParticleStore& s) : s_(s) { ++s_.hold_; }
        ~OrderHold() { --s_.hold_; }
        OrderHold(const OrderHold&) = delete;
        OrderHold& operator=(const OrderHold&) = delete;

      private:
        ParticleStore& s_;
    };
    // Forces of the particles as they are (swapped in, not copied).
    void take_forces(Forces& forces);
    // Forces in an engine's order (column k belongs to particle order[k]): the particles follow,
    // moved with the next kick (one pass over them). The engine guarantees order is a permutation;
    // order is taken (swapped with the store's scratch).
    void take_forces_in_order(Forces& forces, std::vector<std::uint32_t>& order);
    // That move's positions, velocities and masses made early, while the engine's device works
    // (the engine no longer reads them); the next take_forces_in_order() must name the same order.
    // undo_early() puts them back when the forces never come (host(), restore_order() and
    // kick_drift() do so too, for an engine that failed in between).
    void move_early(const std::vector<std::uint32_t>& order);
    void undo_early();
    // Everything back in the caller's order on the host; a device's state is dropped (the next step
    // loads it afresh, as a run restarted from a checkpoint written now does).
    void restore_order();
    // The particles' current order on the host becomes the caller's (ParticleOrder::settle): IDs
    // and types follow them, restore_order() has nothing left to undo, and the host's arrays are
    // consistent in an order of the engine's.
    void settle_order();
    // The caller replaced the particles in the same set (another number, other content: a rank's
    // domain after particles moved between ranks). What the store knew of their order, a pending
    // move and a device's copy are dropped, as a new store would start; its scratch arrays keep
    // their memory, which a new store would allocate (and fault in) again.
    void start_over();
    // The particles' types in their current order: the caller's array while nothing moved, else a
    // copy gathered through caller_index() (types stay in the caller's order, as IDs do).
    TypesRef types();
    // Where the particle now in slot k was in the caller's order; empty while nothing moved.
    const std::vector<std::uint32_t>& caller_index() const { return order_.caller_index(); }
    // Changes whenever the particles move in a way no engine asked for (restore_order): an engine
    // that keeps structure indexing them (a refitted tree) then rebuilds it.
    std::uint64_t order_epoch() const { return epoch_; }

    // ---- Step operations, applied where the state is
    // v += h a; x += dt v.
    void kick_drift(double h, double dt);
    // v += h a; false when a position or velocity became non-finite.
    bool kick(double h);
    double time() const { return p_.time; }
    void advance_time(double dt) { p_.time += dt; }
    // The last kick_drift's dt (engines predict the next drift with it); 0 before the first.
    double last_drift() const { return last_drift_; }

    // Block time steps where the state lives: the device's, with the state loaded there (from the
    // host's arrays, in their order, if it is not yet), or null where the store is on the host or
    // its device runs no time bins. The host's arrays are stale from then on until host().
    DeviceTimeBins* device_time_bins();

    double reorder_seconds() const { return reorder_seconds_; } // moving particles on the host

  private:
    // Applies a pending move, with the kick h (0: none); the finiteness of what moved.
    bool apply_pending(double h);

    ParticleSet& p_;
    bool may_reorder_;
    int hold_ = 0;
    DeviceParticles* device_ = nullptr;
    bool host_current_ = true; // the host's arrays hold the device's state
    ParticleOrder order_;
    std::vector<std::uint32_t> pending_;   // take_forces_in_order's order, not yet applied
    std::vector<std::uint8_t> slot_types_; // types(), once the particles moved
    bool pending_set_ = false;
    std::uint64_t epoch_ = 0;
    double last_drift_ = 0;
    double reorder_seconds_ = 0;
};

} // namespace grove
