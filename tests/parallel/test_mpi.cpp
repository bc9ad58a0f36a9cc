// `mpirun -np K grove forces|run`: the forces of K processes are bit-identical to one process's, for
// the direct and the tree engine (each particle's force comes from one rank's arithmetic), and so is
// a leapfrog run restarted with another K; a failure on one rank ends the whole job with its error,
// never a hang.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/diagnostics.hpp"
#include "core/engine_registry.hpp"
#include "core/force_errors.hpp"
#include "core/galaxy_model.hpp"
#include "core/hdf5_file.hpp"
#include "core/ic_models.hpp"
#include "core/key_ranges.hpp"
#include "core/rank_exchange.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "parallel/communicator.hpp"
#include "parallel/domain_files.hpp"
#include "parallel/domains.hpp"
#include "support/test_support.hpp"

using namespace grove;

namespace {

// Open MPI refuses root without these; one OpenMP thread per rank on a small CI machine.
const std::string kMpirun = "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 "
                            "timeout 120 mpirun --oversubscribe ";

int run(const std::string& command, std::string* output = nullptr)
{
    return test::run_command(command, output);
}

// Ten particles with IDs 1..10, their forces, and `count` arrivals with IDs 101, 102, ...
ParticleSet numbered(std::size_t count, std::uint64_t first_id)
{
    ParticleSet p;
    p.resize(count);
    p.acc.resize(3, static_cast<Eigen::Index>(count));
    p.pot.resize(static_cast<Eigen::Index>(count));
    for (std::size_t i = 0; i < count; ++i) {
        const auto c = static_cast<Eigen::Index>(i);
        p.id[i] = first_id + i;
        const auto v = static_cast<double>(p.id[i]);
        p.pos.col(c) << v, -v, 2 * v;
        p.vel.col(c) << 3 * v, 4 * v, 5 * v;
        p.mass[c] = v;
        p.acc.col(c) << 6 * v, 7 * v, 8 * v;
        p.pot[c] = 9 * v;
    }
    return p;
}

} // namespace

