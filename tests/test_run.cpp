// Leapfrog and `grove run`: second-order convergence and time reversibility on a Kepler orbit,
// and the run command's outputs on a small galaxy.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "integrators/leapfrog.hpp"
#include "src/direct_cpu.hpp"
#include "src/snapshot.hpp"

using namespace grove;

namespace {

// Two bodies, masses 0.5 each, G = 1, relative orbit with semi-major axis 1 and eccentricity e,
// started at pericentre; the period is 2 pi.
ParticleSet kepler(double e)
{
    ParticleSet p;
    p.resize(2);
    p.mass << 0.5, 0.5;
    const double rp = 1 - e, vp = std::sqrt((1 + e) / (1 - e)); // G (m1 + m2) = 1, a = 1
    p.pos.col(0) << -rp / 2, 0, 0;
    p.pos.col(1) << rp / 2, 0, 0;
    p.vel.col(0) << 0, -vp / 2, 0;
    p.vel.col(1) << 0, vp / 2, 0;
    return p;
}

double separation_error_after_one_period(double dt)
{
    ParticleSet p = kepler(0.5);
    const ParticleSet start = p;
    DirectCpuEngine engine(GravityParams{1.0, 0.0});
    Leapfrog lf(engine, dt);
    lf.start(p);
    const auto steps = std::lround(2 * 3.14159265358979323846 / dt);
    for (long s = 0; s < steps; ++s) lf.step(p);
    return (p.pos.col(1) - p.pos.col(0) - (start.pos.col(1) - start.pos.col(0))).norm();
}

} // namespace

TEST_CASE("leapfrog converges at second order on a Kepler orbit", "[integrator]")
{
    // dt = 2 pi / 2000 and half of it: the error after one period falls by about 4.
    const double e1 = separation_error_after_one_period(2 * 3.14159265358979323846 / 2000);
    const double e2 = separation_error_after_one_period(2 * 3.14159265358979323846 / 4000);
    INFO("errors " << e1 << " " << e2);
    CHECK(e1 / e2 == Approx(4.0).epsilon(0.1));
    CHECK(e1 < 1e-2);
}

TEST_CASE("leapfrog is time-reversible", "[integrator]")
{
    ParticleSet p = kepler(0.5);
    const ParticleSet start = p;
    DirectCpuEngine engine(GravityParams{1.0, 0.0});
    Leapfrog lf(engine, 1e-3);
    lf.start(p);
    for (int s = 0; s < 3000; ++s) lf.step(p);
    p.vel = -p.vel;
    Leapfrog back(engine, 1e-3);
    back.start(p);
    for (int s = 0; s < 3000; ++s) back.step(p);
    CHECK((p.pos - start.pos).norm() < 1e-10);
    CHECK((p.vel + start.vel).norm() < 1e-10);
    CHECK_THROWS_WITH(Leapfrog(engine, -1), Catch::Contains("--dt"));
}

TEST_CASE("grove run writes snapshots, diagnostics and parameters, and refuses to overwrite", "[integrator][cli]")
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / "run_galaxy";
    fs::remove_all(dir);
    const std::string cmd = std::string(GROVE_EXE) + " run " + GROVE_SOURCE_DIR + "/data/galaxy_16k.hdf5 -o " +
                            dir.string() +
                            " --engine tree-cpu --eps 0.1 --dt 2.5e-4 --t-end 1e-3 --snapshot-every 5e-4 --log-every 1"
                            " > " +
                            (dir.string() + ".log") + " 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    CHECK(fs::exists(dir / "snapshot_0000.hdf5"));
    CHECK(fs::exists(dir / "snapshot_0002.hdf5"));
    CHECK_FALSE(fs::exists(dir / "snapshot_0003.hdf5"));
    const ParticleSet last = read_snapshot((dir / "snapshot_0002.hdf5").string());
    CHECK(last.time == Approx(1e-3));
    CHECK(last.run_parameters.at("run.engine_used") == "tree-cpu");
    std::ifstream diag(dir / "diagnostics.txt");
    std::string line;
    int rows = 0;
    double de = 0;
    while (std::getline(diag, line)) {
        if (line.empty() || line[0] == '#') continue;
        ++rows;
        double t, step, T, W, E;
        std::istringstream(line) >> t >> step >> T >> W >> E >> de;
    }
    CHECK(rows == 5);           // t = 0 and four steps
    CHECK(std::abs(de) < 1e-3); // four small steps of an equilibrium model
    CHECK(fs::exists(dir / "run.yml"));
    // A second run into the same directory is refused and loses nothing.
    CHECK(std::system(cmd.c_str()) != 0);
    CHECK(fs::exists(dir / "snapshot_0002.hdf5"));
}

TEST_CASE("the galaxy equilibrium script runs end to end on a small model", "[integrator][scripts]")
{
    namespace fs = std::filesystem;
    // Needs Debian's python3-h5py and numpy for /usr/bin/python3 (scripts/setup.sh installs them).
    if (std::system("/usr/bin/python3 -c 'import h5py, numpy' > /dev/null 2>&1") != 0) {
        WARN("h5py/numpy missing for /usr/bin/python3; skipping");
        return;
    }
    const fs::path out = fs::path(GROVE_TEST_SCRATCH) / "equilibrium";
    fs::remove_all(out);
    const std::string cmd = std::string("/usr/bin/python3 ") + GROVE_SOURCE_DIR +
                            "/scripts/galaxy_equilibrium.py --grove " + GROVE_EXE +
                            " --n 2000 --engine tree-cpu --dt 1e-3 --t-end 4e-3 --snapshots 2 --out " + out.string() +
                            " > " + out.string() + ".log 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    std::ifstream table(out / "equilibrium.md");
    const std::string text((std::istreambuf_iterator<char>(table)), std::istreambuf_iterator<char>());
    CHECK(text.find("| bulge r10 |") != std::string::npos);
    CHECK(text.find("| disk median abs(z) |") != std::string::npos);
    CHECK(text.find("| halo r90 |") != std::string::npos);
}
