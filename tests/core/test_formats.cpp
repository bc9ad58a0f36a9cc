// The particle file formats besides HDF5: tipsy and GADGET binary written and read back, files
// written by numpy from the formats' specifications (tests/core/make_format_fixtures.py) read
// field by field, a snapshot split over two HDF5 files, and damaged files named in one line.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/galaxy_model.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "support/test_support.hpp"

using namespace grove;
namespace fs = std::filesystem;

namespace {

// b's particle with each of a's IDs; checks every field to `tolerance` relative (0: bit for bit).
void check_same_by_id(const ParticleSet& a, const ParticleSet& b, double tolerance, bool same_types)
{
    REQUIRE(a.size() == b.size());
    std::map<std::uint64_t, std::size_t> where;
    for (std::size_t j = 0; j < b.size(); ++j) where[b.id[j]] = j;
    REQUIRE(where.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        const auto it = where.find(a.id[i]);
        REQUIRE(it != where.end());
        const auto k = static_cast<Eigen::Index>(i), j = static_cast<Eigen::Index>(it->second);
        const auto near = [&](double x, double y) {
            return tolerance == 0 ? x == y : std::abs(x - y) <= tolerance * std::max(1.0, std::abs(x));
        };
        for (int d = 0; d < 3; ++d) {
            CHECK(near(a.pos(d, k), b.pos(d, j)));
            CHECK(near(a.vel(d, k), b.vel(d, j)));
        }
        CHECK(near(a.mass[k], b.mass[j]));
        if (same_types) CHECK(a.type[i] == b.type[it->second]);
    }
}

std::string scratch(const std::string& name)
{
    fs::create_directories(GROVE_TEST_SCRATCH);
    return test::scratch_path(name);
}

} // namespace

TEST_CASE("tipsy and GADGET binary files written and read back keep the particles", "[snapshot][formats]")
{
    ParticleSet p = make_galaxy(3000, 5, GalaxyParams{});
    p.time = 0.75;
    p.id[7] = 5000000000ull; // needs 64 bits
    SECTION("GADGET binary, doubles: bit for bit, formats 1 and 2, with 64-bit IDs")
    {
        for (const SnapshotFormat f : {SnapshotFormat::gadget1, SnapshotFormat::gadget2}) {
            const std::string path = scratch(std::string("round.") + snapshot_format_name(f));
            WriteFormatOptions o;
            o.double_precision = true;
            write_snapshot_as(path, p, f, o);
            CHECK(snapshot_format(path) == f);
            CHECK(snapshot_particle_count(path) == p.size());
            const ParticleSet q = read_snapshot(path, p.units);
            check_same_by_id(p, q, 0, true);
            CHECK(q.time == p.time);
            CHECK(q.units.G == p.units.G);
        }
    }
    SECTION("GADGET binary, floats: to float rounding")
    {
        const std::string path = scratch("round_float.g1");
        write_snapshot_as(path, p, SnapshotFormat::gadget1);
        check_same_by_id(p, read_snapshot(path), 1e-7, true);
    }
    SECTION("tipsy, both byte orders, with and without IDs: floats, three kinds of particle")
    {
        for (const bool big : {true, false})
            for (const bool ids : {true, false}) {
                INFO("big-endian " << big << ", ids " << ids);
                const std::string path = scratch("round.tipsy");
                WriteFormatOptions o;
                o.tipsy.big_endian = big;
                o.tipsy.with_ids = ids;
                write_snapshot_as(path, p, SnapshotFormat::tipsy, o);
                CHECK(snapshot_format(path) == SnapshotFormat::tipsy);
                const ParticleSet q = read_snapshot(path);
                CHECK(q.units.G == 1.0); // tipsy has no units: Hénon's unless the caller says
                CHECK(q.time == p.time);
                REQUIRE(q.size() == p.size());
                if (ids) {
                    check_same_by_id(p, q, 1e-7, false);
                } else { // numbered in file order: dark (the halo) first, then the disk and bulge as stars
                    CHECK(q.id.front() == 1);
                    CHECK(q.id.back() == q.size());
                }
                std::map<int, int> kinds;
                for (const auto t : q.type) ++kinds[t];
                std::map<int, int> expected;
                for (const auto t : p.type) ++expected[t == 1 ? 1 : 4];
                CHECK(kinds == expected);
            }
    }
}