TEST_CASE("particles that change domains are exchanged in place, every record whole", "[domains]")
{
    struct Case {
        std::vector<std::size_t> leave;
        std::size_t arriving;
        std::vector<std::uint64_t> ids; // the result's, slot by slot
    };
    const std::vector<Case> cases = {
        {{1, 8, 9}, 1, {1, 101, 3, 4, 5, 6, 7, 8}},                 // fewer arrive; the top leavers are cut off
        {{1, 2, 9}, 0, {1, 9, 8, 4, 5, 6, 7}},                      // the last stayers fill the holes, 9 skipped
        {{1, 5}, 4, {1, 101, 3, 4, 5, 102, 7, 8, 9, 10, 103, 104}}, // more arrive: the rest follow
        {{0, 3}, 2, {101, 2, 3, 102, 5, 6, 7, 8, 9, 10}},           // as many
        {{}, 0, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
    };
    for (const Case& c : cases) {
        ParticleSet local = numbered(10, 1);
        exchange_in_place(local, c.leave, numbered(c.arriving, 101));
        REQUIRE(local.id == c.ids);
        REQUIRE(local.has_forces());
        for (std::size_t i = 0; i < local.size(); ++i) { // each record moved whole
            const auto k = static_cast<Eigen::Index>(i);
            const auto v = static_cast<double>(local.id[i]);
            CHECK(local.pos.col(k) == Eigen::Vector3d(v, -v, 2 * v));
            CHECK(local.vel.col(k) == Eigen::Vector3d(3 * v, 4 * v, 5 * v));
            CHECK(local.mass[k] == v);
            CHECK(local.acc.col(k) == Eigen::Vector3d(6 * v, 7 * v, 8 * v));
            CHECK(local.pot[k] == 9 * v);
        }
    }
    ParticleSet local = numbered(10, 1);
    ParticleSet bare = numbered(2, 101);
    bare.acc.resize(3, 0);
    exchange_in_place(local, {4}, bare); // arrivals without forces: the forces go
    CHECK(local.size() == 11);
    CHECK_FALSE(local.has_forces());
    CHECK_THROWS_AS(exchange_in_place(local, {3, 3}, numbered(1, 201)), std::invalid_argument);
    CHECK_THROWS_AS(exchange_in_place(local, {2, 11}, numbered(1, 201)), std::invalid_argument);
}

TEST_CASE("the domains on GPUs follow rarely where the stores move each step's crossers themselves", "[domains]")
{
    const char* before[2] = {std::getenv("GROVE_DOMAIN_CROSSERS"), std::getenv("GROVE_DOMAIN_RECUT")};
    const std::string saved[2] = {before[0] ? before[0] : "", before[1] ? before[1] : ""};
    ::unsetenv("GROVE_DOMAIN_CROSSERS");
    ::unsetenv("GROVE_DOMAIN_RECUT");
    // The GPUs cut the domains anew themselves: the domains follow at files alone.
    CHECK(domain_crossers_each_step());
    CHECK(domain_recut_steps() > 0);
    CHECK(device_follow_steps() == 0);
    for (long long s : {1LL, 32LL, 1024LL, 4096LL}) CHECK_FALSE(device_follow_due(s));
    // Without those cuts, the follows even out the counts now and then.
    ::setenv("GROVE_DOMAIN_RECUT", "0", 1);
    CHECK(device_follow_steps() == kDeviceFollowStepsWithCrossers);
    CHECK(device_follow_due(2 * kDeviceFollowStepsWithCrossers));
    CHECK_FALSE(device_follow_due(kDeviceFollowStepsWithCrossers + 1));
    ::setenv("GROVE_DOMAIN_CROSSERS", "follow", 1);
    CHECK_FALSE(domain_crossers_each_step());
    CHECK(device_follow_steps() == kDeviceFollowSteps);
    CHECK(kDeviceFollowSteps < kDeviceFollowStepsWithCrossers);
    ::setenv("GROVE_DOMAIN_RECUT", "16", 1); // the cuts belong to the crossers' stores
    CHECK(device_follow_steps() == kDeviceFollowSteps);
    ::setenv("GROVE_DOMAIN_CROSSERS", "step", 1);
    CHECK(device_follow_steps() == 0);
    ::setenv("GROVE_DOMAIN_CROSSERS", "often", 1);
    CHECK_THROWS_WITH(device_follow_steps(),
                      Catch::Contains("GROVE_DOMAIN_CROSSERS must be step or follow, not often"));
    const char* names[2] = {"GROVE_DOMAIN_CROSSERS", "GROVE_DOMAIN_RECUT"};
    for (int k = 0; k < 2; ++k)
        if (before[k])
            ::setenv(names[k], saved[k].c_str(), 1);
        else
            ::unsetenv(names[k]);
}

TEST_CASE("the GPUs cut their domains anew every few steps, as often as GROVE_DOMAIN_RECUT says", "[domains]")
{
    const char* before = std::getenv("GROVE_DOMAIN_RECUT");
    const std::string saved = before ? before : "";
    ::unsetenv("GROVE_DOMAIN_RECUT");
    CHECK(domain_recut_steps() == kDomainRecutSteps);
    ::setenv("GROVE_DOMAIN_RECUT", "4", 1);
    CHECK(domain_recut_steps() == 4);
    ::setenv("GROVE_DOMAIN_RECUT", "0", 1);
    CHECK(domain_recut_steps() == 0);
    for (const char* bad : {"-1", "often", "16x", "", "1e3"}) {
        ::setenv("GROVE_DOMAIN_RECUT", bad, 1);
        CHECK_THROWS_WITH(domain_recut_steps(), Catch::Contains("GROVE_DOMAIN_RECUT must be a whole number"));
    }
    if (before)
        ::setenv("GROVE_DOMAIN_RECUT", saved.c_str(), 1);
    else
        ::unsetenv("GROVE_DOMAIN_RECUT");
}

TEST_CASE("a store cuts its domains anew at the second step after a load, then every K steps", "[domains]")
{
    std::vector<long long> at;
    for (long long s = 1; s <= 40; ++s)
        if (recut_at(s, 16)) at.push_back(s);
    CHECK(at == std::vector<long long>{2, 18, 34});
    // Files every 10 steps, each a load: a cut after each, where counting from the load alone
    // (steps 16, 32, ...) would never come.
    CHECK(recut_at(2, 16));
    for (long long s = 3; s <= 10; ++s) CHECK_FALSE(recut_at(s, 16));
    CHECK_FALSE(recut_at(1, 16)); // the particles' costs come with the first step
    for (long long s = 1; s <= 40; ++s) CHECK_FALSE(recut_at(s, 0));
    for (long long s = 2; s <= 10; ++s) CHECK(recut_at(s, 1));
    CHECK(recut_at(6, 4));
    CHECK_FALSE(recut_at(8, 4));
}

TEST_CASE("key ranges from weighted samples: equal weight a rank, the same from any order", "[domains]")
{
    const std::uint64_t end = std::uint64_t{1} << 63;
    // 1000 samples of weight 1, keys 10 apart: three ranks take a third each.
    std::vector<WeightedKey> even;
    for (std::uint64_t k = 0; k < 1000; ++k) even.push_back({10 * k, 1.0});
    const std::vector<std::uint64_t> thirds = key_ranges_from_samples(even, 3, end);
    REQUIRE(thirds.size() == 4);
    CHECK(thirds[0] == 0);
    CHECK(thirds[3] == end);
    CHECK(thirds[1] == 3330); // sample 333: 333 before it, its middle at 333.5 >= 1000/3
    CHECK(thirds[2] == 6670);
    // The samples in another order: the same cuts.
    std::vector<WeightedKey> shuffled = even;
    std::reverse(shuffled.begin(), shuffled.end());
    std::swap(shuffled[3], shuffled[700]);
    CHECK(key_ranges_from_samples(shuffled, 3, end) == thirds);
    // Weights: the heavy first half gets fewer keys. Keys 0..99, weight 3 below 50, 1 above: total
    // 200, the middle at 100, reached by sample 33 (99 before it, its middle 100.5).
    std::vector<WeightedKey> heavy;
    for (std::uint64_t k = 0; k < 100; ++k) heavy.push_back({k, k < 50 ? 3.0 : 1.0});
    CHECK(key_ranges_from_samples(heavy, 2, end) == std::vector<std::uint64_t>{0, 33, end});
    // All weights 0: by count. No samples: every rank after the first is empty.
    std::vector<WeightedKey> zero;
    for (std::uint64_t k = 0; k < 10; ++k) zero.push_back({k, 0.0});
    CHECK(key_ranges_from_samples(zero, 2, end) == std::vector<std::uint64_t>{0, 5, end});
    CHECK(key_ranges_from_samples({}, 3, end) == std::vector<std::uint64_t>{0, end, end, end});
    CHECK(key_ranges_from_samples(even, 1, end) == std::vector<std::uint64_t>{0, end});
    // Ranges never run backwards, even where more ranks than samples.
    const std::vector<std::uint64_t> many = key_ranges_from_samples({{5, 1.0}, {9, 1.0}}, 6, end);
    CHECK(std::is_sorted(many.begin(), many.end()));
    CHECK_THROWS_AS(key_ranges_from_samples(even, 0, end), std::invalid_argument);
    CHECK_THROWS_AS(key_ranges_from_samples({{1, -1.0}}, 2, end), std::invalid_argument);
    CHECK_THROWS_AS(key_ranges_from_samples({{1, std::nan("")}}, 2, end), std::invalid_argument);
    CHECK_THROWS_AS(key_ranges_from_samples({{end, 1.0}}, 2, end), std::invalid_argument);
}

TEST_CASE("the domains follow a rank's work only where it is a count: finite and not negative", "[domains]")
{
    ParticleSet local = numbered(10, 1);
    DomainFollower follower;
    const Communicator& one = Communicator::world(); // one process: one domain, nothing moves
    CHECK_FALSE(follower.follow(local, one));
    CHECK_FALSE(follower.follow(local, one, 1e9));
    CHECK(local.size() == 10);
    CHECK_THROWS_AS(follower.follow(local, one, -1.0), std::invalid_argument);
    CHECK_THROWS_AS(follower.follow(local, one, std::nan("")), std::invalid_argument);
    CHECK_THROWS_AS(follower.follow(local, one, HUGE_VAL), std::invalid_argument);
}

// Particles of several types whose IDs are sparse, large (up to the largest) and in no order.
ParticleSet scattered_ids(std::size_t count, std::uint64_t seed)
{
    ParticleSet p = numbered(count, 1);
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < count; ++i) {
        p.id[i] = (std::uint64_t{1} << 40) + 977 * i + rng() % 977;
        p.type[i] = static_cast<std::uint8_t>(1 + rng() % 3);
    }
    p.id[count / 2] = std::numeric_limits<std::uint64_t>::max(); // the largest ID there is
    std::shuffle(p.id.begin(), p.id.end(), rng);
    return p;
}

