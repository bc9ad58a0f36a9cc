// `grove run` end to end: outputs on a small galaxy, restarts from checkpoints, interruption.
#include <catch2/catch.hpp>
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "support/test_support.hpp"

using namespace grove;

TEST_CASE("grove run writes snapshots, diagnostics and parameters, and refuses to overwrite", "[integrator][cli][slow]")
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / "run_galaxy";
    fs::remove_all(dir);
    const std::string cmd = std::string(GROVE_EXE) + " run " + test::data_path("galaxy_16k.hdf5") + " -o " +
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

TEST_CASE("a run refused for its settings creates no output directory", "[integrator][cli]")
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / "run_refused";
    fs::remove_all(dir);
    for (const char* bad : {"--engine warp", "--engine tree-cpu --integrator hermite", "--engine tree-cpu -G -1",
                            "--engine tree-cpu --timestep block", "--engine tree-cpu --timestep blocks",
                            "--engine direct-cpu --timestep block --dt-max 2.5e-4 --eps 0"}) {
        INFO(bad);
        const std::string cmd = std::string(GROVE_EXE) + " run " + test::data_path("galaxy_16k.hdf5") + " -o " +
                                dir.string() + " " + bad + " --dt 2.5e-4 --t-end 1e-3 > /dev/null 2>&1";
        CHECK(std::system(cmd.c_str()) != 0);
        CHECK_FALSE(fs::exists(dir));
    }
}

