#include "tree/refit.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/wall_clock.hpp"
#include "tree/groups.hpp"
#include "tree/moments.hpp"

namespace grove {

namespace {

} // namespace

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
    compute_moments(tree, tree.segments, true);
    t.moments = seconds_since(start);
    start = WallClock::now();
    refit_group_boxes(tree);
    t.groups = seconds_since(start);
}

TreeUpdater::TreeUpdater(int rebuild_every) : rebuild_every_(rebuild_every)
{
    if (rebuild_every < 1) throw std::invalid_argument("tree: --rebuild-every must be >= 1");
}

bool TreeUpdater::update(Octree& tree, PositionsRef pos, MassesRef mass, const BuildParams& params, BuildTimes* times)
{
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

bool TreeUpdater::take_order(Octree& tree, std::vector<std::uint32_t>& order)
{
    if (order_taken_ || tree.order.empty()) return false;
    order.swap(tree.order);
    const auto n = static_cast<std::int64_t>(order.size());
    tree.order.resize(order.size());
#pragma omp parallel for schedule(static) if (n > 16384)
    for (std::int64_t k = 0; k < n; ++k) tree.order[static_cast<std::size_t>(k)] = static_cast<std::uint32_t>(k);
    order_taken_ = true;
    return true;
}

} // namespace grove