TEST_CASE("files from domains: the snapshot and checkpoint one process writes of the set, checksum included, "
          "and read back in shares",
          "[domains]")
{
    const Communicator& one = Communicator::world(); // one rank: the machinery of the turns and pieces
    const std::string from_domains = test::scratch_path("domain_files_snapshot.hdf5"),
                      gathered = test::scratch_path("domain_files_gathered.hdf5");
    for (const bool forces : {true, false}) {
        INFO("forces " << forces);
        ParticleSet local = scattered_ids(1001, forces ? 3 : 4); // the types' bytes end short of a word
        if (!forces) {
            local.acc.resize(3, 0);
            local.pot.resize(0);
        }
        const ParticleSet share = share_in_id_order(local, one);
        REQUIRE(share.size() == local.size());
        CHECK(std::is_sorted(share.id.begin(), share.id.end()));
        write_snapshot_from_domains(from_domains, local, one);
        write_snapshot(gathered, sorted_by_id(local));
        const ParticleSet a = read_snapshot(from_domains), b = read_snapshot(gathered);
        CHECK(a.id == b.id);
        CHECK(a.type == b.type);
        CHECK(a.pos == b.pos);
        CHECK(a.vel == b.vel);
        CHECK(a.mass == b.mass);
        CHECK(a.has_forces() == forces);
        CHECK(a.acc == b.acc);
        CHECK(a.pot == b.pot);
        CHECK(a.time == b.time);

        Checkpoint c;
        c.particles = local;
        c.argv = {"in.hdf5", "-o", "out", "--decomposition", "domains"};
        c.step = 7;
        c.next_snapshot = 0.25;
        c.snapshot_index = 2;
        c.reference_energy = -0.5;
        c.diagnostics_bytes = 321;
        c.integrator.counters.emplace_back("steps", 7);
        const std::string cp = test::scratch_path("domain_files_checkpoint.hdf5"),
                          cp_gathered = test::scratch_path("domain_files_checkpoint_gathered.hdf5");
        write_checkpoint_from_domains(cp, c, one);
        Checkpoint whole = c;
        whole.particles = sorted_by_id(local);
        write_checkpoint(cp_gathered, whole);
        const Checkpoint back = read_checkpoint(cp); // its checksum is checked
        CHECK(back.particles.id == whole.particles.id);
        CHECK(back.particles.pos == whole.particles.pos);
        CHECK(back.step == 7);
        CHECK(back.diagnostics_bytes == 321);
        const auto checksum = [](const std::string& path) {
            auto file = h5::open_file_read(path);
            auto g = h5::open_group(file.id(), "Checkpoint");
            return h5::read_attribute_u64(g.id(), "checksum").at(0);
        };
        CHECK(checksum(cp) == checksum(cp_gathered));
        CHECK(checksum(cp) == checkpoint_checksum(whole));
        CHECK_FALSE(std::filesystem::exists(cp + ".partial"));
        // Read back on domains: this rank's share, the record whole, the checksum checked.
        const Checkpoint shared = read_checkpoint_on_domains(cp, one);
        CHECK(shared.particles.id == whole.particles.id);
        CHECK(shared.particles.pos == whole.particles.pos);
        CHECK(shared.particles.acc == whole.particles.acc);
        CHECK(shared.argv == c.argv);
        CHECK(shared.integrator.counters == c.integrator.counters);
        // A changed velocity, or a memory order that is not the IDs', is refused.
        {
            auto file = h5::open_file_rw(cp);
            auto g = h5::open_group(file.id(), "PartType1");
            const std::vector<double> v = h5::read_dataset_doubles(g.id(), "Velocities", 0, 1);
            const double changed[3] = {v[0] + 1, v[1], v[2]};
            h5::write_rows(g.id(), "Velocities", 0, changed, 1);
        }
        CHECK_THROWS_WITH(read_checkpoint_on_domains(cp, one), Catch::Contains(cp) && Catch::Contains("checksum"));
        write_checkpoint(cp, whole);
        {
            auto file = h5::open_file_rw(cp);
            auto g = h5::open_group(file.id(), "Checkpoint");
            std::vector<std::uint64_t> ids = h5::read_dataset_u64(g.id(), "memory_order_ids");
            std::swap(ids[0], ids[1]);
            h5::write_rows(g.id(), "memory_order_ids", 0, ids.data(), ids.size());
        }
        CHECK_THROWS_WITH(read_checkpoint_on_domains(cp, one), Catch::Contains("another order than their IDs"));
    }
    // An integrator whose state has a field per particle cannot write from domains.
    Checkpoint hermite;
    hermite.particles = numbered(4, 1);
    hermite.integrator.fields.push_back({"jerk", Eigen::MatrixXd::Zero(3, 4)});
    CHECK_THROWS_AS(write_checkpoint_from_domains(test::scratch_path("domain_files_refused.hdf5"), hermite, one),
                    std::logic_error);
}

TEST_CASE("a rank of a run on domains plans its GPU for its share and a quarter more", "[domains]")
{
    CHECK(planned_domain_particles(1000, 1) == 1000);
    CHECK(planned_domain_particles(1000, 4) == 312);
    CHECK(planned_domain_particles(std::size_t{1} << 29, 4) == (std::size_t{1} << 27) + (std::size_t{1} << 25));
    CHECK(planned_domain_particles(10, 3) == 5); // a share of 4 and one more
    CHECK(planned_domain_particles(3, 8) == 1);
    CHECK(planned_domain_particles(0, 4) == 0);
}

