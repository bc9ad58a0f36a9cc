// Particle sets for tests: random, clustered and degenerate configurations with fixed seeds.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "core/hdf5_file.hpp"
#include "core/particles.hpp"
#include "core/snapshot.hpp"

namespace grove::test {

// The per-particle columns of two sets are equal, value for value (positions, velocities,
// masses, IDs, types, accelerations, potentials); callers check what else they need.
inline void check_same_columns(const ParticleSet& a, const ParticleSet& b)
{
    REQUIRE(a.size() == b.size());
    CHECK(a.pos == b.pos);
    CHECK(a.vel == b.vel);
    CHECK(a.mass == b.mass);
    CHECK(a.id == b.id);
    CHECK(a.type == b.type);
    CHECK(a.acc == b.acc);
    CHECK(a.pot == b.pot);
}

// N particles uniform in [-1, 1]^3, masses uniform in [0.5, 1.5] / N, small random velocities.
inline ParticleSet random_particles(std::size_t n, std::uint64_t seed = 1)
{
    ParticleSet p;
    p.resize(n);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<Eigen::Index>(i);
        p.pos.col(c) << u(rng), u(rng), u(rng);
        p.vel.col(c) << 0.1 * u(rng), 0.1 * u(rng), 0.1 * u(rng);
        p.mass[c] = (1.0 + 0.5 * u(rng)) / static_cast<double>(n);
    }
    return p;
}

// A small snapshot whose header claims `counts` particles of each type (files that lie about
// their size, for the memory plans).
inline void write_claiming(const std::string& path, const std::vector<std::uint64_t>& counts)
{
    write_snapshot(path, random_particles(10, 4));
    auto file = h5::open_file_rw(path);
    auto header = h5::open_group(file.id(), "Header");
    h5::write_attribute(header.id(), "NumPart_ThisFile", counts);
}

// Two bodies of mass 1/2 on an orbit of eccentricity e (G (m1 + m2) = 1, semi-major axis 1, period
// 2 pi), at pericentre.
inline ParticleSet kepler_pair(double e)
{
    ParticleSet p;
    p.resize(2);
    p.mass << 0.5, 0.5;
    const double rp = 1 - e, vp = std::sqrt((1 + e) / (1 - e));
    p.pos.col(0) << -rp / 2, 0, 0;
    p.pos.col(1) << rp / 2, 0, 0;
    p.vel.col(0) << 0, -vp / 2, 0;
    p.vel.col(1) << 0, vp / 2, 0;
    return p;
}

// Two Plummer-like clumps of very different size: tests deep trees and wide dynamic range.
inline ParticleSet clustered_particles(std::size_t n, std::uint64_t seed = 2)
{
    ParticleSet p = random_particles(n, seed);
    std::mt19937_64 rng(seed + 100);
    std::normal_distribution<double> g(0.0, 1.0);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<Eigen::Index>(i);
        const double scale = (i % 3 == 0) ? 1e-3 : 0.2;
        const double offset = (i % 3 == 0) ? 0.7 : -0.3;
        p.pos.col(c) << offset + scale * g(rng), scale * g(rng), scale * g(rng);
    }
    return p;
}

// A sample file of data/: from $GROVE_DATA_DIR when set (a test binary run outside its build tree,
// e.g. on the GPU host), else from the copy of data/ that CMake puts in the build tree.
inline std::string data_path(const std::string& name)
{
    const char* dir = std::getenv("GROVE_DATA_DIR");
    return std::string(dir && *dir ? dir : GROVE_TEST_DATA) + "/" + name;
}

// True when Debian's /usr/bin/python3 imports every module named (comma-separated).
inline bool python_has(const std::string& modules)
{
    return std::system(("/usr/bin/python3 -c 'import " + modules + "' > /dev/null 2>&1").c_str()) == 0;
}

// Ends the test as skipped: CTest reports it so (SKIP_REGULAR_EXPRESSION in tests/CMakeLists.txt)
// instead of counting a test that checked nothing as passed.
#define GROVE_SKIP_TEST(why)                                                                                           \
    do {                                                                                                               \
        std::cout << "grove-test-skipped: " << (why) << std::endl;                                                     \
        return;                                                                                                        \
    } while (0)

// A fresh path under the build tree's test scratch folder.
// 0, 1, ..., n - 1: every particle active.
inline std::vector<std::int32_t> all_indices(std::size_t n)
{
    std::vector<std::int32_t> a(n);
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::int32_t>(i);
    return a;
}

inline std::string scratch_path(const std::string& name)
{
    return std::string(GROVE_TEST_SCRATCH) + "/" + name;
}

// Runs a shell command with its output in a scratch file (read into `output` where given); the
// exit status, 128 where it did not exit.
inline int run_command(const std::string& command, std::string* output = nullptr)
{
    const std::string log = scratch_path("cmd_" + std::to_string(::getpid()) + ".txt"); // CTest runs cases side by side
    const int status = std::system((command + " > " + log + " 2>&1").c_str());
    if (output) {
        std::ifstream f(log);
        std::stringstream ss;
        ss << f.rdbuf();
        *output = ss.str();
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

} // namespace grove::test
