// Snapshot round trip, foreign GADGET files, and every kind of bad input named in the foundation issue.
#include <catch2/catch.hpp>

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>

#include "core/checkpoint.hpp"
#include "core/checksum.hpp"
#include "core/galaxy_model.hpp"
#include "core/hdf5_file.hpp"
#include "core/ic_models.hpp"
#include "core/memory_check.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "support/test_support.hpp"

using namespace grove;

namespace {

// Writes a minimal GADGET-style file by hand: one PartType group with the given arrays.
// `coords_cols` lets tests write wrongly shaped coordinates; empty `masses` omits the dataset.
void write_raw(const std::string& path, int type, const std::vector<double>& coords, std::size_t coords_cols,
               const std::vector<double>& vels, const std::vector<double>& masses,
               const std::vector<std::uint64_t>& ids, double mass_table_entry = 0)
{
    auto file = h5::create_file(path);
    auto header = h5::create_group(file.id(), "Header");
    std::vector<std::uint64_t> counts(6, 0);
    counts[static_cast<std::size_t>(type)] = coords.size() / coords_cols;
    h5::write_attribute(header.id(), "NumPart_ThisFile", counts);
    std::vector<double> table(6, 0.0);
    table[static_cast<std::size_t>(type)] = mass_table_entry;
    h5::write_attribute(header.id(), "MassTable", table);
    auto group = h5::create_group(file.id(), "PartType" + std::to_string(type));
    h5::write_dataset(group.id(), "Coordinates", coords.data(), coords.size() / coords_cols, coords_cols);
    h5::write_dataset(group.id(), "Velocities", vels.data(), vels.size() / 3, 3);
    if (!masses.empty()) h5::write_dataset(group.id(), "Masses", masses.data(), masses.size(), 0);
    h5::write_dataset(group.id(), "ParticleIDs", ids.data(), ids.size());
}

void write_raw_simple(const std::string& path, std::vector<double> coords, std::vector<double> masses,
                      std::vector<std::uint64_t> ids)
{
    std::vector<double> vels(coords.size(), 0.0);
    write_raw(path, 1, coords, 3, vels, masses, ids);
}

std::string read_error(const std::string& path)
{
    try {
        read_snapshot(path);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("snapshot round trip is bit-exact for every field", "[snapshot]")
{
    // Three components in type order (the order the reader returns), with large, sparse IDs.
    ParticleSet sorted;
    for (int t = 1; t <= 3; ++t) {
        ParticleSet part =
            test::random_particles(80 + 9 * static_cast<std::size_t>(t), 7 + static_cast<std::uint64_t>(t));
        for (std::size_t i = 0; i < part.size(); ++i) {
            part.type[i] = static_cast<std::uint8_t>(t);
            part.id[i] = 1000003u * static_cast<std::uint64_t>(t) + 17 * i;
        }
        sorted = (t == 1) ? part : concatenate(sorted, part);
    }
    sorted.acc = Eigen::Matrix3Xd::Random(3, static_cast<Eigen::Index>(sorted.size()));
    sorted.pot = Eigen::VectorXd::Random(static_cast<Eigen::Index>(sorted.size()));
    sorted.time = 1.0 / 3.0;
    sorted.units = gadget_units();
    sorted.run_parameters["ic.model"] = "test";
    sorted.run_parameters["ic.n"] = "257";

    const std::string path = test::scratch_path("roundtrip.hdf5");
    write_snapshot(path, sorted);
    const ParticleSet back = read_snapshot(path);
    test::check_same_columns(back, sorted);
    CHECK(back.time == sorted.time);
    CHECK(back.units.system == "gadget");
    CHECK(back.units.G == sorted.units.G);
    CHECK(back.units.length_cm == sorted.units.length_cm);
    CHECK(back.run_parameters.at("ic.model") == "test");
    CHECK(back.run_parameters.at("ic.n") == "257");
    CHECK(back.type[0] == 1);
    CHECK(back.type.back() == 3);
}

TEST_CASE("snapshot layout follows GADGET/SWIFT and avoids names that confuse readers", "[snapshot]")
{
    ParticleSet p = test::random_particles(10);
    const std::string path = test::scratch_path("layout.hdf5");
    write_snapshot(path, p);
    auto file = h5::open_file_read(path);
    auto header = h5::open_group(file.id(), "Header");
    CHECK(h5::read_attribute_u64(header.id(), "NumPart_ThisFile") == std::vector<std::uint64_t>{0, 10, 0, 0, 0, 0});
    CHECK(h5::read_attribute_u64(header.id(), "NumPart_Total") == std::vector<std::uint64_t>{0, 10, 0, 0, 0, 0});
    CHECK(h5::read_attribute_doubles(header.id(), "MassTable") == std::vector<double>(6, 0.0));
    CHECK(h5::read_attribute_doubles(header.id(), "Flag_DoublePrecision").at(0) == 1);
    CHECK(h5::read_attribute_doubles(header.id(), "Dimension").at(0) == 3);
    CHECK_FALSE(h5::has_attribute(header.id(), "HubbleParam"));
    for (const char* veto : {"Config", "Parameters", "Constants", "Policy"}) CHECK_FALSE(h5::has_link(file.id(), veto));
    CHECK(h5::has_link(file.id(), "Units"));
    CHECK(h5::has_link(file.id(), "RunParameters"));
    auto group = h5::open_group(file.id(), "PartType1");
    CHECK(h5::dataset_shape(group.id(), "Coordinates") == std::vector<hsize_t>{10, 3});
    CHECK_FALSE(h5::has_link(group.id(), "Potential")); // no forces computed
}

TEST_CASE("GADGET single-precision files with MassTable masses are read", "[snapshot]")
{
    const std::string path = test::scratch_path("gadget_float.hdf5");
    {
        auto file = h5::create_file(path);
        auto header = h5::create_group(file.id(), "Header");
        h5::write_attribute(header.id(), "NumPart_ThisFile", std::vector<std::uint32_t>{0, 3, 0, 0, 0, 0});
        h5::write_attribute(header.id(), "MassTable", std::vector<double>{0, 0.25, 0, 0, 0, 0});
        h5::write_attribute(header.id(), "Time", 2.5);
        auto group = h5::create_group(file.id(), "PartType1");
        const float coords[9] = {1.5f, 2.f, 3.f, -1.f, 0.25f, 0.f, 7.f, 8.f, 9.f};
        const float vels[9] = {0.5f, 0, 0, 0, 0.5f, 0, 0, 0, 0.5f};
        const std::uint32_t ids[3] = {4, 5, 6};
        const hsize_t dims2[2] = {3, 3}, dims1[1] = {3};
        h5::Handle s2(H5Screate_simple(2, dims2, nullptr), H5Sclose);
        h5::Handle s1(H5Screate_simple(1, dims1, nullptr), H5Sclose);
        h5::Handle c(
            H5Dcreate2(group.id(), "Coordinates", H5T_IEEE_F32LE, s2.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose);
        H5Dwrite(c.id(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, coords);
        h5::Handle v(
            H5Dcreate2(group.id(), "Velocities", H5T_IEEE_F32LE, s2.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose);
        H5Dwrite(v.id(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, vels);
        h5::Handle i(
            H5Dcreate2(group.id(), "ParticleIDs", H5T_STD_U32LE, s1.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
            H5Dclose);
        H5Dwrite(i.id(), H5T_NATIVE_UINT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids);
    }
    const ParticleSet p = read_snapshot(path);
    REQUIRE(p.size() == 3);
    CHECK(p.pos(0, 0) == 1.5);
    CHECK(p.pos(1, 1) == 0.25);
    CHECK(p.vel(2, 2) == 0.5);
    CHECK(p.mass[1] == 0.25);
    CHECK(p.id == std::vector<std::uint64_t>{4, 5, 6});
    CHECK(p.time == 2.5);
    CHECK(p.units.system == "gadget"); // no units given: GADGET's defaults
    CHECK(std::abs(p.units.G - 43007.1) < 0.5);
    CHECK_FALSE(p.has_forces());
}

TEST_CASE("a GADGET file's /Units give G in those units", "[snapshot][units]")
{
    // GADGET's galaxy units (G = 43007.1), and the same with Mpc lengths (G smaller by 1000).
    for (const double length_cm : {3.085678e21, 3.085678e24}) {
        INFO("UnitLength_in_cm " << length_cm);
        const std::string path = test::scratch_path("gadget_units.hdf5");
        write_raw_simple(path, {0, 0, 0, 1, 0, 0}, {1, 1}, {1, 2});
        {
            auto file = h5::open_file_rw(path);
            auto units = h5::create_group(file.id(), "Units");
            h5::write_attribute(units.id(), "UnitLength_in_cm", length_cm);
            h5::write_attribute(units.id(), "UnitMass_in_g", 1.989e43);
            h5::write_attribute(units.id(), "UnitVelocity_in_cm_per_s", 1e5);
        }
        const ParticleSet p = read_snapshot(path);
        CHECK(p.units.length_cm == length_cm);
        CHECK(p.units.G == Approx(43007.1 * 3.085678e21 / length_cm).epsilon(1e-5));
    }
    CHECK_THROWS_WITH(units_from_cgs(0, 1, 1), Catch::Contains("must be > 0"));
}

TEST_CASE("a SWIFT file's /Units give G in its units; unit attributes grove does not read are refused",
          "[snapshot][units]")
{
    const std::string path = test::scratch_path("swift_units.hdf5");
    const auto with_units = [&](const std::vector<std::pair<std::string, double>>& attributes) {
        write_raw_simple(path, {0, 0, 0, 1, 0, 0}, {1, 1}, {1, 2});
        auto file = h5::open_file_rw(path);
        auto units = h5::create_group(file.id(), "Units");
        for (const auto& [name, value] : attributes) h5::write_attribute(units.id(), name, value);
    };
    // Mpc, 1e10 Msun and km/s as SWIFT writes them (a time unit, not a velocity): G is GADGET's over
    // 1000 (it was read as kpc: 43007.1, forces 1000 times too large).
    const double mpc = 3.085678e24;
    with_units({{"Unit length in cgs (U_L)", mpc},
                {"Unit mass in cgs (U_M)", 1.989e43},
                {"Unit time in cgs (U_t)", mpc / 1e5},
                {"Unit current in cgs (U_I)", 1.0},
                {"Unit temperature in cgs (U_T)", 1.0}});
    const ParticleSet p = read_snapshot(path);
    CHECK(p.units.length_cm == mpc);
    CHECK(p.units.velocity_cm_s == Approx(1e5));
    CHECK(p.units.G == Approx(43.0071).epsilon(1e-4));
    // An attribute grove does not understand, or a set without its mass, is refused with the file.
    with_units({{"UnitLength_in_furlongs", 1.0}});
    CHECK_THAT(read_error(path), Catch::Contains("UnitLength_in_furlongs") && Catch::Contains(path));
    with_units({{"Unit length in cgs (U_L)", mpc}, {"Unit time in cgs (U_t)", 1.0}});
    CHECK_THAT(read_error(path), Catch::Contains("Unit mass in cgs (U_M)"));
}

TEST_CASE("files without ParticleIDs, and with h5py's UTF-8 variable-length strings, are read", "[snapshot]")
{
    const std::string path = test::scratch_path("foreign_no_ids.hdf5");
    write_snapshot(path, test::random_particles(50, 61));
    {
        auto file = h5::open_file_rw(path);
        auto group = h5::open_group(file.id(), "PartType1");
        REQUIRE(H5Ldelete(group.id(), "ParticleIDs", H5P_DEFAULT) >= 0);
        // The attribute h5py writes for f.attrs["note"] = "...": a scalar UTF-8 variable-length string.
        auto params = h5::open_group(file.id(), "RunParameters");
        h5::Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(type.id(), H5T_VARIABLE);
        H5Tset_cset(type.id(), H5T_CSET_UTF8);
        h5::Handle space(H5Screate(H5S_SCALAR), H5Sclose);
        h5::Handle attr(H5Acreate2(params.id(), "note", type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
        const char* text = "written by h5py";
        REQUIRE(H5Awrite(attr.id(), type.id(), &text) >= 0);
    }
    const ParticleSet p = read_snapshot(path);
    REQUIRE(p.size() == 50);
    for (std::size_t i = 0; i < p.size(); ++i) CHECK(p.id[i] == i + 1);
    CHECK(p.run_parameters.at("note") == "written by h5py");
}

TEST_CASE("a file claiming more particles than memory holds is refused before reading", "[snapshot]")
{
    const std::string path = test::scratch_path("claims_huge.hdf5");
    test::write_claiming(path, {0, 1000000000000ull, 0, 0, 0, 0});
    CHECK_THROWS_WITH(read_snapshot(path), Catch::Contains("reading 1000000000000 particles needs about"));
}

TEST_CASE("bad snapshots are rejected with a message naming the file and the problem", "[snapshot]")
{
    const std::string path = test::scratch_path("bad.hdf5");
    const std::vector<double> xyz = {0, 0, 0, 1, 0, 0};

    SECTION("missing file")
    {
        CHECK_THAT(read_error(test::scratch_path("does_not_exist.hdf5")),
                   Catch::Contains("does_not_exist.hdf5") && Catch::Contains("no such file"));
    }
    SECTION("not HDF5")
    {
        std::ofstream(path) << "this is text, not HDF5\n";
        CHECK_THAT(read_error(path), Catch::Contains("bad.hdf5") && Catch::Contains("not an HDF5 file"));
    }
    SECTION("no particle groups")
    {
        auto file = h5::create_file(path);
        h5::create_group(file.id(), "Header");
        file.reset();
        CHECK_THAT(read_error(path), Catch::Contains("no particle groups"));
    }
    SECTION("coordinates of the wrong shape")
    {
        write_raw(path, 1, {0, 0, 1, 1}, 2, {0, 0, 0, 0, 0, 0}, {1, 1}, {1, 2});
        CHECK_THAT(read_error(path), Catch::Contains("Coordinates must have shape (N, 3)"));
    }
    SECTION("a dataset of the wrong length")
    {
        write_raw(path, 1, xyz, 3, {0, 0, 0}, {1, 1}, {1, 2});
        CHECK_THAT(read_error(path), Catch::Contains("/PartType1/Velocities has shape (1, 3), expected (2, 3)"));
    }
    SECTION("missing masses without a MassTable entry")
    {
        write_raw(path, 1, xyz, 3, {0, 0, 0, 0, 0, 0}, {}, {1, 2});
        CHECK_THAT(read_error(path), Catch::Contains("Masses is missing"));
    }
    SECTION("NaN coordinate")
    {
        write_raw_simple(path, {0, std::nan(""), 0, 1, 0, 0}, {1, 1}, {1, 2});
        CHECK_THAT(read_error(path), Catch::Contains("non-finite coordinate"));
    }
    SECTION("infinite mass")
    {
        write_raw_simple(path, xyz, {1, std::numeric_limits<double>::infinity()}, {1, 2});
        CHECK_THAT(read_error(path), Catch::Contains("non-finite mass"));
    }
    SECTION("negative mass")
    {
        write_raw_simple(path, xyz, {1, -1}, {1, 2});
        CHECK_THAT(read_error(path), Catch::Contains("negative mass"));
    }
    SECTION("zero particles")
    {
        write_raw_simple(path, {}, {}, {});
        CHECK_THAT(read_error(path), Catch::Contains("zero particles"));
    }
    SECTION("duplicate IDs")
    {
        write_raw_simple(path, xyz, {1, 1}, {7, 7});
        CHECK_THAT(read_error(path), Catch::Contains("duplicate particle ID 7"));
    }
    SECTION("header count disagrees with the datasets")
    {
        write_raw_simple(path, xyz, {1, 1}, {1, 2});
        {
            h5::Handle file(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
            auto header = h5::open_group(file.id(), "Header");
            h5::write_attribute(header.id(), "NumPart_ThisFile", std::vector<std::uint64_t>{0, 5, 0, 0, 0, 0});
        }
        CHECK_THAT(read_error(path), Catch::Contains("NumPart_ThisFile says 5"));
    }
}

TEST_CASE("an unwritable output path fails cleanly and leaves the existing file intact", "[snapshot]")
{
    const ParticleSet p = test::random_particles(5);
    CHECK_THROWS_WITH(write_snapshot(test::scratch_path("no_such_dir/out.hdf5"), p), Catch::Contains("cannot write"));

    const std::string path = test::scratch_path("keep.hdf5");
    write_snapshot(path, p);
    ParticleSet bad = p;
    bad.mass[2] = std::nan("");
    CHECK_THROWS_WITH(write_snapshot(path, bad), Catch::Contains("cannot write") && Catch::Contains("non-finite mass"));
    CHECK(read_snapshot(path).mass == p.mass); // the old file is untouched
}

TEST_CASE("a checkpoint whose particles or parameters changed after writing is refused, naming it", "[checkpoint]")
{
    const std::string path = test::scratch_path("checksum_checkpoint.hdf5");
    Checkpoint c;
    c.particles = make_plummer(64, 3);
    c.particles.acc = c.particles.pos * -1.0;
    c.particles.pot = -c.particles.mass;
    c.particles.type[5] = 2; // types out of order: the file groups them, the checkpoint restores memory order
    c.particles.run_parameters["run.eps"] = "0.01";
    c.argv = {"in.hdf5", "-o", "out"};
    c.step = 12;
    c.next_snapshot = 0.5;
    c.snapshot_index = 3;
    c.reference_energy = -0.25;
    c.start_time = 0;
    c.diagnostics_bytes = 1234;
    c.integrator.fields.push_back({"jerk", Eigen::MatrixXd::Constant(3, 64, 0.5)});
    c.integrator.counters.emplace_back("block_steps", 7);
    write_checkpoint(path, c);
    const Checkpoint back = read_checkpoint(path); // unchanged: accepted
    CHECK(back.particles.pos == c.particles.pos);
    CHECK(back.integrator.counters == c.integrator.counters);

    // One bit of one coordinate flipped in the file, then one run parameter changed.
    const auto flip = [&](const char* dataset) {
        hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t set = H5Dopen2(file, dataset, H5P_DEFAULT);
        std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(H5Dget_space(set))));
        H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
        std::uint64_t bits = 0;
        std::memcpy(&bits, &values[7], sizeof bits);
        bits ^= 1;
        std::memcpy(&values[7], &bits, sizeof bits);
        H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
        H5Dclose(set);
        H5Fclose(file);
    };
    flip("/PartType1/Coordinates");
    CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains(path) && Catch::Contains("checksum"));
    write_checkpoint(path, c);
    {
        auto file = h5::open_file_rw(path);
        auto params = h5::open_group(file.id(), "RunParameters");
        H5Adelete(params.id(), "run.eps");
        h5::write_attribute(params.id(), "run.eps", std::string("0.02"));
    }
    CHECK_THROWS_WITH(read_checkpoint(path), Catch::Contains("checksum"));
}

TEST_CASE("a checksum of a run of bytes given in pieces is that of the run given whole", "[checkpoint]")
{
    std::mt19937_64 rng(5);
    std::vector<unsigned char> bytes(203);
    for (auto& b : bytes) b = static_cast<unsigned char>(rng());
    Checksum whole;
    whole.add(std::uint64_t{42});
    whole.add(bytes.data(), bytes.size());
    for (const std::size_t step : {1, 3, 7, 8, 13, 64, 203}) {
        Checksum pieces;
        pieces.add(std::uint64_t{42});
        for (std::size_t at = 0; at < bytes.size(); at += step)
            pieces.add_piece(bytes.data() + at, std::min(step, bytes.size() - at));
        pieces.add_piece(bytes.data(), 0);      // a process with nothing to add
        CHECK(pieces.value() != whole.value()); // the last bytes still wait
        pieces.end_pieces();
        INFO("pieces of " << step << " bytes");
        CHECK(pieces.value() == whole.value());
    }
    // Another byte anywhere changes the sum.
    Checksum other;
    other.add(std::uint64_t{42});
    bytes[100] ^= 1;
    other.add(bytes.data(), bytes.size());
    CHECK(other.value() != whole.value());
}

TEST_CASE("memory plans: counts without a header or past 2^64, and a cgroup's room", "[snapshot][memory]")
{
    // Without /Header the datasets' lengths count, unallocated here: a file of a few KB that
    // claims 2^35 particles is refused before anything is read.
    const std::string path = test::scratch_path("no_header_huge.hdf5");
    {
        hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hid_t group = H5Gcreate2(file, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        const hsize_t dims[2] = {hsize_t{1} << 35, 3};
        hid_t space = H5Screate_simple(2, dims, nullptr);
        hid_t set = H5Dcreate2(group, "Coordinates", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dclose(set);
        H5Sclose(space);
        H5Gclose(group);
        H5Fclose(file);
    }
    CHECK(snapshot_particle_count(path) == (std::uint64_t{1} << 35));
    CHECK_THROWS_WITH(read_snapshot(path), Catch::Contains("reading 34359738368 particles needs about"));
    // Counts that wrap past 2^64 are refused as such.
    const std::string wrap = test::scratch_path("wrapping_counts.hdf5");
    test::write_claiming(wrap, {0, 1ull << 63, 1ull << 63, 10, 0, 0});
    CHECK_THROWS_WITH(read_snapshot(wrap), Catch::Contains("overflow"));
    CHECK_THROWS_WITH(snapshot_particle_count(wrap), Catch::Contains(wrap));
    // A cgroup's limit less its use, the tightest of the group and its parents (v2 and v1).
    namespace fs = std::filesystem;
    const fs::path root = fs::path(test::scratch_path("cgroup"));
    fs::remove_all(root);
    fs::create_directories(root / "user.slice" / "job");
    std::ofstream(root / "user.slice" / "memory.max") << "1000000000\n";
    std::ofstream(root / "user.slice" / "memory.current") << "900000000\n";
    std::ofstream(root / "user.slice" / "job" / "memory.max") << "max\n";
    std::ofstream(root / "user.slice" / "job" / "memory.current") << "10\n";
    CHECK(cgroup_room_bytes("0::/user.slice/job\n", root.string()) == 100000000);
    std::ofstream(root / "user.slice" / "job" / "memory.max") << "300000000\n";
    std::ofstream(root / "user.slice" / "job" / "memory.current") << "250000000\n";
    CHECK(cgroup_room_bytes("0::/user.slice/job\n", root.string()) == 50000000);
    fs::create_directories(root / "memory" / "batch");
    std::ofstream(root / "memory" / "batch" / "memory.limit_in_bytes") << "300000000\n";
    std::ofstream(root / "memory" / "batch" / "memory.usage_in_bytes") << "100000000\n";
    CHECK(cgroup_room_bytes("12:cpu,cpuacct:/x\n4:memory:/batch\n", root.string()) == 200000000);
    CHECK(cgroup_room_bytes("0::/\n", root.string()) == 0); // no limit at the root: unknown
}

TEST_CASE("a snapshot read in parts, across its type groups, is the whole file", "[snapshot]")
{
    const std::string path = test::scratch_path("parts.hdf5");
    ParticleSet p = make_galaxy(5000, 3, GalaxyParams{}); // halo, disk and bulge: three groups
    p.acc = Eigen::Matrix3Xd::Random(3, static_cast<Eigen::Index>(p.size()));
    p.pot = Eigen::VectorXd::Random(static_cast<Eigen::Index>(p.size()));
    write_snapshot(path, p);
    const ParticleSet whole = read_snapshot(path);
    for (const std::size_t parts : {1, 3, 7}) {
        INFO(parts << " parts");
        ParticleSet joined;
        for (std::size_t k = 0; k < parts; ++k) {
            const ParticleSet part = read_snapshot_part(path, whole.size() * k / parts, whole.size() * (k + 1) / parts);
            CHECK(part.time == whole.time);
            CHECK(part.units.G == whole.units.G);
            joined = k == 0 ? part : concatenate(joined, part);
        }
        test::check_same_columns(joined, whole);
    }
    // Past the end: what there is; an empty part is no error.
    CHECK(read_snapshot_part(path, whole.size() - 10, whole.size() + 100).size() == 10);
    CHECK(read_snapshot_part(path, whole.size() + 1, whole.size() + 5).size() == 0);
    CHECK_THROWS_AS(read_hdf5_snapshot_part(path, 20, 10), std::invalid_argument);
}