TEST_CASE("mpirun -np 3 grove run --decomposition domains writes sparse IDs in order, and a restart on 2 reads them",
          "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    namespace fs = std::filesystem;
    const std::string in = test::scratch_path("mpi_scattered.hdf5"), exe = GROVE_EXE,
                      out = test::scratch_path("mpi_scattered_run");
    fs::remove_all(out);
    ParticleSet p = make_plummer(3001, 9);
    std::mt19937_64 rng(11);
    for (std::size_t i = 0; i < p.size(); ++i) {
        p.id[i] = (std::uint64_t{1} << 50) + 1013 * i + rng() % 1013;
        p.type[i] = static_cast<std::uint8_t>(1 + rng() % 3);
    }
    std::shuffle(p.id.begin(), p.id.end(), rng);
    write_snapshot(in, p);
    const ParticleSet input = read_snapshot(in);
    const std::string args = " --engine tree-cpu --eps 0.01 --dt 0.01 --snapshot-every 0.02 --decomposition domains";
    std::string log;
    REQUIRE(run(kMpirun + "-np 3 " + exe + " run " + in + " -o " + out + args + " --t-end 0.02", &log) == 0);
    INFO(log);
    // The first file holds the input's particles, each type's in ID order.
    const ParticleSet first = read_snapshot(out + "/snapshot_0000.hdf5");
    REQUIRE(first.size() == input.size());
    std::vector<std::uint64_t> ids = input.id, written = first.id;
    std::sort(ids.begin(), ids.end());
    std::sort(written.begin(), written.end());
    CHECK(written == ids);
    for (std::size_t i = 1; i < first.size(); ++i)
        if (first.type[i] == first.type[i - 1]) CHECK(first.id[i] > first.id[i - 1]);
    std::map<std::uint64_t, std::size_t> at;
    for (std::size_t i = 0; i < input.size(); ++i) at[input.id[i]] = i;
    std::size_t same = 0;
    for (std::size_t i = 0; i < first.size(); ++i) {
        const std::size_t j = at.at(first.id[i]);
        same += first.pos.col(static_cast<Eigen::Index>(i)) == input.pos.col(static_cast<Eigen::Index>(j)) &&
                first.type[i] == input.type[j] && first.mass[static_cast<Eigen::Index>(i)] == input.mass[j];
    }
    CHECK(same == input.size());
    // The checkpoint's checksum and order hold: a restart on 2 ranks goes on from it.
    REQUIRE(run(kMpirun + "-np 2 " + exe + " run --restart " + out + " --t-end 0.04", &log) == 0);
    const ParticleSet last = read_snapshot(out + "/snapshot_0002.hdf5");
    CHECK(last.size() == input.size());
    CHECK(last.time == Approx(0.04));
}

TEST_CASE("mpirun -np 8 grove run --decomposition domains of 5 particles: ranks with none write, restart and "
          "end as one process",
          "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    namespace fs = std::filesystem;
    const std::string in = test::scratch_path("mpi_five.hdf5"), exe = GROVE_EXE,
                      many = test::scratch_path("mpi_five_run"), one = test::scratch_path("mpi_five_one");
    for (const auto& dir : {many, one}) fs::remove_all(dir);
    write_snapshot(in, make_plummer(5, 1));
    const std::string args = " --engine tree-cpu --eps 0.01 --dt 0.01 --snapshot-every 0.01";
    std::string log;
    REQUIRE(
        run(kMpirun + "-np 8 " + exe + " run " + in + " -o " + many + args + " --decomposition domains --t-end 0.03",
            &log) == 0);
    INFO(log);
    // Checkpoints by the wall clock, due at about every step: the ranks write them together.
    REQUIRE(run(kMpirun + "-np 8 " + exe + " run --restart " + many + " --t-end 0.05 --checkpoint-every 1e-4", &log) ==
            0);
    REQUIRE(run(exe + " run " + in + " -o " + one + args + " --t-end 0.05", &log) == 0);
    // Fewer particles than a leaf holds: every force a direct sum on both sides, the domains' in
    // another order (the other ranks' particles come as LETs), so they agree to the rounding.
    const ParticleSet a = read_snapshot(many + "/snapshot_0005.hdf5"), b = read_snapshot(one + "/snapshot_0005.hdf5");
    REQUIRE(a.id == b.id);
    CHECK(a.time == b.time);
    CHECK((a.pos - b.pos).cwiseAbs().maxCoeff() < 1e-14);
    CHECK((a.vel - b.vel).cwiseAbs().maxCoeff() < 1e-14);
    CHECK((a.acc - b.acc).cwiseAbs().maxCoeff() < 1e-13 * b.acc.cwiseAbs().maxCoeff());
}

TEST_CASE("mpirun -np 2 and 3 grove forces equal one process's, bit for bit", "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    const std::string in = test::scratch_path("mpi_galaxy.hdf5"), exe = GROVE_EXE;
    write_snapshot(in, make_galaxy(6000, 3, GalaxyParams{}));
    for (const std::string engine : {"direct-cpu", "tree-cpu"}) {
        const std::string one = test::scratch_path("mpi_one_" + engine + ".hdf5");
        REQUIRE(run(exe + " forces " + in + " --engine " + engine + " --eps 0.05 -o " + one) == 0);
        const ParticleSet reference = read_snapshot(one);
        for (const int ranks : {2, 3}) {
            INFO(engine << " on " << ranks << " ranks");
            const std::string out = test::scratch_path("mpi_" + std::to_string(ranks) + "_" + engine + ".hdf5");
            std::string log;
            REQUIRE(run(kMpirun + "-np " + std::to_string(ranks) + " " + exe + " forces " + in + " --engine " + engine +
                            " --eps 0.05 -o " + out,
                        &log) == 0);
            CHECK_THAT(log, Catch::Contains(engine + " x " + std::to_string(ranks) + " ranks"));
            const ParticleSet p = read_snapshot(out);
            CHECK(p.acc == reference.acc);
            CHECK(p.pot == reference.pot);
        }
    }
}

