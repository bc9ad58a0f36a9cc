// The contract of ForceEngine::compute_in_own_order for a tree engine, checked the same way for
// tree-cpu (CPU tests) and tree-gpu ([gpu] tests).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/force_engine.hpp"
#include "core/particle_order.hpp"
#include "core/particles.hpp"
#include "tree/build.hpp"

namespace grove::test {

// make(params) builds the engine under test. For both criteria: the forces in the engine's own
// order are compute()'s permuted by the order handed over; after the caller moves its particles
// into that order, a refit keeps it (nothing new handed over) and gives the same forces; after
// particles_reordered() a build hands over a new order.
inline void check_forces_in_own_order(const ParticleSet& p,
                                      const std::function<std::unique_ptr<ForceEngine>(const TreeParams&)>& make)
{
    for (const MacKind mac : {MacKind::geometric, MacKind::relative}) {
        INFO((mac == MacKind::relative ? "relative" : "geometric") << " criterion");
        TreeParams params{0.5, {16, 32}};
        params.mac = mac;
        params.rebuild_every = 2;
        Forces caller, own;
        make(params)->compute(p.pos, p.mass, caller); // relative: after a first pass, as below
        const auto engine = make(params);
        std::vector<std::uint32_t> order;
        REQUIRE(engine->compute_in_own_order(p.pos, p.mass, own, order));
        REQUIRE(order.size() == p.size());
        for (std::size_t k = 0; k < order.size(); ++k) {
            REQUIRE(own.acc.col(static_cast<Eigen::Index>(k)) == caller.acc.col(order[k]));
            REQUIRE(own.pot[static_cast<Eigen::Index>(k)] == caller.pot[order[k]]);
        }
        ParticleSet q = p;
        ParticleOrder moved;
        moved.adopt(q, order);
        Forces refit;
        CHECK_FALSE(engine->compute_in_own_order(q.pos, q.mass, refit, order));
        // Equal up to the refit's rounding and (relative) the newer estimate; a wrong gather
        // would differ at order one.
        CHECK((refit.acc - own.acc).norm() <= 1e-3 * own.acc.norm());
        CHECK((refit.pot - own.pot).norm() <= 1e-3 * own.pot.norm());
        engine->particles_reordered();
        CHECK(engine->compute_in_own_order(q.pos, q.mass, refit, order));
    }
}

} // namespace grove::test
