// The hierarchical time steps' integer timeline: bins from the criterion, when a bin is due, and
// the rule that a particle moves to a longer step only where that step is due.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/time_bins.hpp"

using namespace grove;

TEST_CASE("time bins: the longest power-of-two step within the criterion's", "[integrator][bins]")
{
    const double dt_max = 0.0625;
    CHECK(bin_for_step(1.0, dt_max) == 0);
    CHECK(bin_for_step(dt_max, dt_max) == 0);
    CHECK(bin_for_step(std::nextafter(dt_max, 0.0), dt_max) == 1);
    CHECK(bin_for_step(dt_max / 2, dt_max) == 1); // exactly a bin's step: that bin
    CHECK(bin_for_step(dt_max / 3, dt_max) == 2);
    CHECK(bin_for_step(dt_max / 1024, dt_max) == 10);
    CHECK(bin_for_step(dt_max / 1000, dt_max) == 10);
    CHECK(bin_for_step(1e-300, dt_max) == kMaxBin);
    CHECK(bin_for_step(0.0, dt_max) == kMaxBin);
    CHECK(bin_for_step(std::nan(""), dt_max) == kMaxBin);
    for (int k = 0; k <= kMaxBin; ++k) {
        const double step = std::ldexp(dt_max, -k);
        REQUIRE(bin_for_step(step, dt_max) == k);
        REQUIRE(step <= dt_max);
    }
    // GADGET's criterion: sqrt(2 eta eps / |a|).
    CHECK(gadget_time_step(0.02, 0.05, 4.0) == Approx(std::sqrt(2 * 0.02 * 0.05 / 4.0)));
    CHECK(std::isinf(gadget_time_step(0.02, 0.05, 0.0)));
    CHECK(bin_for_step(gadget_time_step(0.02, 0.05, 0.0), dt_max) == 0);
}

TEST_CASE("time bins: due ticks, and longer steps only where they are due", "[integrator][bins]")
{
    CHECK(ticks_of_bin(0) == kTicksPerMaxStep);
    CHECK(ticks_of_bin(kMaxBin) == 1);
    CHECK(bin_due(0, 0));
    CHECK(bin_due(0, kTicksPerMaxStep));
    CHECK_FALSE(bin_due(0, kTicksPerMaxStep / 2));
    CHECK(bin_due(1, kTicksPerMaxStep / 2));
    CHECK(bin_due(kMaxBin, 12345));
    // Shorter at once, whatever the tick.
    CHECK(next_bin(3, 7, ticks_of_bin(3) * 5) == 7);
    // Longer: at a tick where bin 3's step ends but not bin 2's, the particle stays in 3...
    const Tick t = ticks_of_bin(3) * 5; // an odd multiple of bin 3's step
    CHECK(next_bin(3, 0, t) == 3);
    // ... and at a tick where bins down to 1 are due it goes to 1, not to the 0 it asked for.
    const Tick u = ticks_of_bin(1) * 3;
    CHECK(next_bin(3, 0, u) == 1);
    CHECK(next_bin(3, 2, u) == 2);
    CHECK(next_bin(5, 0, 0) == 0);
    // Every move keeps the particle's time a multiple of its new step.
    for (Tick tick = 0; tick < 64 * ticks_of_bin(6); tick += ticks_of_bin(6))
        for (int wanted = 0; wanted <= 8; ++wanted) {
            const int k = next_bin(6, wanted, tick);
            REQUIRE(bin_due(k, tick));
            REQUIRE((k == wanted || k > wanted));
        }
}

TEST_CASE("time bins: the dynamical time's cap from a profile of enclosed mass", "[integrator][bins]")
{
    // A profile of a homogeneous sphere of mass 8 and radius 2 about (1, 0, 0): M(<r) = 8 (r / 2)^3,
    // so the dynamical time sqrt(r^3 / (G M(<r))) is sqrt(1 / G) inside, wherever the particle is.
    EnclosedMassProfile p;
    p.mass = 8;
    p.centre[0] = 1;
    for (int k = 0; k < kProfilePoints; ++k) {
        p.fraction[k] = profile_fraction(k);
        p.radius[k] = 2 * std::cbrt(p.fraction[k]);
    }
    CHECK(p.fraction[0] == Approx(1e-5));
    CHECK(p.fraction[kProfilePoints - 1] == Approx(1.0));
    // Between two points the mass is interpolated linearly in r: exact at the points, within the
    // spacing's second order between them.
    for (int k = 0; k < kProfilePoints; ++k) CHECK(enclosed_mass(p, p.radius[k]) == Approx(8 * p.fraction[k]));
    CHECK(enclosed_mass(p, 1.0) == Approx(1.0).epsilon(0.01));
    CHECK(enclosed_mass(p, 2.0) == 8);
    CHECK(enclosed_mass(p, 5.0) == 8);
    // Inside the first point: that point's mass, more than the truth.
    CHECK(enclosed_mass(p, 0.0) == Approx(8e-5));
    CHECK(enclosed_mass(p, p.radius[0] / 2) == Approx(8e-5));
    const double G = 4;
    CHECK(dynamical_time_step(0.1, G, p, 1.5, 0, 0, 0.01) == Approx(0.1 * std::sqrt(1 / G)).epsilon(0.01));
    CHECK(dynamical_time_step(0.1, G, p, 1, 0.5, 0.5, 0.01) == Approx(0.1 * std::sqrt(1 / G)).epsilon(0.01));
    // Outside the sphere, Kepler's: sqrt(r^3 / (G M)).
    CHECK(dynamical_time_step(0.1, G, p, 1, 4, 0, 0.01) == Approx(0.1 * std::sqrt(64 / (G * 8))));
    // r floored at the softening: at the centre the step is that at r = eps.
    CHECK(dynamical_time_step(0.1, G, p, 1, 0, 0, 0.5) == dynamical_time_step(0.1, G, p, 1.5, 0, 0, 0.5));
    // The cap takes the shorter step; a step that is not a number stays one (the shortest bin).
    CHECK(capped_step(2.0, 1.0) == 1.0);
    CHECK(capped_step(1.0, 2.0) == 1.0);
    CHECK(std::isnan(capped_step(std::nan(""), 1.0)));
    CHECK(capped_step(1.0, std::numeric_limits<double>::infinity()) == 1.0);
}