TEST_CASE("mpirun -np 3 and 8 grove forces --decomposition domains: the one-process tree's errors", "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    const std::string in = test::scratch_path("mpi_domains_galaxy.hdf5"), exe = GROVE_EXE;
    write_snapshot(in, make_galaxy(20000, 5, GalaxyParams{}));
    const std::string exact = test::scratch_path("mpi_domains_exact.hdf5"),
                      one = test::scratch_path("mpi_domains_one.hdf5"),
                      three = test::scratch_path("mpi_domains_three.hdf5");
    std::string log;
    REQUIRE(run(exe + " forces " + in + " --engine direct-cpu --eps 0.05 -o " + exact) == 0);
    REQUIRE(run(exe + " forces " + in + " --engine tree-cpu --eps 0.05 -o " + one) == 0);
    const ParticleSet reference = read_snapshot(exact), a = read_snapshot(one);
    const auto e1 = percentiles(relative_errors(a.acc, reference.acc), {50, 99});
    std::vector<double> e3;
    // 8 domains: each LET crosses to seven others, most of them not neighbours.
    for (const int ranks : {8, 3}) {
        INFO(ranks << " ranks");
        REQUIRE(run(kMpirun + "-np " + std::to_string(ranks) + " " + exe + " forces " + in +
                        " --engine tree-cpu --eps 0.05 --decomposition domains -o " + three,
                    &log) == 0);
        INFO(log);
        CHECK_THAT(log, Catch::Contains("tree-cpu on " + std::to_string(ranks) + " domains") &&
                            Catch::Contains("LET walks"));
        const ParticleSet b = read_snapshot(three);
        REQUIRE(b.id == reference.id); // every particle's force back in the file's order
        e3 = percentiles(relative_errors(b.acc, reference.acc), {50, 99});
        // Each domain's tree has cells and groups of its own, so the errors differ a little, both ways.
        CHECK(e3[0] < 1.1 * e1[0]);
        CHECK(e3[1] < 1.1 * e1[1]);
        CHECK(e3[0] > 0.5 * e1[0]);
    }
    // The relative criterion: each rank's |a| from a geometric pass over the domains first, then
    // LETs cut for its groups' scales; the errors of one process's.
    REQUIRE(run(exe + " forces " + in + " --engine tree-cpu --eps 0.05 --mac relative --alpha 1e-3 -o " + one) == 0);
    REQUIRE(run(kMpirun + "-np 3 " + exe + " forces " + in +
                    " --engine tree-cpu --eps 0.05 --mac relative --alpha 1e-3 --decomposition domains -o " + three,
                &log) == 0);
    const auto r1 = percentiles(relative_errors(read_snapshot(one).acc, reference.acc), {50, 99});
    const auto r3 = percentiles(relative_errors(read_snapshot(three).acc, reference.acc), {50, 99});
    INFO("relative: one process p50 " << r1[0] << " p99 " << r1[1] << ", 3 domains p50 " << r3[0] << " p99 " << r3[1]);
    CHECK(r3[0] < 1.1 * r1[0]);
    CHECK(r3[1] < 1.2 * r1[1]);
    CHECK(r3[0] > 0.5 * r1[0]);
    CHECK(r3[0] < 0.85 * e3[0]); // alpha 1e-3 is finer than theta 0.5 here: it was applied
    // Softening by type: the LETs carry their cells' softening and their particles' types.
    const std::string by_type = " --eps 0.05 --eps-type halo=0.1,bulge=0.02";
    REQUIRE(run(exe + " forces " + in + " --engine direct-cpu" + by_type + " -o " + exact) == 0);
    REQUIRE(run(exe + " forces " + in + " --engine tree-cpu" + by_type + " -o " + one) == 0);
    REQUIRE(run(kMpirun + "-np 3 " + exe + " forces " + in + " --engine tree-cpu" + by_type +
                    " --decomposition domains -o " + three,
                &log) == 0);
    const ParticleSet typed = read_snapshot(exact), typed3 = read_snapshot(three);
    const auto t1 = percentiles(relative_errors(read_snapshot(one).acc, typed.acc), {50, 99});
    const auto t3 = percentiles(relative_errors(typed3.acc, typed.acc), {50, 99});
    const auto against_one_length = percentiles(relative_errors(typed3.acc, reference.acc), {50});
    INFO("by type: one process p50 " << t1[0] << " p99 " << t1[1] << ", 3 domains p50 " << t3[0] << " p99 " << t3[1]
                                     << "; against one length p50 " << against_one_length[0]);
    CHECK(t3[0] < 1.1 * t1[0]);
    CHECK(t3[1] < 1.1 * t1[1]);
    CHECK(t3[0] > 0.5 * t1[0]);
    CHECK(t3[0] < 0.6 * against_one_length[0]); // nearer the forces by type: the lengths were applied
    // Direct summation has nothing to decompose.
    CHECK(run(kMpirun + "-np 2 " + exe + " forces " + in + " --engine direct-cpu --decomposition domains -o " + three,
              &log) != 0);
    CHECK_THAT(log, Catch::Contains("--decomposition domains: a tree engine"));
}

TEST_CASE("grove bench scaling --decomposition domains: phases, LET traffic and errors per rank count", "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    std::string log;
    REQUIRE(run(kMpirun + "-np 2 " + std::string(GROVE_EXE) +
                    " bench scaling --engine tree-cpu --decomposition domains --model galaxy -n 6000 --repeat 1 "
                    "--sample 500",
                &log) == 0);
    INFO(log);
    CHECK_THAT(log, Catch::Contains("strong scaling") && Catch::Contains("| 1 | 6000 | ") &&
                        Catch::Contains("| 2 | 6000 | ") && Catch::Contains("LET MB sent") &&
                        Catch::Contains("2 ranks:  halo p50"));
    REQUIRE(run(kMpirun + "-np 2 " + std::string(GROVE_EXE) +
                    " bench scaling --engine tree-cpu --decomposition domains --weak -n 3000 --repeat 1 --sample 200",
                &log) == 0);
    CHECK_THAT(log, Catch::Contains("weak scaling") && Catch::Contains("| 2 | 6000 | "));
}