TEST_CASE("the galaxy equilibrium script runs end to end on a small model", "[integrator][scripts][slow]")
{
    namespace fs = std::filesystem;
    // Needs Debian's python3-h5py and numpy for /usr/bin/python3 (scripts/setup.sh installs them).
    if (!test::python_has("h5py, numpy")) GROVE_SKIP_TEST("h5py/numpy missing for /usr/bin/python3");
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

namespace {

std::string file_text(const std::string& path)
{
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A directory of the scratch folder, emptied.
std::filesystem::path empty_scratch_dir(const std::string& name)
{
    const std::filesystem::path dir = std::filesystem::path(GROVE_TEST_SCRATCH) / name;
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

// Runs `grove run` with arguments; returns the exit status (the shell's, 128 + signal when
// killed) and keeps the output in DIR.log.
int grove_run(const std::string& args, const std::string& log, const std::string& prefix = "")
{
    const std::string cmd = prefix + std::string(GROVE_EXE) + " run " + args + " > " + log + " 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool same_particles(const std::string& a, const std::string& b)
{
    const ParticleSet pa = read_snapshot(a), pb = read_snapshot(b);
    return pa.pos == pb.pos && pa.vel == pb.vel && pa.time == pb.time;
}

} // namespace

// run.yml's value for `key`, without its quotes; empty when it is not there.
std::string run_parameter(const std::string& dir, const std::string& key)
{
    std::ifstream yml(dir + "/run.yml");
    std::string line;
    while (std::getline(yml, line))
        if (line.rfind(key + ": ", 0) == 0) {
            std::string value = line.substr(key.size() + 2);
            if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
            return value;
        }
    return "";
}

// A diagnostics line without its 17th column, the wall time (block steps add counts after it).
std::string without_wall_time(const std::string& line)
{
    std::istringstream in(line);
    std::string out, word;
    for (int k = 1; in >> word; ++k)
        if (k != 17) out += word + ' ';
    return out;
}

TEST_CASE("a finished run extended with --restart continues bit-identically, from its checkpoint alone",
          "[integrator][restart][slow]")
{
    namespace fs = std::filesystem;
    const fs::path root = empty_scratch_dir("restart");
    const std::string plummer = test::data_path("plummer_4096.hdf5");
    const std::string galaxy = test::data_path("galaxy_16k.hdf5");
    struct Case {
        const char* name;
        std::string args, half, full, input;
    } cases[] = {
        {"leapfrog", "--engine tree-cpu --eps 0.01 --dt 0.005 --snapshot-every 0.1", "0.1", "0.2", plummer},
        {"hermite",
         "--integrator hermite --engine direct-cpu --eps 0.00390625 --dt-max 0.0078125 --snapshot-every 0.03125 "
         "--log-every 2",
         "0.03125", "0.0625", plummer},
        {"block_steps",
         "--engine tree-cpu --eps 0.01 --timestep block --dt-max 0.015625 --eta 0.02 --snapshot-every 0.03125 "
         "--log-every 1",
         "0.03125", "0.0625", plummer},
        {"block_steps_relative",
         "--engine tree-cpu --mac relative --alpha 0.003 --eps 0.01 --timestep block --dt-max 0.015625 --eta 0.02 "
         "--snapshot-every 0.03125 --log-every 1",
         "0.03125", "0.0625", plummer},
        {"softening_by_type",
         "--engine tree-cpu --eps 0.05 --eps-type halo=0.1,bulge=0.02 --dt 0.00025 --snapshot-every 0.0005", "0.0005",
         "0.001", galaxy},
    };
    for (const Case& c : cases) {
        INFO(c.name);
        const std::string& plummer = c.input;
        const std::string a = (root / (std::string(c.name) + "_a")).string();
        REQUIRE(grove_run(plummer + " -o " + a + " " + c.args + " --t-end " + c.full, a + ".log") == 0);
        // The same run to half the time, started in another directory with relative paths from
        // an input that is then replaced by a different model (another G): the extension must
        // take everything from its checkpoint and come out identical to the bits.
        const fs::path work = root / (std::string(c.name) + "_cwd");
        fs::create_directories(work);
        fs::copy_file(plummer, work / "input.hdf5");
        const std::string b = (work / "b").string();
        REQUIRE(grove_run("input.hdf5 -o b " + c.args + " --t-end " + c.half, b + ".log",
                          "cd " + work.string() + " && ") == 0);
        fs::copy_file(test::data_path(c.input == galaxy ? "plummer_4096.hdf5" : "galaxy_16k.hdf5"), work / "input.hdf5",
                      fs::copy_options::overwrite_existing);
        REQUIRE(fs::exists(fs::path(b) / "checkpoint.hdf5")); // every finished run leaves one
        // Restarting a finished run without a later --t-end is refused; options it may not change too.
        CHECK(grove_run("--restart " + b, b + ".done.log") == 1);
        CHECK(grove_run("--restart " + b + " --t-end " + c.full + " --eps 0.5", b + ".bad.log") == 1);
        REQUIRE(grove_run("--restart " + b + " --t-end " + c.full, b + ".restart.log", "cd / && ") == 0);
        CHECK(same_particles(a + "/snapshot_0002.hdf5", b + "/snapshot_0002.hdf5"));
        std::ifstream da(a + "/diagnostics.txt"), db(b + "/diagnostics.txt");
        std::string la, lb;
        int lines = 0;
        while (std::getline(da, la)) {
            REQUIRE(std::getline(db, lb));
            CHECK(without_wall_time(la) == without_wall_time(lb));
            ++lines;
        }
        CHECK_FALSE(std::getline(db, lb)); // no duplicated lines after the restart
        CHECK(lines > 3);
        if (std::string(c.name) == "block_steps") { // the particles per bin after the wall time
            std::ifstream d(b + "/diagnostics.txt");
            std::string header, first;
            std::getline(d, header);
            std::getline(d, header);
            std::getline(d, first);
            CHECK_THAT(header,
                       Catch::EndsWith("wall_s bin0 bin1 bin2 bin3 bin4 bin5 bin6 bin7 bin8 bin9 bin10 bin11 bin12 "
                                       "bin13 bin14 bin15 bin16 bin17 bin18 bin19 bin20 bin21 bin22 bin23 bin24 "
                                       "bin25 bin26 bin27 bin28 bin29 bin30"));
            std::istringstream in(first);
            std::string word;
            long long total = 0;
            for (int k = 1; in >> word; ++k)
                if (k > 17) total += std::stoll(word);
            CHECK(total == 4096);
        }
        if (c.input == galaxy) {
            CHECK(run_parameter(a, "run.eps-type") == "halo=0.1,bulge=0.02");
            CHECK(grove_run("--restart " + b + " --t-end 0.002 --eps-type halo=0.2", b + ".bad.log") == 1);
        }
    }
    // Bad restarts are refused with a message.
    CHECK(grove_run("--restart " + (root / "nothing").string(), (root / "bad.log").string()) == 1);
}

TEST_CASE("block runs keep their dynamical time's cap in the checkpoint; one made before the cap goes on without",
          "[integrator][restart][slow]")
{
    // On a galaxy, whose centre the cap shortens: a run that took the default cap keeps it in its
    // checkpoint's command line, and a checkpoint whose line has none (made before the cap
    // existed) continues as a run with --eta-dyn 0 does, to the bit.
    namespace fs = std::filesystem;
    const fs::path root = empty_scratch_dir("restart_cap");
    const std::string galaxy = test::data_path("galaxy_16k.hdf5");
    const std::string args = " --engine tree-cpu --eps 0.05 --timestep block --dt-max 0.004 --eta 0.02 "
                             "--snapshot-every 0.004 --log-every 1";
    const std::string capped = (root / "capped").string(), plain = (root / "plain").string(),
                      old = (root / "before_the_cap").string();
    REQUIRE(grove_run(galaxy + " -o " + capped + args + " --t-end 0.008", capped + ".log") == 0);
    REQUIRE(grove_run(galaxy + " -o " + plain + args + " --eta-dyn 0 --t-end 0.008", plain + ".log") == 0);
    const Checkpoint kept = read_checkpoint(capped + "/checkpoint.hdf5");
    const auto cap = std::find(kept.argv.begin(), kept.argv.end(), "--eta-dyn");
    REQUIRE(cap != kept.argv.end());
    CHECK(std::stod(*std::next(cap)) == 0.2);
    CHECK_FALSE(same_particles(capped + "/snapshot_0002.hdf5", plain + "/snapshot_0002.hdf5"));

    // The first half as a run before the cap made it, then its checkpoint as that run wrote it.
    REQUIRE(grove_run(galaxy + " -o " + old + args + " --eta-dyn 0 --t-end 0.004", old + ".log") == 0);
    Checkpoint before = read_checkpoint(old + "/checkpoint.hdf5");
    const auto at = std::find(before.argv.begin(), before.argv.end(), "--eta-dyn");
    REQUIRE(at != before.argv.end());
    before.argv.erase(at, at + 2);
    write_checkpoint(old + "/checkpoint.hdf5", before);
    REQUIRE(grove_run("--restart " + old + " --t-end 0.008", old + ".restart.log") == 0);
    CHECK(same_particles(old + "/snapshot_0002.hdf5", plain + "/snapshot_0002.hdf5"));
    CHECK(read_checkpoint(old + "/checkpoint.hdf5").argv.back() == "0");
}

TEST_CASE("block runs checkpoint within a dt_max when the wall clock or a signal asks, and go on bit for bit",
          "[integrator][restart][slow]")
{
    // A dt_max of 64 ticks takes seconds here: a checkpoint due by --checkpoint-every, or a stop
    // signal, waits only for the tick under way. Going on past such checkpoints, or restarting
    // from one, ends as the run that never paused.
    namespace fs = std::filesystem;
    const fs::path root = empty_scratch_dir("restart_within");
    const std::string galaxy = test::data_path("galaxy_16k.hdf5");
    const std::string args = " --engine tree-cpu --eps 0.05 --timestep block --dt-max 0.004 --eta 0.02 "
                             "--snapshot-every 0.004 --log-every 1 --t-end 0.008";
    const std::string plain = (root / "plain").string(), often = (root / "often").string(),
                      stopped = (root / "stopped").string();
    REQUIRE(grove_run(galaxy + " -o " + plain + args, plain + ".log") == 0);
    REQUIRE(grove_run(galaxy + " -o " + often + args + " --checkpoint-every 0.001", often + ".log") == 0);
    std::ifstream log(often + ".log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    CHECK(text.find("within an interval)") != std::string::npos); // every tick took longer than 1 ms
    CHECK(same_particles(plain + "/snapshot_0002.hdf5", often + "/snapshot_0002.hdf5"));

    // Stopped after a second (within the first dt_max on this machine, or the second on a faster
    // one), then restarted.
    CHECK(grove_run(galaxy + " -o " + stopped + args, stopped + ".log", "timeout -s INT 1 ") == 124);
    const Checkpoint left = read_checkpoint(stopped + "/checkpoint.hdf5");
    const bool within = left.integrator.has_counter("tick");
    INFO("stopped at t = " << left.particles.time << (within ? ", within" : ", between") << " dt_max intervals");
    REQUIRE(std::system(
                (std::string(GROVE_EXE) + " info " + stopped + "/checkpoint.hdf5 > " + stopped + ".info").c_str()) ==
            0);
    std::ifstream info(stopped + ".info");
    const std::string described((std::istreambuf_iterator<char>(info)), std::istreambuf_iterator<char>());
    CHECK(described.find(within ? "checkpoint  within step 1 (tick " : "checkpoint  after step ") != std::string::npos);
    REQUIRE(grove_run("--restart " + stopped, stopped + ".restart.log") == 0);
    CHECK(same_particles(plain + "/snapshot_0002.hdf5", stopped + "/snapshot_0002.hdf5"));
    std::ifstream da(plain + "/diagnostics.txt"), db(stopped + "/diagnostics.txt");
    std::string la, lb;
    while (std::getline(da, la)) {
        REQUIRE(std::getline(db, lb));
        CHECK(without_wall_time(la) == without_wall_time(lb));
    }
    CHECK_FALSE(std::getline(db, lb));
}

TEST_CASE("grove run --target chooses the opening at the start, reports its error, and a restart keeps it",
          "[integrator][restart][slow]")
{
    namespace fs = std::filesystem;
    const fs::path root = empty_scratch_dir("target");
    const std::string plummer = test::data_path("plummer_4096.hdf5");
    const std::string common = plummer + " --engine tree-cpu --eps 0.01 --dt 0.005 --snapshot-every 0.01";
    // The relative criterion bounded by theta-max meets the target at a larger alpha than alone.
    std::vector<double> alphas;
    int runs = 0;
    for (const std::string criterion : {"geometric", "relative", "relative --theta-max 0.7"}) {
        INFO(criterion);
        const std::string dir = (root / ("criterion" + std::to_string(runs++))).string();
        REQUIRE(grove_run(common + " -o " + dir + " --t-end 0.01 --mac " + criterion + " --target p50=3e-4",
                          dir + ".log") == 0);
        const std::string parameter = criterion == "geometric" ? "theta" : "alpha";
        const std::string chose = run_parameter(dir, "run.target_chose");
        REQUIRE(chose.rfind(parameter + " ", 0) == 0);
        const double value = std::stod(chose.substr(parameter.size() + 1));
        CHECK(run_parameter(dir, "run." + parameter) == chose.substr(parameter.size() + 1));
        const double error = std::stod(run_parameter(dir, "run.target_error"));
        CHECK(error <= 3e-4);
        CHECK(error > 3e-5); // the largest value that meets it, not any small one
        CHECK(run_parameter(dir, "run.target_compared") == "4096");
        // The checkpoint holds the choice, not the search: the restart goes on with the same value.
        const Checkpoint c = read_checkpoint(dir + "/checkpoint.hdf5");
        CHECK(std::find(c.argv.begin(), c.argv.end(), "--target") == c.argv.end());
        const auto at = std::find(c.argv.begin(), c.argv.end(), "--" + parameter);
        REQUIRE(at != c.argv.end());
        REQUIRE(at + 1 != c.argv.end());
        CHECK(std::stod(*(at + 1)) == Approx(value).epsilon(1e-5)); // run.yml has six digits
        const bool bounded = criterion.find("theta-max") != std::string::npos;
        CHECK((std::find(c.argv.begin(), c.argv.end(), "--theta-max") != c.argv.end()) == bounded);
        if (parameter == "alpha") alphas.push_back(value);
        REQUIRE(grove_run("--restart " + dir + " --t-end 0.02", dir + ".restart.log") == 0);
    }
    REQUIRE(alphas.size() == 2);
    CHECK(alphas[1] > alphas[0]);
    // What it cannot do is refused before anything starts.
    for (const char* bad : {"--target p50=3e-4 --theta 0.5", "--target p50=3e-4 --engine direct-cpu",
                            "--target p50=1e-20", "--target q50=1", "--target p50=3e-4 --target-sample 0"}) {
        INFO(bad);
        const std::string dir = (root / "refused").string();
        CHECK(grove_run(common + " -o " + dir + " --t-end 0.01 " + bad, dir + ".log") == 1);
        CHECK_FALSE(fs::exists(dir));
        fs::remove_all(dir);
    }
}

TEST_CASE("a restart refuses a damaged checkpoint, and goes on without its diagnostics file",
          "[integrator][restart][slow]")
{
    namespace fs = std::filesystem;
    const fs::path root = empty_scratch_dir("restart_damaged");
    const std::string plummer = test::data_path("plummer_4096.hdf5");
    const std::string args = " --engine tree-cpu --eps 0.01 --dt 0.01 --snapshot-every 0.05";
    const auto run_to = [&](const std::string& dir, const char* t_end) {
        return grove_run(plummer + " -o " + dir + args + " --t-end " + t_end, dir + ".log");
    };
    const auto no_nul = [](const std::string& path) {
        const std::string text = file_text(path);
        return text.find('\0') == std::string::npos;
    };
    // diagnostics.txt deleted, then cut short: the restart rebuilds it from the checkpoint.
    for (const bool deleted : {true, false}) {
        INFO((deleted ? "deleted" : "truncated"));
        const std::string dir = (root / (deleted ? "deleted" : "truncated")).string();
        REQUIRE(run_to(dir, "0.1") == 0);
        if (deleted)
            fs::remove(dir + "/diagnostics.txt");
        else
            fs::resize_file(dir + "/diagnostics.txt", 40);
        REQUIRE(grove_run("--restart " + dir + " --t-end 0.2", dir + ".restart.log") == 0);
        const std::string diagnostics = file_text(dir + "/diagnostics.txt");
        CHECK_THAT(diagnostics, Catch::Contains("# grove run diagnostics") && Catch::Contains("restarted from"));
        CHECK(no_nul(dir + "/diagnostics.txt"));
        CHECK(fs::exists(dir + "/snapshot_0004.hdf5"));
    }
    // One bit of the checkpoint's positions flipped: refused, naming the checkpoint.
    const std::string dir = (root / "flipped").string();
    REQUIRE(run_to(dir, "0.1") == 0);
    {
        const std::string cp = dir + "/checkpoint.hdf5";
        hid_t file = H5Fopen(cp.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        hid_t set = H5Dopen2(file, "/PartType1/Coordinates", H5P_DEFAULT);
        std::vector<double> v(3 * 4096);
        REQUIRE(H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
        v[100] = std::nextafter(v[100], 1e300);
        REQUIRE(H5Dwrite(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) >= 0);
        H5Dclose(set);
        H5Fclose(file);
    }
    CHECK(grove_run("--restart " + dir + " --t-end 0.2", dir + ".restart.log") == 1);
    CHECK_THAT(file_text(dir + ".restart.log"), Catch::Contains("checkpoint.hdf5") && Catch::Contains("checksum"));
}

TEST_CASE("SIGINT finishes the step and leaves a checkpoint and valid snapshots", "[integrator][restart][slow]")
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / "interrupt";
    fs::remove_all(dir);
    // A run of about a minute, interrupted after one second.
    const int status = grove_run(test::data_path("plummer_4096.hdf5") + " -o " + dir.string() +
                                     " --engine direct-cpu --eps 0.01 --dt 0.001 --t-end 5 --snapshot-every 0.002",
                                 dir.string() + ".log", "timeout -s INT 1 ");
    CHECK(status == 124); // timeout's status when it had to send the signal
    REQUIRE(fs::exists(dir / "checkpoint.hdf5"));
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".hdf5") CHECK_NOTHROW(read_snapshot(entry.path().string()));
    std::ifstream log(dir.string() + ".log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    CHECK(text.find("interrupted (signal 2)") != std::string::npos);
}

TEST_CASE("a snapshot that cannot be written stops the run with one clear line and no partial file",
          "[integrator][slow]")
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / "unwritable";
    fs::remove_all(dir);
    fs::create_directories(dir / "snapshot_0001.hdf5"); // the second snapshot's name is taken by a folder
    const int status = grove_run(test::data_path("plummer_4096.hdf5") + " -o " + dir.string() +
                                     " --engine tree-cpu --eps 0.01 --dt 0.01 --t-end 0.04 --snapshot-every 0.01",
                                 dir.string() + ".log");
    CHECK(status == 1);
    std::ifstream log(dir.string() + ".log");
    const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
    CHECK(text.find("grove run: error: cannot write " + (dir / "snapshot_0001.hdf5").string()) != std::string::npos);
    for (const auto& entry : fs::directory_iterator(dir))
        CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
    CHECK_NOTHROW(read_snapshot((dir / "snapshot_0000.hdf5").string()));
}

namespace {

// Runs a grove command line with the largest file it may write limited to `kib` KiB (RLIMIT_FSIZE,
// with SIGXFSZ ignored so that writes fail with EFBIG as on a full disk); returns the status.
int grove_limited(const std::string& args, long kib, const std::string& log)
{
    const std::string cmd = "bash -c \"trap '' XFSZ; ulimit -f " + std::to_string(kib) + "; " + GROVE_EXE + " " + args +
                            "\" > " + log + " 2>&1";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

TEST_CASE("a write that runs out of space fails with exit 1 and leaves no file under its name", "[cli][slow]")
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / "disk_full";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string in = test::data_path("plummer_4096.hdf5");
    const std::string ref = (dir / "ref.hdf5").string();
    REQUIRE(grove_limited("forces " + in + " --engine tree-cpu -o " + ref, 1L << 30, ref + ".log") == 0);
    const auto needed_kib = static_cast<long>(fs::file_size(ref) / 1024);
    // Every limit below the file's size fails cleanly (no crash, no file, the file named); at or
    // above it the output is complete.
    for (const double fraction : {0.05, 0.3, 0.6, 0.9, 0.97, 0.995}) {
        const long kib = static_cast<long>(fraction * static_cast<double>(needed_kib));
        INFO("limit " << kib << " KiB of " << needed_kib);
        const std::string out = (dir / "out.hdf5").string();
        const int status = grove_limited("forces " + in + " --engine tree-cpu -o " + out, kib, out + ".log");
        CHECK(status == 1);
        CHECK_THAT(file_text(out + ".log"), Catch::Contains("cannot write " + out));
        for (const auto& entry : fs::directory_iterator(dir)) {
            const std::string name = entry.path().filename().string();
            const bool leftover = name.rfind("out.hdf5", 0) == 0 && entry.path().extension() != ".log";
            CHECK_FALSE(leftover);
        }
    }
    const std::string out = (dir / "fits.hdf5").string();
    CHECK(grove_limited("forces " + in + " --engine tree-cpu -o " + out, needed_kib + 64, out + ".log") == 0);
    CHECK(read_snapshot(out).acc == read_snapshot(ref).acc);

    // A run whose checkpoint cannot be written stops with the error and keeps its snapshots.
    const std::string run = (dir / "run").string();
    const int status = grove_limited("run " + in + " -o " + run +
                                         " --engine tree-cpu --eps 0.01 --dt 0.01 --t-end 0.1 --checkpoint-steps 2",
                                     needed_kib + 16, run + ".log");
    CHECK(status == 1);
    CHECK_THAT(file_text(run + ".log"), Catch::Contains("cannot write " + run + "/checkpoint.hdf5.partial"));
    CHECK_FALSE(fs::exists(fs::path(run) / "checkpoint.hdf5"));
    CHECK_FALSE(fs::exists(fs::path(run) / "checkpoint.hdf5.partial"));
    CHECK_NOTHROW(read_snapshot(run + "/snapshot_0000.hdf5"));
}

TEST_CASE("one run per directory: a second is refused while the first lives, a dead one's lock is taken over",
          "[integrator][slow]")
{
    namespace fs = std::filesystem;
    const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / "locked";
    fs::remove_all(dir);
    const std::string in = test::data_path("plummer_4096.hdf5");
    // A run of about a minute in the background; a second run into its directory meanwhile.
    const std::string first = "timeout -s INT 8 " + std::string(GROVE_EXE) + " run " + in + " -o " + dir.string() +
                              " --engine direct-cpu --eps 0.01 --dt 0.001 --t-end 5 > " + dir.string() +
                              ".first.log 2>&1 &";
    REQUIRE(std::system(first.c_str()) == 0);
    for (int k = 0; k < 200 && !fs::exists(dir / ".grove-run.lock"); ++k) usleep(20000);
    REQUIRE(fs::exists(dir / ".grove-run.lock"));
    const std::string second = dir.string() + "_second.log";
    CHECK(grove_run(in + " -o " + dir.string() + " --engine tree-cpu --dt 0.01 --t-end 0.02", second) == 1);
    CHECK_THAT(file_text(second), Catch::Contains("another grove run (pid"));
    long owner = 0;
    std::ifstream(dir / ".grove-run.lock") >> owner;
    if (owner > 0) kill(static_cast<pid_t>(owner), SIGTERM); // the first run checkpoints and ends
    // A lock whose owner is gone, and the temporary files it left, are cleaned up.
    const fs::path stale = fs::path(GROVE_TEST_SCRATCH) / "stale_lock";
    fs::remove_all(stale);
    fs::create_directories(stale);
    std::ofstream(stale / ".grove-run.lock") << 999999999 << "\n";
    std::ofstream(stale / "snapshot_0007.hdf5.tmp.999999999") << "partial";
    const std::string log = stale.string() + ".log";
    CHECK(grove_run(in + " -o " + stale.string() + " --engine tree-cpu --eps 0.01 --dt 0.01 --t-end 0.02", log) == 0);
    CHECK_THAT(file_text(log), Catch::Contains("took over the lock"));
    CHECK_FALSE(fs::exists(stale / "snapshot_0007.hdf5.tmp.999999999"));
    CHECK_FALSE(fs::exists(stale / ".grove-run.lock")); // released at the end
}

TEST_CASE("two runs started together into one directory: one runs, the other is refused", "[integrator][slow]")
{
    namespace fs = std::filesystem;
    const std::string in = test::data_path("plummer_4096.hdf5");
    // Before the kernel lock, both runs wrote into the directory in about one try of three.
    for (int attempt = 0; attempt < 5; ++attempt) {
        INFO("attempt " << attempt);
        const fs::path dir = fs::path(GROVE_TEST_SCRATCH) / ("together_" + std::to_string(attempt));
        fs::remove_all(dir);
        const std::string run = std::string(GROVE_EXE) + " run " + in + " -o " + dir.string() +
                                " --engine tree-cpu --eps 0.01 --dt 0.01 --t-end 0.1";
        const std::string both = "(" + run + " > " + dir.string() + ".a.log 2>&1; echo $? > " + dir.string() +
                                 ".a.rc) & (" + run + " > " + dir.string() + ".b.log 2>&1; echo $? > " + dir.string() +
                                 ".b.rc) & wait";
        REQUIRE(std::system(("bash -c '" + both + "'").c_str()) == 0);
        int a = -1, b = -1;
        std::ifstream(dir.string() + ".a.rc") >> a;
        std::ifstream(dir.string() + ".b.rc") >> b;
        CHECK(a + b == 1); // one 0, one 1
        const std::string refused = file_text(dir.string() + (a == 1 ? ".a.log" : ".b.log"));
        CHECK_THAT(refused, Catch::Contains("another grove run"));
        int snapshots = 0;
        for (const auto& entry : fs::directory_iterator(dir)) snapshots += entry.path().extension() == ".hdf5";
        CHECK(snapshots == 12); // ten intervals' snapshots, the first, and the checkpoint: one run's
    }
}
