// [gpu] The GRAPE engine on the GPU against the CPU one: forces, jerk, potential, nearest
// neighbours and neighbour lists, in double and mixed precision, with few and many i-particles
// (the j-split), partial uploads and zero softening.
#include <catch2/catch.hpp>

#include <random>

#include "gpu/grape_gpu.h"
#include "tree/grape_cpu.hpp"

using namespace grove;

namespace {

void load(GrapeEngine& e, int n, unsigned seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    e.resize(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
        GrapeJParticle p;
        for (int d = 0; d < 3; ++d) {
            p.x[d] = u(rng);
            p.v[d] = 0.3 * u(rng);
            p.a2[d] = 0.1 * u(rng);
            p.j6[d] = 0.05 * u(rng);
            p.k18[d] = 0.02 * u(rng);
        }
        p.t = 0.1 * std::abs(u(rng));
        p.mass = 1.0 / n;
        p.name = 1000 + k;
        e.set(static_cast<std::size_t>(k), p);
    }
}

GrapeIParticles some_i(int ni, int n, unsigned seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    GrapeIParticles in;
    for (int k = 0; k < ni; ++k) {
        for (int d = 0; d < 3; ++d) {
            in.x.push_back(u(rng));
            in.v.push_back(0.3 * u(rng));
        }
        in.name.push_back(1000 + (k * 7) % n); // names shared with j-particles: skipped by name
        in.h2.push_back(0.01);
    }
    return in;
}

} // namespace

TEST_CASE("the GPU GRAPE engine equals the CPU one", "[gpu][grape]")
{
    const auto precision = GENERATE(Precision::Double, Precision::Mixed);
    const int ni = GENERATE(5, 3000);
    // With lists, and without (mixed then takes the kernel with two i-particles per thread).
    const std::size_t capacity = GENERATE(std::size_t{64}, std::size_t{0});
    const double tol = precision == Precision::Double ? 1e-12 : 2e-6;
    INFO(precision_name(precision) << ", " << ni << " i-particles, list capacity " << capacity);
    const int n = 20000;
    GrapeCpuEngine cpu;
    GrapeGpuEngine gpu(precision);
    load(cpu, n, 5);
    load(gpu, n, 5);
    const GrapeIParticles in = some_i(ni, n, 9);
    GrapeResults a, b;
    cpu.evaluate(0.2, n, in, 1e-4, capacity, a);
    gpu.evaluate(0.2, n, in, 1e-4, capacity, b);
    double worst = 0;
    for (int k = 0; k < ni; ++k) {
        double da = 0, na = 0, dj = 0, nj = 0;
        for (int d = 0; d < 3; ++d) {
            da += (a.acc[3 * k + d] - b.acc[3 * k + d]) * (a.acc[3 * k + d] - b.acc[3 * k + d]);
            na += a.acc[3 * k + d] * a.acc[3 * k + d];
            dj += (a.jerk[3 * k + d] - b.jerk[3 * k + d]) * (a.jerk[3 * k + d] - b.jerk[3 * k + d]);
            nj += a.jerk[3 * k + d] * a.jerk[3 * k + d];
        }
        worst = std::max({worst, std::sqrt(da / na), std::sqrt(dj / nj) / 10});
        CHECK(b.pot[k] == Approx(a.pot[k]).epsilon(tol));
        CHECK(b.nearest[k] == a.nearest[k]);
        CHECK(b.nearest_r2[k] == Approx(a.nearest_r2[k]).epsilon(tol));
        if (capacity == 0) continue;
        REQUIRE(b.count[k] == a.count[k]);
        if (!a.overflowed[k])
            for (std::int64_t m = 0; m < a.count[k]; ++m)
                CHECK(b.neighbours[b.offset[k] + m] == a.neighbours[a.offset[k] + m]);
    }
    CHECK(worst < tol);

    // A partial upload: two j-particles change, and the next evaluation sees them.
    GrapeJParticle moved;
    moved.x[0] = 0.5;
    moved.mass = 0.3;
    moved.name = 1000;
    cpu.set(0, moved);
    gpu.set(0, moved);
    cpu.evaluate(0.3, n, in, 1e-4, 0, a);
    gpu.evaluate(0.3, n, in, 1e-4, 0, b);
    for (int k = 0; k < ni; ++k) CHECK(b.pot[k] == Approx(a.pot[k]).epsilon(tol));
}