TEST_CASE("grove bench step --decomposition domains: leapfrog steps on domains, the slowest rank's phases",
          "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    const std::string args = " bench step --decomposition domains --engine tree-cpu --model galaxy -n 6000 --steps 2 "
                             "--warmup 1 --sample 300 --domain-cut work";
    std::string log;
    // Three ranks: the galaxy's centre lies on a corner of eight cells of the domains' frame, which
    // two domains share out evenly, three not.
    REQUIRE(run(kMpirun + "-np 3 " + std::string(GROVE_EXE) + args, &log) == 0);
    INFO(log);
    CHECK_THAT(log, Catch::Contains("N = 6000 on 3 Peano-Hilbert domains") && Catch::Contains("| LET walks | ") &&
                        Catch::Contains("the LETs' exchange aside: the slowest") &&
                        Catch::Contains("| domains followed (cut anew, particles moved) | ") &&
                        Catch::Contains("| galaxy | 6000 | 3 | theta 0.5 | tree-cpu on 3 domains | **"));
    // The row's last two columns: the energy error after 3 steps and the first step's force errors.
    const std::string row = log.substr(log.find("| galaxy | 6000 | 3 |"));
    std::vector<double> cells;
    std::stringstream in(row.substr(0, row.find('\n')));
    for (std::string cell; std::getline(in, cell, '|');) {
        try {
            cells.push_back(std::stod(cell.substr(cell.find_first_not_of(" *"))));
        } catch (...) {
        }
    }
    REQUIRE(cells.size() >= 6);
    CHECK(cells[cells.size() - 2] < 1e-3); // abs(dE/E)
    // Rank 0's row: its particles, groups, cell pairs and the targets a cell entry serves (between
    // 1 and a group's most), its particle pairs and a leaf entry's (at least one pair).
    const std::string rank_row = log.substr(log.find("\n| 0 | ") + 1);
    std::vector<double> rank_cells;
    std::stringstream rank_in(rank_row.substr(0, rank_row.find('\n')));
    for (std::string cell; std::getline(rank_in, cell, '|');)
        if (cell.find_first_not_of(' ') != std::string::npos) rank_cells.push_back(std::stod(cell));
    REQUIRE(rank_cells.size() == 11);
    CHECK(rank_cells[2] > 0);                                                         // groups
    CHECK(rank_cells[2] < rank_cells[1]);                                             // fewer than its particles
    CHECK((rank_cells[4] >= 1 && rank_cells[4] <= resolved_ncrit(kAutoNcrit, 6000))); // targets a cell entry serves
    CHECK(rank_cells[6] >= 1);                                                        // pairs a leaf entry gives
    CHECK(cells.back() < 2e-3); // the first step's p50 (the cell's first number)
    // The domains, cut to equal particle counts at first, are cut to equal work after each step
    // (--domain-cut work): the ranks' work evens out, and their counts part.
    const std::string even = "the most of any over the mean: ";
    REQUIRE(log.find(even) != std::string::npos);
    double first = 0, last = 0, fewest = 0, most = 0;
    REQUIRE(std::sscanf(log.c_str() + log.find(even) + even.size(),
                        "%lf at the first step (equal counts), %lf at the last (cut to equal work); particles a rank: "
                        "%lf to %lf",
                        &first, &last, &fewest, &most) == 4);
    CHECK(first > 1.05);
    CHECK(last < first - 0.05);
    CHECK(fewest < 2000);
    CHECK(most > 2000);
    // Softened by type: the steps and the sample's direct sum alike.
    REQUIRE(run(kMpirun + "-np 2 " + std::string(GROVE_EXE) + args + " --eps-type halo=0.1,bulge=0.02", &log) == 0);
    CHECK_THAT(log, Catch::Contains("| galaxy | 6000 | 2 | theta 0.5 | tree-cpu on 2 domains | **"));
    REQUIRE(run(std::string(GROVE_EXE) + args, &log) == 0); // one process: one domain
    CHECK_THAT(log, Catch::Contains("on 1 Peano-Hilbert domains"));
    CHECK(run(kMpirun + "-np 2 " + std::string(GROVE_EXE) + args + " --timestep block", &log) != 0);
    CHECK_THAT(log, Catch::Contains("times shared steps"));
    CHECK(run(std::string(GROVE_EXE) + args + " --domain-cut time", &log) != 0);
    CHECK_THAT(log, Catch::Contains("--domain-cut takes counts or work (got 'time')"));
    CHECK(run(std::string(GROVE_EXE) + " bench step --model galaxy -n 6000 --domain-cut work", &log) != 0);
    CHECK_THAT(log, Catch::Contains("--domain-cut work needs --decomposition domains"));
}

