// The background snapshot writer: the same files as the synchronous writer, one write in flight,
// and a failed write reported (not lost) with no partial file left.
#include <catch2/catch.hpp>

#include <filesystem>

#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "core/snapshot_writer.hpp"
#include "support/test_support.hpp"

using namespace grove;

TEST_CASE("the background writer writes what the synchronous one does", "[snapshot][writer]")
{
    namespace fs = std::filesystem;
    ParticleSet p = test::random_particles(5000, 31);
    p.acc = p.pos;
    p.pot = p.mass;
    p.time = 0.25;
    p.run_parameters["test.key"] = "value";
    const std::string sync = test::scratch_path("writer_sync.hdf5");
    write_snapshot(sync, p);
    SnapshotWriter writer;
    std::vector<std::string> paths;
    for (int k = 0; k < 3; ++k) {
        paths.push_back(test::scratch_path("writer_async_" + std::to_string(k) + ".hdf5"));
        writer.write(paths.back(), p);
        p.pos(0, 0) += 1; // the writer has its own copy
    }
    writer.wait();
    const ParticleSet a = read_snapshot(sync), b = read_snapshot(paths.front());
    test::check_same_columns(a, b);
    CHECK(a.time == b.time);
    CHECK(a.run_parameters == b.run_parameters);
    CHECK(read_snapshot(paths[2]).pos(0, 0) == Approx(a.pos(0, 0) + 2));
}

TEST_CASE("a borrowed write takes the arrays without a copy and gives them back after", "[snapshot][writer]")
{
    ParticleSet p = test::random_particles(5000, 34);
    p.acc = p.pos;
    p.pot = p.mass;
    p.time = 0.5;
    p.run_parameters["test.key"] = "borrowed";
    const ParticleSet before = p;
    const double* positions = p.pos.data();
    const std::string path = test::scratch_path("writer_borrowed.hdf5");
    SnapshotWriter writer;
    writer.write_borrowed(path, p);
    CHECK(p.size() == 0); // lent: the set keeps its time and parameters, not its particles
    CHECK(p.time == 0.5);
    CHECK_THROWS_AS(writer.write(test::scratch_path("writer_other.hdf5"), before), std::logic_error);
    p.time = 0.75; // what a caller may change meanwhile
    writer.give_back(p);
    CHECK(p.pos.data() == positions); // the same storage, not a copy
    CHECK(p.time == 0.75);
    test::check_same_columns(p, before);
    const ParticleSet written = read_snapshot(path);
    test::check_same_columns(written, before);
    CHECK(written.time == 0.5);
    CHECK(written.run_parameters.at("test.key") == "borrowed");
    writer.give_back(p); // nothing borrowed: nothing happens
    CHECK(p.size() == before.size());
    // A failed borrowed write gives the arrays back, then reports its error.
    namespace fs = std::filesystem;
    const fs::path dir = test::scratch_path("writer_borrowed_fail");
    fs::remove_all(dir);
    fs::create_directories(dir / "taken.hdf5");
    writer.write_borrowed((dir / "taken.hdf5").string(), p);
    CHECK_THROWS_WITH(writer.give_back(p), Catch::Contains("taken.hdf5"));
    test::check_same_columns(p, before);
}

TEST_CASE("a failed background write is rethrown and leaves no file", "[snapshot][writer]")
{
    namespace fs = std::filesystem;
    const fs::path dir = test::scratch_path("writer_fail");
    fs::remove_all(dir);
    fs::create_directories(dir / "taken.hdf5"); // a directory where the file should go
    SnapshotWriter writer;
    writer.write((dir / "taken.hdf5").string(), test::random_particles(100, 32));
    CHECK_THROWS_WITH(writer.wait(), Catch::Contains("taken.hdf5"));
    CHECK_NOTHROW(writer.wait()); // reported once
    for (const auto& entry : fs::directory_iterator(dir)) CHECK(entry.path().filename() == "taken.hdf5");
    // The error also surfaces at the next write, which then goes ahead.
    writer.write((dir / "taken.hdf5").string(), test::random_particles(100, 32));
    CHECK_THROWS(writer.write((dir / "fine.hdf5").string(), test::random_particles(100, 33)));
    writer.write((dir / "fine.hdf5").string(), test::random_particles(100, 33));
    writer.wait();
    CHECK(fs::exists(dir / "fine.hdf5"));
}

TEST_CASE("a file that processes wrote in parts is sealed in the background: on the disk, then in place",
          "[snapshot][writer]")
{
    namespace fs = std::filesystem;
    const ParticleSet p = test::random_particles(300, 5);
    const std::string path = test::scratch_path("sealed.hdf5"), temporary = path + ".tmp.1";
    fs::remove(path);
    TypeCounts counts{};
    counts[1] = p.size();
    create_snapshot(temporary, p, counts, false);
    write_snapshot_rows(temporary, particle_range(p, 0, 100), {});
    TypeCounts later{};
    later[1] = 100;
    write_snapshot_rows(temporary, particle_range(p, 100, 300), later);
    SnapshotWriter writer;
    writer.seal(temporary, path);
    writer.wait();
    CHECK_FALSE(fs::exists(temporary));
    const ParticleSet back = read_snapshot(path);
    CHECK(back.pos == p.pos);
    CHECK(back.id == p.id);
    // A temporary that is not there: the error comes with the next call, and nothing is in place.
    const std::string missing = test::scratch_path("sealed_missing.hdf5");
    fs::remove(missing);
    writer.seal(missing + ".tmp.2", missing);
    CHECK_THROWS_WITH(writer.wait(), Catch::Contains(missing));
    CHECK_FALSE(fs::exists(missing));
}