TEST_CASE("the GPU GRAPE engine refuses coincident particles without softening", "[gpu][grape]")
{
    GrapeGpuEngine gpu(Precision::Mixed);
    gpu.resize(2);
    GrapeJParticle p;
    p.mass = 1;
    p.name = 1;
    gpu.set(0, p);
    p.name = 2;
    gpu.set(1, p);
    GrapeIParticles in;
    in.x = {0, 0, 0};
    in.v = {0, 0, 0};
    in.name = {1};
    in.h2 = {0};
    GrapeResults r;
    CHECK_THROWS_WITH(gpu.evaluate(0, 2, in, 0.0, 0, r), Catch::Contains("same position"));
    CHECK_NOTHROW(gpu.evaluate(0, 2, in, 1e-4, 0, r));
}

TEST_CASE(
    "the GPU GRAPE engine's nearest neighbour on a lattice: ties go to the smaller name, never self or an empty slot",
    "[gpu][grape]")
{
    const auto precision = GENERATE(Precision::Double, Precision::Mixed);
    INFO(precision_name(precision));
    const int side = 6, n = side * side * side;
    GrapeCpuEngine cpu;
    GrapeGpuEngine gpu(precision);
    for (GrapeEngine* e : {static_cast<GrapeEngine*>(&cpu), static_cast<GrapeEngine*>(&gpu)}) {
        e->resize(n + 3); // three empty slots at the origin, inside nj
        for (int k = 0; k < n; ++k) {
            GrapeJParticle p;
            p.x[0] = k / (side * side);
            p.x[1] = (k / side) % side;
            p.x[2] = k % side;
            p.mass = 1.0;
            p.name = n - k; // names descending in memory: the tie-break is by name, not slot
            e->set(static_cast<std::size_t>(k + 3), p);
        }
    }
    GrapeIParticles in;
    for (int k = 0; k < n; ++k) {
        in.x.insert(in.x.end(), {double(k / (side * side)), double((k / side) % side), double(k % side)});
        in.v.insert(in.v.end(), {0.0, 0.0, 0.0});
        in.name.push_back(n - k);
        in.h2.push_back(0.0);
    }
    GrapeResults a, b;
    cpu.evaluate(0.0, n + 3, in, 1e-6, 0, a);
    gpu.evaluate(0.0, n + 3, in, 1e-6, 0, b);
    for (int k = 0; k < n; ++k) {
        INFO("i " << k);
        CHECK(b.nearest[k] == a.nearest[k]);
        CHECK(b.nearest[k] != in.name[k]);
        CHECK(b.nearest[k] > 0);
        CHECK(b.nearest_r2[k] == Approx(1.0));
        CHECK(b.pot[k] == Approx(a.pot[k]).epsilon(1e-6));
    }
    // Two i-particles: the j-particles split over two blocks, and the reduction keeps the choice.
    in.x.resize(6);
    in.v.resize(6);
    in.name.resize(2);
    in.h2.resize(2);
    cpu.evaluate(0.0, n + 3, in, 1e-6, 0, a);
    gpu.evaluate(0.0, n + 3, in, 1e-6, 0, b);
    CHECK(b.nearest[0] == a.nearest[0]);
    CHECK(b.nearest[1] == a.nearest[1]);
}

TEST_CASE("the GPU GRAPE engine keeps its j-memory when it grows", "[gpu][grape]")
{
    const auto precision = GENERATE(Precision::Double, Precision::Mixed);
    INFO(precision_name(precision));
    GrapeCpuEngine cpu;
    GrapeGpuEngine gpu(precision);
    const int n = 100;
    load(cpu, n, 3);
    load(gpu, n, 3);
    const GrapeIParticles in = some_i(5, n, 4);
    GrapeResults a, b;
    gpu.evaluate(0.1, n, in, 1e-4, 0, b); // the first n slots are on the device now
    GrapeJParticle p;
    p.x[1] = 0.25;
    p.mass = 0.5;
    p.name = 7;
    for (GrapeEngine* e : {static_cast<GrapeEngine*>(&cpu), static_cast<GrapeEngine*>(&gpu)}) {
        e->set(3, p);    // staged before the growth
        e->resize(5000); // far past the device buffers' headroom
        p.name = 8;
        e->set(4000, p); // and one after it; the slots between stay empty
        p.name = 7;
    }
    REQUIRE(gpu.size() == 5000);
    cpu.evaluate(0.2, 5000, in, 1e-4, 0, a);
    gpu.evaluate(0.2, 5000, in, 1e-4, 0, b);
    for (int k = 0; k < 5; ++k) {
        CHECK(b.pot[k] == Approx(a.pot[k]).epsilon(1e-6));
        CHECK(b.acc[3 * k + 1] == Approx(a.acc[3 * k + 1]).epsilon(1e-5));
        CHECK(b.nearest[k] == a.nearest[k]);
    }
}