TEST_CASE("grove run --decomposition domains: one process's orbits, restarts bit for bit on as many ranks",
          "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    namespace fs = std::filesystem;
    const std::string in = test::scratch_path("mpi_domains_run.hdf5"), exe = GROVE_EXE;
    write_snapshot(in, make_galaxy(4000, 6, GalaxyParams{}));
    const std::string args = " --engine tree-cpu --eps 0.05 --dt 0.0005 --log-every 4 --snapshot-every 0.001";
    const std::string one = test::scratch_path("mpi_domains_run_one"), three = test::scratch_path("mpi_domains_run_3"),
                      half = test::scratch_path("mpi_domains_run_half");
    for (const auto& dir : {one, three, half}) fs::remove_all(dir);
    std::string log;
    REQUIRE(run(exe + " run " + in + " -o " + one + args + " --t-end 0.008", &log) == 0);
    REQUIRE(run(kMpirun + "-np 3 " + exe + " run " + in + " -o " + three + args +
                    " --t-end 0.008 --decomposition domains --domain-cut work",
                &log) == 0);
    INFO(log);
    std::ifstream yml(three + "/run.yml");
    std::stringstream parameters;
    parameters << yml.rdbuf();
    CHECK_THAT(parameters.str(), Catch::Contains("tree-cpu on 3 domains"));
    const ParticleSet a = read_snapshot(one + "/snapshot_0008.hdf5"), b = read_snapshot(three + "/snapshot_0008.hdf5");
    REQUIRE(b.id == read_snapshot(in).id); // every particle written once, in the input's (ID) order
    CHECK(b.time == a.time);
    // The domains' trees differ from the one tree, by the tree's own error: the orbits agree to it.
    const Diagnostics da = compute_diagnostics(a, a.pot), db = compute_diagnostics(b, b.pot);
    // The diagnostics line of that step, summed over the ranks, is the gathered file's.
    std::ifstream lines(three + "/diagnostics.txt");
    std::string line, last;
    while (std::getline(lines, line)) last = line;
    std::istringstream columns(last);
    std::vector<double> v;
    for (double x; columns >> x;) v.push_back(x);
    REQUIRE(v.size() >= 16);
    CHECK(v[4] == Approx(db.total).epsilon(1e-11));
    CHECK(v[14] == Approx(db.lagrangian_radii[1]).epsilon(1e-5)); // printed to 6 digits
    CHECK(std::abs(db.total - da.total) < 1e-4 * std::abs(da.total));
    CHECK(std::abs(db.lagrangian_radii[1] - da.lagrangian_radii[1]) < 1e-4 * da.lagrangian_radii[1]);
    // Half way, then restarted on 3 ranks: the uninterrupted run's particles, bit for bit (the
    // domains cut to equal work between the files, to equal counts at each).
    REQUIRE(run(kMpirun + "-np 3 " + exe + " run " + in + " -o " + half + args +
                    " --t-end 0.004 --decomposition domains --domain-cut work",
                &log) == 0);
    REQUIRE(run(kMpirun + "-np 3 " + exe + " run --restart " + half + " --t-end 0.008", &log) == 0);
    const ParticleSet c = read_snapshot(half + "/snapshot_0008.hdf5");
    CHECK(c.time == b.time);
    CHECK(c.pos == b.pos);
    CHECK(c.vel == b.vel);
    // On 2 ranks it goes on from the same file (other domains, so not bit for bit), and on 8,
    // where each rank's LETs go to seven others, as on 2 to the tree's error.
    const std::string eight = test::scratch_path("mpi_domains_run_8");
    fs::remove_all(eight);
    fs::copy(half, eight, fs::copy_options::recursive);
    REQUIRE(run(kMpirun + "-np 2 " + exe + " run --restart " + half + " --t-end 0.01", &log) == 0);
    CHECK(fs::exists(half + "/snapshot_0010.hdf5"));
    REQUIRE(run(kMpirun + "-np 8 " + exe + " run --restart " + eight + " --t-end 0.01", &log) == 0);
    const ParticleSet on_two = read_snapshot(half + "/snapshot_0010.hdf5"),
                      on_eight = read_snapshot(eight + "/snapshot_0010.hdf5");
    CHECK(on_eight.time == on_two.time);
    const double e2 = compute_diagnostics(on_two, on_two.pot).total,
                 e8 = compute_diagnostics(on_eight, on_eight.pot).total;
    CHECK(std::abs(e8 - e2) < 1e-4 * std::abs(e2));
    CHECK(on_eight.pos != on_two.pos);
    // Under the relative criterion too: its |a| travel with the particles and the checkpoint.
    const std::string rel = test::scratch_path("mpi_domains_run_rel"),
                      rel_half = test::scratch_path("mpi_domains_rel_half");
    for (const auto& dir : {rel, rel_half}) fs::remove_all(dir);
    const std::string relative = args + " --mac relative --alpha 1e-3 --decomposition domains";
    REQUIRE(run(kMpirun + "-np 3 " + exe + " run " + in + " -o " + rel + relative + " --t-end 0.008", &log) == 0);
    REQUIRE(run(kMpirun + "-np 3 " + exe + " run " + in + " -o " + rel_half + relative + " --t-end 0.004", &log) == 0);
    REQUIRE(run(kMpirun + "-np 3 " + exe + " run --restart " + rel_half + " --t-end 0.008", &log) == 0);
    const ParticleSet r = read_snapshot(rel + "/snapshot_0008.hdf5"),
                      rh = read_snapshot(rel_half + "/snapshot_0008.hdf5");
    CHECK(rh.pos == r.pos);
    CHECK(rh.vel == r.vel);
    CHECK(r.pos != b.pos); // another criterion, other orbits
    // (Each run drifts by 3e-3 in energy over these steps; the two criteria part by about 1e-4.)
    CHECK(std::abs(compute_diagnostics(r, r.pot).total - da.total) < 2e-4 * std::abs(da.total));
    // What the domains cannot run yet is refused before anything is written.
    CHECK(run(kMpirun + "-np 2 " + exe + " run " + in + " -o " + test::scratch_path("mpi_domains_refused") +
                  " --integrator hermite --engine direct-cpu --t-end 0.01 --decomposition domains",
              &log) != 0);
    CHECK_THAT(log, Catch::Contains("--decomposition domains: the leapfrog"));
    CHECK_FALSE(fs::exists(test::scratch_path("mpi_domains_refused")));
}

TEST_CASE("under mpirun a failing rank ends the whole job with its error", "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    const std::string in = test::scratch_path("mpi_small.hdf5"), exe = GROVE_EXE;
    write_snapshot(in, test::random_particles(2000, 5));
    // Rank 1 reads a file that does not exist; rank 0 would wait for it in the force exchange.
    const std::string script = "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then f=" + test::scratch_path("missing.hdf5") +
                               "; else f=" + in + "; fi; exec " + exe + " forces $f --engine direct-cpu -o " +
                               test::scratch_path("mpi_fail.hdf5");
    std::string log;
    const int status = run(kMpirun + "-np 2 sh -c '" + script + "'", &log);
    INFO(log);
    CHECK(status != 0);
    CHECK(status != 124); // not the timeout: no hang
    CHECK_THAT(log, Catch::Contains("(rank 1): error:") && Catch::Contains("missing.hdf5"));
    // Commands that do not spread their work yet are refused at once, on every rank.
    CHECK(run(kMpirun + "-np 2 " + exe + " info " + in, &log) != 0);
    CHECK_THAT(log, Catch::Contains("under mpirun only `grove forces`, `grove run`, `grove accuracy`"));
}

TEST_CASE("grove accuracy on 2 ranks writes the one-process table", "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    const std::string in = test::scratch_path("mpi_acc_galaxy.hdf5"), exe = GROVE_EXE;
    write_snapshot(in, make_galaxy(3000, 2, GalaxyParams{}));
    const std::string args = " --engine tree-cpu --eps 0.05 --sample 500 --theta 0.4,0.7 --mac geometric";
    std::string one, two;
    REQUIRE(run(exe + " accuracy " + in + args + " -o " + test::scratch_path("mpi_acc_one.hdf5"), &one) == 0);
    REQUIRE(run(kMpirun + "-np 2 " + exe + " accuracy " + in + args + " -o " + test::scratch_path("mpi_acc_two.hdf5"),
                &two) == 0);
    // The error and count columns agree; the timing columns (the last three) differ.
    auto rows = [](const std::string& text) {
        std::vector<std::string> out;
        std::stringstream ss(text);
        for (std::string line; std::getline(ss, line);)
            if (line.rfind("| 0.", 0) == 0) {
                std::size_t cut = line.size();
                for (int k = 0; k < 4; ++k) cut = line.rfind(" | ", cut - 1);
                out.push_back(line.substr(0, cut));
            }
        return out;
    };
    INFO(one << two);
    REQUIRE(rows(one).size() == 8); // 2 values x (all, halo, disk, bulge)
    CHECK(rows(one) == rows(two));
}

