#include "tree/refit.hpp"

#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <utility>

#include "core/wall_clock.hpp"
#include "tree/groups.hpp"
#include "tree/moments.hpp"

namespace grove {

void refit_octree(Octree& tree, PositionsRef pos, MassesRef mass, BuildTimes* times)
{
    BuildTimes local;
    BuildTimes& t = times ? *times : local;
    t = BuildTimes{};
    const auto n = static_cast<std::int64_t>(tree.particles.size());
    if (pos.cols() != n || mass.size() != n)
        throw std::invalid_argument("tree: a refit needs the particle count of the last build");
    auto start = WallClock::now();
    int finite = 1;
#pragma omp parallel for schedule(static) reduction(&& : finite) if (n > 16384)
    for (std::int64_t k = 0; k < n; ++k) {
        const auto i = static_cast<Eigen::Index>(tree.order[static_cast<std::size_t>(k)]);
        tree.particles[static_cast<std::size_t>(k)] = {pos(0, i), pos(1, i), pos(2, i), mass[i]};
        finite = finite && std::isfinite(pos(0, i)) && std::isfinite(pos(1, i)) && std::isfinite(pos(2, i)) &&
                 std::isfinite(mass[i]);
    }
    if (!finite) throw std::invalid_argument("tree: non-finite position or mass");
    t.gather = seconds_since(start);
    start = WallClock::now();
    compute_moments(tree, tree.segments);
    t.moments = seconds_since(start);
    start = WallClock::now();
    refit_group_boxes(tree);
    t.groups = seconds_since(start);
}

TreeUpdater::TreeUpdater(int rebuild_every) : rebuild_every_(rebuild_every)
{
    if (rebuild_every < 1) throw std::invalid_argument("tree: --rebuild-every must be >= 1");
}

void TreeUpdater::force_rebuild()
{
    pending_ = nullptr;
    since_build_ = -1;
    next_ready_ = false; // built for the particles' old order
}

void TreeUpdater::hint(const Eigen::Matrix3Xd& vel, const Eigen::Matrix3Xd& acc, double dt)
{
    hint_vel_ = &vel;
    hint_acc_ = &acc;
    hint_dt_ = dt;
}

void TreeUpdater::start_lookahead(const Octree& current, PositionsRef pos, MassesRef mass, const BuildParams& params,
                                  bool order_handed_over)
{
    pending_ = nullptr;
    next_ready_ = false;
    next_for_handover_ = order_handed_over;
    handed_over_since_ = false;
    lookahead_seconds_ = 0;
    const Eigen::Matrix3Xd* vel = std::exchange(hint_vel_, nullptr);
    const Eigen::Matrix3Xd* acc = std::exchange(hint_acc_, nullptr);
    const auto n = pos.cols();
    if (!vel || !acc || rebuild_every_ != 1 || n == 0 || vel->cols() != n || acc->cols() != n) return;
    if (order_handed_over && current.order.size() != static_cast<std::size_t>(n)) return;
    const std::uint32_t* order = order_handed_over ? current.order.data() : nullptr;
    const double dt = hint_dt_;
    pending_ = [this, pos, mass, params, vel, acc, dt, order, n] {
        const auto start = WallClock::now();
        try {
            predicted_.resize(3, n);
            const auto count = static_cast<std::int64_t>(3 * n);
            const double *x = pos.data(), *v = vel->data(), *a = acc->data();
            double* p = predicted_.data();
#pragma omp parallel for schedule(static) if (count > 16384)
            for (std::int64_t i = 0; i < count; ++i) p[i] = x[i] + dt * (v[i] + dt * a[i]);
            // Only the structure: the refit to the exact positions computes everything else.
            build_octree_into(next_, predicted_, mass, params, nullptr, BuildContent::structure);
            if (order) { // particle order[k] will be particle k: index the next tree that way
                inverse_.resize(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static) if (n > 16384)
                for (std::int64_t k = 0; k < n; ++k) inverse_[order[k]] = static_cast<std::uint32_t>(k);
#pragma omp parallel for schedule(static) if (n > 16384)
                for (std::int64_t k = 0; k < n; ++k)
                    next_.order[static_cast<std::size_t>(k)] = inverse_[next_.order[static_cast<std::size_t>(k)]];
            }
            next_ready_ = true;
        } catch (const std::exception&) {
            next_ready_ = false; // e.g. a non-finite prediction: the next update() builds and reports
        }
        lookahead_seconds_ = seconds_since(start);
    };
}

void TreeUpdater::run_lookahead()
{
    if (!pending_) return;
    const std::function<void()> job = std::move(pending_);
    pending_ = nullptr;
    job();
}

bool TreeUpdater::update(Octree& tree, PositionsRef pos, MassesRef mass, const BuildParams& params, BuildTimes* times)
{
    pending_ = nullptr; // prepared for the last call's arrays
    // The next tree indexes the particles in the order they are in only if the order it expected
    // to be handed over was (and no other was): a failed evaluation or a refused handover drops it.
    const bool indexed_right = next_for_handover_ == handed_over_since_;
    if (std::exchange(next_ready_, false) && indexed_right &&
        next_.particles.size() == static_cast<std::size_t>(pos.cols()) && pos.cols() > 0) {
        std::swap(tree, next_);
        refit_octree(tree, pos, mass, times); // throws for non-finite positions, as a build does
        since_build_ = 0;
        order_taken_ = false; // never handed over: fresh
        return true;
    }
    const bool rebuild = since_build_ < 0 || since_build_ + 1 >= rebuild_every_ ||
                         static_cast<std::size_t>(pos.cols()) != tree.particles.size() || pos.cols() == 0;
    if (rebuild) {
        build_octree_into(tree, pos, mass, params, times);
        since_build_ = 0;
        order_taken_ = false;
    } else {
        refit_octree(tree, pos, mass, times);
        ++since_build_;
    }
    return rebuild;
}

void TreeUpdater::release()
{
    pending_ = nullptr;
    next_ = Octree{};
    next_ready_ = false;
    predicted_ = Eigen::Matrix3Xd();
    std::vector<std::uint32_t>().swap(inverse_);
    std::vector<std::uint32_t>().swap(handed_);
    force_rebuild();
}

void TreeUpdater::follow(ParticleStore& store)
{
    if (std::exchange(store_epoch_, store.order_epoch()) != store.order_epoch()) force_rebuild();
    const ParticleSet& p = store.host();
    if (store.last_drift() > 0) hint(p.vel, p.acc, store.last_drift());
}

void TreeUpdater::hand_forces(ParticleStore& store, Octree& tree, Forces& forces, bool tree_order)
{
    if (tree_order && take_order(tree, handed_))
        store.take_forces_in_order(forces, handed_);
    else
        store.take_forces(forces);
}

bool TreeUpdater::take_order(Octree& tree, std::vector<std::uint32_t>& order)
{
    if (order_taken_ || tree.order.empty()) return false;
    order.swap(tree.order);
    const auto n = static_cast<std::int64_t>(order.size());
    tree.order.resize(order.size());
#pragma omp parallel for schedule(static) if (n > 16384)
    for (std::int64_t k = 0; k < n; ++k) tree.order[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(k);
    order_taken_ = true;
    handed_over_since_ = true;
    return true;
}

} // namespace grove