TEST_CASE("files written by other programs from the specifications are read field by field", "[snapshot][formats]")
{
    if (!test::python_has("numpy, h5py")) GROVE_SKIP_TEST("numpy/h5py missing for /usr/bin/python3");
    const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / "format_fixtures";
    fs::remove_all(dir);
    const std::string cmd =
        std::string("/usr/bin/python3 ") + GROVE_SOURCE_DIR + "/tests/core/make_format_fixtures.py " + dir.string();
    REQUIRE(std::system(cmd.c_str()) == 0);
    // make_format_fixtures.py's particles: 3 gas, 4 halo (mass 0.25), 5 stars; IDs 101...
    const auto check = [](const ParticleSet& q, bool ids_from_file, double tolerance) {
        REQUIRE(q.size() == 12);
        CHECK(q.time == 1.5);
        for (std::size_t i = 0; i < q.size(); ++i) {
            const auto k = static_cast<Eigen::Index>(i);
            INFO("particle " << i);
            const int expected_type = i < 3 ? 0 : i < 7 ? 1 : 4;
            CHECK(q.type[i] == expected_type);
            CHECK(q.mass[k] == Approx(expected_type == 1 ? 0.25 : 0.01 * (1 + static_cast<double>(i))).epsilon(1e-6));
            const double x = static_cast<double>(i);
            CHECK(std::abs(q.pos(0, k) - (0.5 * x - 1.0)) <= tolerance);
            CHECK(std::abs(q.pos(1, k) - 0.25 * x) <= tolerance);
            CHECK(std::abs(q.pos(2, k) - (-0.125 * x + 2.0)) <= tolerance);
            CHECK(std::abs(q.vel(1, k) + 0.2 * x) <= tolerance * 4);
            if (ids_from_file && expected_type != 0) CHECK(q.id[i] == 101 + i);
        }
    };
    const ParticleSet big = read_snapshot((dir / "standard_big_endian.tipsy").string());
    check(big, false, 1e-6);
    CHECK(big.units.G == 1.0);
    check(read_snapshot((dir / "bonsai_ids.tipsy").string()), true, 1e-6);
    const ParticleSet g1 = read_snapshot((dir / "format1.gadget").string());
    CHECK(snapshot_format((dir / "format1.gadget").string()) == SnapshotFormat::gadget1);
    check(g1, true, 1e-6);
    CHECK(g1.units.G == Approx(gadget_units().G)); // GADGET's units unless the caller says
    const std::string g2 = (dir / "format2_big_endian.gadget").string();
    CHECK(snapshot_format(g2) == SnapshotFormat::gadget2);
    check(read_snapshot(g2, nbody_units()), true, 0);
    CHECK(read_snapshot(g2, nbody_units()).units.G == 1.0);
    // A GADGET binary snapshot split over two files (BASE.0, BASE.1): whole, from either name.
    for (const char* part : {"split_binary.0", "split_binary.1"}) {
        const std::string path = (dir / part).string();
        CHECK(snapshot_particle_count(path) == 12);
        check(read_snapshot(path), true, 1e-6);
    }
    // A snapshot split over two HDF5 files: whole, from either file's name.
    for (const char* part : {"split.0.hdf5", "split.1.hdf5"}) {
        const std::string path = (dir / part).string();
        CHECK(snapshot_particle_count(path) == 12);
        const ParticleSet s = read_snapshot(path);
        check(s, true, 1e-6);
        CHECK(s.units.G == Approx(gadget_units().G).epsilon(1e-4));
    }
    fs::remove(dir / "split.1.hdf5");
    CHECK_THROWS_WITH(read_snapshot((dir / "split.0.hdf5").string()), Catch::Contains("split.1.hdf5"));
    fs::remove(dir / "split_binary.1");
    CHECK_THROWS_WITH(read_snapshot((dir / "split_binary.0").string()), Catch::Contains("split_binary.1"));
}

TEST_CASE("damaged tipsy and GADGET binary files are refused in one line naming the file", "[snapshot][formats]")
{
    const ParticleSet p = make_galaxy(500, 2, GalaxyParams{});
    const auto bytes_of = [](const std::string& path) {
        std::ifstream in(path, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const auto write_bytes = [](const std::string& path, const std::string& bytes) {
        std::ofstream(path, std::ios::binary) << bytes;
    };
    for (const SnapshotFormat f : {SnapshotFormat::tipsy, SnapshotFormat::gadget1, SnapshotFormat::gadget2}) {
        INFO(snapshot_format_name(f));
        const std::string good = scratch(std::string("good.") + snapshot_format_name(f));
        write_snapshot_as(good, p, f);
        const std::string whole = bytes_of(good);
        const std::string bad = scratch(std::string("bad.") + snapshot_format_name(f));
        write_bytes(bad, whole.substr(0, whole.size() - 20)); // truncated
        CHECK_THROWS_WITH(read_snapshot(bad), Catch::Contains(bad));
        write_bytes(bad, whole + "extra"); // longer than its counts say
        CHECK_THROWS_WITH(read_snapshot(bad), Catch::Contains(bad));
        std::string other = whole; // the header's counts changed
        other[f == SnapshotFormat::tipsy ? 11 : (f == SnapshotFormat::gadget1 ? 8 : 24)] ^= 0x01;
        write_bytes(bad, other);
        CHECK_THROWS_WITH(read_snapshot(bad), Catch::Contains(bad));
    }
    const std::string junk = scratch("junk.bin");
    write_bytes(junk, "this is not a particle file at all, only words");
    CHECK_THROWS_WITH(read_snapshot(junk), Catch::Contains(junk) && Catch::Contains("not an HDF5 file, nor tipsy"));
    CHECK_THROWS_WITH(snapshot_format_by_name("fits"), Catch::Contains("tipsy"));
}