TEST_CASE("grove accuracy --decomposition domains on 3 ranks: the one process's errors, both criteria", "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    const std::string in = test::scratch_path("mpi_acc_domains.hdf5"), exe = GROVE_EXE;
    write_snapshot(in, make_galaxy(6000, 3, GalaxyParams{}));
    // The "all" row of each value: its p50 and its interactions per particle.
    auto rows = [](const std::string& text) {
        std::vector<std::pair<double, double>> out;
        std::stringstream ss(text);
        for (std::string line; std::getline(ss, line);) {
            if (line.rfind("| 0", 0) != 0 || line.find("| all |") == std::string::npos) continue;
            std::vector<std::string> cells;
            std::stringstream cs(line);
            for (std::string cell; std::getline(cs, cell, '|');) cells.push_back(cell);
            out.emplace_back(std::stod(cells[3]), std::stod(cells[11])); // p50, interactions/particle
        }
        return out;
    };
    for (const std::string criterion : {" --theta 0.4,0.7", " --mac relative --alpha 1e-3,3e-3"}) {
        const std::string args = " --engine tree-cpu --eps 0.05 --sample 1000" + criterion;
        std::string one, three;
        REQUIRE(run(exe + " accuracy " + in + args + " -o " + test::scratch_path("mpi_accd_one.hdf5"), &one) == 0);
        REQUIRE(run(kMpirun + "-np 3 " + exe + " accuracy " + in + args + " --decomposition domains -o " +
                        test::scratch_path("mpi_accd_three.hdf5"),
                    &three) == 0);
        INFO(one << three);
        CHECK_THAT(three, Catch::Contains("on 3 Peano-Hilbert domains"));
        const auto a = rows(one), b = rows(three);
        REQUIRE(a.size() == 2);
        REQUIRE(b.size() == 2);
        for (std::size_t k = 0; k < 2; ++k) {
            // Each domain's tree has cells and groups of its own: at 2000 particles a domain the
            // errors move by up to a quarter either way, and the cells the domains split cost some
            // more interactions.
            CHECK(b[k].first < 1.3 * a[k].first);
            CHECK(b[k].first > 0.6 * a[k].first);
            CHECK(b[k].second > 0.9 * a[k].second);
            CHECK(b[k].second < 1.5 * a[k].second);
        }
    }
}

TEST_CASE("grove bench scaling prints time, speed-up and efficiency per rank count", "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    std::string log;
    REQUIRE(run(kMpirun + "-np 3 " + std::string(GROVE_EXE) + " bench scaling --engine tree-cpu -n 4000 --repeat 1",
                &log) == 0);
    INFO(log);
    CHECK_THAT(log, Catch::Contains("| 1 | ") && Catch::Contains("| 1.00 | 100 % |") && Catch::Contains("| 2 | ") &&
                        Catch::Contains("| 3 | "));
    // A tree engine also times building the host tree on every rank against broadcasting one.
    CHECK_THAT(log, Catch::Contains("built by rank 0 and broadcast") &&
                        Catch::Contains("the broadcast trees equal the built ones"));
    CHECK(run(kMpirun + "-np 2 " + std::string(GROVE_EXE) + " bench step", &log) != 0);
    CHECK_THAT(log, Catch::Contains("grove bench runs only `scaling`"));
}

TEST_CASE("runs on 2 ranks, restarted on 3, end as the one-process run, bit for bit", "[mpi][slow]")
{
    if (run("command -v mpirun") != 0) GROVE_SKIP_TEST("mpirun missing (scripts/setup.sh installs openmpi-bin)");
    namespace fs = std::filesystem;
    const std::string in = test::scratch_path("mpi_plummer.hdf5"), exe = GROVE_EXE;
    write_snapshot(in, make_plummer(1500, 4));
    struct Case {
        const char* name;
        std::string args, half, full;
    };
    for (const Case& c :
         {Case{"leapfrog", " --engine tree-cpu --eps 0.01 --dt 0.01 --snapshot-every 0.05", "0.05", "0.1"},
          Case{"hermite6",
               " --integrator hermite6 --engine direct-cpu --eps 0.01 --dt-max 0.0625 "
               "--snapshot-every 0.125",
               "0.125", "0.25"},
          // The relative criterion's |a| in block steps: each particle's last forces, on every rank.
          Case{"block_relative",
               " --engine tree-cpu --mac relative --alpha 0.003 --eps 0.01 --timestep block --dt-max 0.015625 "
               "--eta 0.02 --snapshot-every 0.03125",
               "0.03125", "0.0625"}}) {
        INFO(c.name);
        const std::string one = test::scratch_path(std::string("mpi_run_one_") + c.name),
                          many = test::scratch_path(std::string("mpi_run_many_") + c.name);
        fs::remove_all(one);
        fs::remove_all(many);
        std::string log;
        REQUIRE(run(exe + " run " + in + " -o " + one + c.args + " --t-end " + c.full, &log) == 0);
        REQUIRE(run(kMpirun + "-np 2 " + exe + " run " + in + " -o " + many + c.args + " --t-end " + c.half, &log) ==
                0);
        INFO(log);
        REQUIRE(run(kMpirun + "-np 3 " + exe + " run --restart " + many + " --t-end " + c.full, &log) == 0);
        const ParticleSet a = read_snapshot(one + "/snapshot_0002.hdf5"),
                          b = read_snapshot(many + "/snapshot_0002.hdf5");
        CHECK(a.time == b.time);
        CHECK(a.pos == b.pos);
        CHECK(a.vel == b.vel);
        // One directory written once: the other ranks write nothing.
        CHECK(fs::exists(many + "/checkpoint.hdf5"));
        CHECK_FALSE(fs::exists(many + "/snapshot_0003.hdf5"));
    }
}
