// The grove program end to end on small files, and the snapshot seen by yt.
#include <catch2/catch.hpp>

#include <chrono>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sys/wait.h>

#include "core/diagnostics.hpp"
#include "core/hdf5_file.hpp"
#include "core/ic_models.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "support/test_support.hpp"
#include "tree/direct_cpu.hpp"

using namespace grove;

namespace {

struct CommandResult {
    int status;
    std::string output; // stdout and stderr
};

CommandResult run_command(const std::string& command)
{
    CommandResult r{0, ""};
    FILE* pipe = popen((command + " 2>&1").c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::array<char, 4096> buffer;
    while (std::fgets(buffer.data(), buffer.size(), pipe)) r.output += buffer.data();
    const int raw = pclose(pipe);
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    return r;
}

CommandResult run_grove(const std::string& args)
{
    return run_command(std::string(GROVE_EXE) + " " + args);
}

} // namespace

TEST_CASE("grove info and grove forces on a small file", "[cli]")
{
    ParticleSet p = test::random_particles(300, 13);
    const std::string in = test::scratch_path("cli_in.hdf5");
    const std::string out = test::scratch_path("cli_out.hdf5");
    write_snapshot(in, p);

    const auto info = run_grove("info " + in);
    CHECK(info.status == 0);
    CHECK_THAT(info.output, Catch::Contains("300 particles"));
    CHECK_THAT(info.output, Catch::Contains("units       nbody"));

    const auto forces = run_grove("forces " + in + " --engine direct-cpu --eps 0.01 -o " + out);
    INFO(forces.output);
    REQUIRE(forces.status == 0);
    const ParticleSet back = read_snapshot(out);
    REQUIRE(back.has_forces());
    Forces ref;
    DirectCpuEngine(GravityParams{1.0, 0.01}).compute(p.pos, p.mass, ref);
    CHECK((back.acc - ref.acc).norm() <= 1e-14 * ref.acc.norm());
    CHECK(back.run_parameters.at("forces.engine") == "direct-cpu");
    CHECK(back.run_parameters.at("forces.eps") == "0.01");

    const auto info2 = run_grove("info " + out);
    CHECK_THAT(info2.output, Catch::Contains("2T/|W|"));
    CHECK_THAT(info2.output, !Catch::Contains(", r10")); // one component: its radii are the lagrangian line

    // Two components: each one's Lagrangian radii about its own centre of mass.
    ParticleSet two = test::random_particles(400, 14);
    for (std::size_t i = 0; i < two.size(); ++i) {
        two.type[i] = i < 100 ? 3 : 1;
        if (i < 100) two.pos.col(static_cast<Eigen::Index>(i)) = 0.01 * two.pos.col(static_cast<Eigen::Index>(i));
    }
    const std::string typed = test::scratch_path("cli_two.hdf5");
    write_snapshot(typed, two);
    std::vector<std::size_t> bulge(100);
    for (std::size_t i = 0; i < 100; ++i) bulge[i] = i;
    Eigen::Vector3d centre = Eigen::Vector3d::Zero();
    for (std::size_t i : bulge)
        centre += two.mass[static_cast<Eigen::Index>(i)] * two.pos.col(static_cast<Eigen::Index>(i));
    centre /= two.mass.head(100).sum();
    const std::vector<double> r = lagrangian_radii(two.pos, two.mass, centre, {0.5}, bulge);
    char expected[64];
    std::snprintf(expected, sizeof expected, "r50 %.6g", r[0]);
    const auto info3 = run_grove("info " + typed);
    CHECK_THAT(info3.output, Catch::Contains("PartType3   bulge") && Catch::Contains(expected));
    CHECK_THAT(info2.output, Catch::Contains("forces.engine"));

    const auto tree = run_grove("forces " + in + " --engine tree-cpu --theta 0.4 -o " + out);
    INFO(tree.output);
    CHECK(tree.status == 0);
}

TEST_CASE("grove forces --neighbours writes nearest neighbours and neighbour lists equal to brute force", "[cli]")
{
    ParticleSet p = test::random_particles(300, 4);
    p.pos.col(5) = p.pos.col(9) + Eigen::Vector3d(1e-3, 0, 0); // a close pair
    const std::string in = test::scratch_path("nb_in.hdf5"), out = test::scratch_path("nb_out.hdf5");
    write_snapshot(in, p);
    const double radius = 0.3;
    const auto r = run_grove("forces " + in +
                             " --engine direct-cpu --eps 0.01 --neighbour-radius 0.3 "
                             "--max-neighbours 4 -o " +
                             out + " 2>&1");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains("raise --max-neighbours")); // some have more than 4
    h5::Handle file = h5::open_file_read(out);
    h5::Handle group = h5::open_group(file.id(), "PartType1");
    const auto ids = h5::read_dataset_u64(group.id(), "ParticleIDs");
    const auto nearest = h5::read_dataset_u64(group.id(), "NearestNeighbour");
    const auto distance = h5::read_dataset_doubles(group.id(), "NearestDistance");
    const auto count = h5::read_dataset_u64(group.id(), "NeighbourCount");
    const auto lists = h5::read_dataset_u64(group.id(), "NeighbourIDs");
    const auto overflow = h5::read_dataset_u64(group.id(), "NeighbourOverflow");
    REQUIRE(nearest.size() == p.size());
    REQUIRE(lists.size() == 4 * p.size());
    const ParticleSet q = read_snapshot(out);
    for (std::size_t i = 0; i < q.size(); ++i) {
        double best = INFINITY;
        std::uint64_t best_id = 0;
        std::vector<std::uint64_t> within;
        for (std::size_t j = 0; j < q.size(); ++j) {
            if (j == i) continue;
            const double d = (q.pos.col(static_cast<Eigen::Index>(j)) - q.pos.col(static_cast<Eigen::Index>(i))).norm();
            if (d < best) {
                best = d;
                best_id = ids[j];
            }
            if (d < radius) within.push_back(ids[j]);
        }
        INFO("particle " << ids[i]);
        CHECK(nearest[i] == best_id);
        CHECK(distance[i] == Approx(best).epsilon(1e-12));
        CHECK(count[i] == within.size());
        CHECK(overflow[i] == (within.size() > 4 ? 1u : 0u));
        std::sort(within.begin(), within.end());
        for (std::size_t k = 0; k < std::min<std::size_t>(within.size(), 4); ++k) CHECK(lists[4 * i + k] == within[k]);
    }
    // Tree engines have no neighbour search.
    CHECK_THAT(run_grove("forces " + in + " --engine tree-cpu --neighbours -o " + out + " 2>&1").output,
               Catch::Contains("--neighbours needs a direct engine"));
}

TEST_CASE("the sample model in data/ reads and is a Plummer sphere in equilibrium", "[cli]")
{
    const ParticleSet p = read_snapshot(test::data_path("plummer_4096.hdf5"));
    REQUIRE(p.size() == 4096);
    CHECK(p.units.system == "nbody");
    CHECK(p.run_parameters.at("ic.model") == "plummer");
    Forces f;
    DirectCpuEngine(GravityParams{}).compute(p.pos, p.mass, f);
    CHECK(std::abs(f.pot.dot(p.mass) / 2 + 0.5) < 0.03); // W = -1/2 in Henon units
}

TEST_CASE("grove reports bad input in one line and exits non-zero", "[cli]")
{
    const std::string in = test::scratch_path("cli_bad_in.hdf5");
    write_snapshot(in, test::random_particles(10));
    auto r = run_grove("info " + test::scratch_path("missing.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("missing.hdf5: no such file"));
    r = run_grove("forces " + in + " --engine warp-drive -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("unknown engine 'warp-drive'"));
    r = run_grove("forces " + in + " --eps -1 -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("--eps"));
    r = run_grove("forces " + in + " --engine tree-cpu --mac relative --alpha 0 -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("alpha must lie in (0, 1]"));
    r = run_grove("forces " + in + " --engine tree-cpu --mac barnes -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("geometric") && Catch::Contains("relative"));
    r = run_grove("forces " + in + " --engine tree-cpu --theta-max 0.7 -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("--theta-max bounds --mac relative"));
    r = run_grove("forces " + in + " --engine tree-cpu --mac relative --theta-max 2 -o " +
                  test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("--theta-max must lie in (0, 1.1547]"));
    r = run_grove("accuracy " + in + " --mac relative --theta 0.5 -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("--theta belongs to --mac geometric"));
    r = run_grove("forces " + in + " --no-such-option");
    CHECK(r.status == 1);
    // A flag's value after a space is a stray word, refused (it would leave the flag as it was).
    r = run_grove("bench step --model plummer -n 1000 --steps 1 --resident false");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("unexpected argument 'false'") && Catch::Contains("--resident=false"));
    r = run_grove("forces " + in + " extra.hdf5 -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("unexpected argument 'extra.hdf5'"));
    r = run_grove("forces " + in + " -o /nonexistent_dir/out.hdf5 --engine direct-cpu");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("cannot write /nonexistent_dir/out.hdf5"));
    // Opening angles beyond 2/sqrt(3) all give the same lists: refused, with the reason.
    r = run_grove("forces " + in + " --engine tree-cpu --theta 1.2 -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("--theta must lie in (0, 1.1547]"));
    r = run_grove("accuracy " + in + " --engine tree-cpu --theta 0.5:1.5:0.5 -o " + test::scratch_path("a.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("(got 1.5"));
    // An output naming the input is refused, and the input survives.
    const auto before = read_snapshot(in).pos;
    r = run_grove("accuracy " + in + " --engine tree-cpu --theta 0.5 -o " + in);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("is the input"));
    r = run_grove("forces " + in + " --engine tree-cpu -o " + in);
    CHECK(r.status == 1);
    CHECK(read_snapshot(in).pos == before);
    // An unwritable output fails before the work.
    r = run_grove("accuracy " + in + " --engine tree-cpu --theta 0.5 -o /nonexistent_dir/acc.hdf5");
    CHECK(r.status == 1);
    CHECK_THAT(r.output,
               Catch::Contains("cannot write /nonexistent_dir/acc.hdf5") && !Catch::Contains("theta 0.5 done"));
    // A run ends exactly at --t-end or is refused with the nearest valid choices.
    const std::string run_dir = test::scratch_path("cli_t_end");
    r = run_grove("run " + in + " -o " + run_dir + " --engine tree-cpu --dt 0.4 --t-end 1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("not a whole number of --dt steps") && Catch::Contains("--t-end 0.8 or 1.2"));
    r = run_grove("run " + in + " -o " + run_dir + " --engine tree-cpu --dt 1e-20 --t-end 1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("choose a larger step"));
    // A temporary file that a killed writer left is removed by the next write of the same file.
    const std::string stale = test::scratch_path("stale_out.hdf5");
    std::ofstream(stale + ".tmp.999999999") << "partial";
    r = run_grove("forces " + in + " --engine tree-cpu -o " + stale);
    CHECK(r.status == 0);
    CHECK_FALSE(std::ifstream(stale + ".tmp.999999999").good());
    // One theta: no power law to fit, and it says so rather than printing nan.
    r = run_grove("accuracy " + in + " --engine tree-cpu --theta 0.5 -o " + test::scratch_path("one_theta.hdf5"));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains("no power-law fit") && !Catch::Contains("nan"));
    // --gpus: device numbers, for the direct engine on the GPU only.
    r = run_grove("forces " + in + " --engine direct --gpus 0,x -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("--gpus takes device numbers"));
    r = run_grove("forces " + in + " --engine tree-cpu --gpus 0 -o " + test::scratch_path("x.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("--gpus is for the direct-gpu engine (this run uses tree-cpu)"));
    r = run_grove("run " + in + " -o " + test::scratch_path("cli_gpus") +
                  " --integrator hermite --engine direct-cpu --gpus 0 --t-end 1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("the Hermite integrators compute on one GPU"));
    r = run_grove("frobnicate");
    CHECK(r.status == 2);
    CHECK(run_grove("forces --help").status == 0);
}

TEST_CASE("yt opens a grove snapshot as a Gadget HDF5 dataset", "[cli][yt]")
{
    // Debian's python3-yt lives with /usr/bin/python3; the README's setup installs it.
    if (!test::python_has("yt")) GROVE_SKIP_TEST("yt is not installed for /usr/bin/python3");
    ParticleSet p = test::random_particles(200, 17);
    for (std::size_t i = 0; i < p.size(); ++i) p.type[i] = static_cast<std::uint8_t>(1 + i % 3);
    p.units = gadget_units();
    const std::string path = test::scratch_path("yt.hdf5");
    write_snapshot(path, p);
    const auto r = run_command("/usr/bin/python3 -c \"import yt; yt.set_log_level(50); ds = yt.load('" + path +
                               "'); print(type(ds).__name__); ad = ds.all_data(); "
                               "print(int(ad['all', 'particle_mass'].size))\"");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains("GadgetHDF5Dataset"));
    CHECK_THAT(r.output, Catch::Contains("200"));
}

TEST_CASE("grove bench step times leapfrog steps on the CPU tree and reports what reuse costs", "[cli][bench]")
{
    for (const char* k : {"1", "3"}) {
        INFO("rebuild every " << k);
        const auto r =
            run_grove(std::string("bench step --engine tree-cpu --model plummer -n 3000 --steps 3 --warmup 1 "
                                  "--sample 200 --rebuild-every ") +
                      k + " 2>&1");
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Catch::Contains("| phase | where | ms per step | slowest step |") &&
                                 Catch::Contains("| sort | host |") && Catch::Contains("| integration | host |"));
        CHECK_THAT(r.output, Catch::Contains(std::string("| plummer | 3000 | theta 0.5 | ") + k + " | tree-cpu | **"));
        // The whole step's mean and slowest: a step is no faster than the mean of all.
        const auto row = r.output.find("| whole step | | ");
        REQUIRE(row != std::string::npos);
        double mean = 0, slowest = 0;
        REQUIRE(std::sscanf(r.output.c_str() + row, "| whole step | | %lf | %lf |", &mean, &slowest) == 2);
        CHECK(mean > 0);
        CHECK(slowest >= mean * (1 - 1e-3)); // both printed to 1 microsecond
    }
    // Particles in the tree's order between steps (the default) or in the model's: the same
    // energy error and force errors (every column after the timings).
    auto accuracy_columns = [](const std::string& order) {
        const auto r = run_grove("bench step --engine tree-cpu --model plummer -n 3000 --steps 3 --warmup 1 "
                                 "--sample 200 --particle-order " +
                                 order + " 2>&1");
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Catch::Contains("particles between steps in the " +
                                             std::string(order == "tree" ? "tree's" : "model's") + " order"));
        const auto row = r.output.find("| plummer | 3000 |");
        REQUIRE(row != std::string::npos);
        std::string line = r.output.substr(row, r.output.find('\n', row) - row);
        for (int column = 0; column < 13; ++column) line = line.substr(line.find('|', 1)); // timings, memory
        return line;
    };
    const std::string tree_order = accuracy_columns("tree");
    CHECK(tree_order.size() > 20);
    CHECK(tree_order == accuracy_columns("caller"));
    CHECK_THAT(run_grove("bench step --engine tree-cpu -n 100 --particle-order morton 2>&1").output,
               Catch::Contains("--particle-order takes tree or caller"));
    const auto relative = run_grove("bench step --engine tree-cpu --model plummer -n 3000 --steps 2 --warmup 1 "
                                    "--sample 200 --mac relative --alpha 2e-3 2>&1");
    CHECK_THAT(relative.output, Catch::Contains("| plummer | 3000 | alpha 0.002 | 1 | tree-cpu | **"));
    const auto bounded = run_grove("bench step --engine tree-cpu --model plummer -n 3000 --steps 2 --warmup 1 "
                                   "--sample 200 --mac relative --alpha 2e-3 --theta-max 0.7 2>&1");
    CHECK_THAT(bounded.output, Catch::Contains("| plummer | 3000 | alpha 0.002 theta-max 0.7 | 1 | tree-cpu | **"));
    const auto block = run_grove("bench step --engine tree-cpu --model plummer -n 3000 --steps 2 --warmup 1 "
                                 "--sample 200 --timestep block --dt 0.0625 --eta 0.01 2>&1");
    CHECK(block.status == 0);
    CHECK_THAT(block.output, Catch::Contains("particles per bin") && Catch::Contains("| plummer | 3000 | theta 0.5"));
    CHECK(run_grove("bench step --engine tree-cpu -n 100 --timestep blocks 2>&1").status == 1);
    CHECK_THAT(run_grove("bench step --engine tree-cpu -n 100 --mac relative --alpha 3 2>&1").output,
               Catch::Contains("alpha must lie in (0, 1]"));
    CHECK(run_grove("bench step --engine tree-cpu -n 1 2>&1").status == 1);
    CHECK_THAT(run_grove("bench step --engine tree-cpu --model disk -n 100 2>&1").output,
               Catch::Contains("--model takes plummer, galaxy or uniform"));
}

TEST_CASE("work that cannot fit is refused before it starts, and forces that overflow are not written", "[cli]")
{
    // Work that cannot fit in memory is refused with the numbers before it starts, naming the
    // largest N that would fit.
    auto r = run_grove("ic plummer -n 1000000000000 -o " + test::scratch_path("huge.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("needs about") && Catch::Contains("can be used here") &&
                             Catch::Contains("largest N that fits"));
    // A file whose header claims more than fits: grove forces plans read, tree and write at once.
    const std::string claims = test::scratch_path("claims_3e9.hdf5");
    test::write_claiming(claims, {0, 300000000000ull, 0, 0, 0, 0});
    r = run_grove("forces " + claims + " --engine tree-cpu -o " + test::scratch_path("claims_out.hdf5"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("grove forces on " + claims) && Catch::Contains("700 bytes each"));
    // Forces that overflow (a G no model needs) stop the command instead of writing inf or NaN.
    const std::string overflow_out = test::scratch_path("overflow_forces.hdf5");
    std::remove(overflow_out.c_str());
    const std::string close_pair = test::scratch_path("close_pair.hdf5");
    {
        ParticleSet pair;
        pair.resize(2);
        pair.mass << 1.0, 1.0;
        pair.pos.col(1) << 1e-3, 0, 0;
        write_snapshot(close_pair, pair);
    }
    r = run_grove("forces " + close_pair + " --engine tree-cpu -G 1e308 -o " + overflow_out);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("non-finite"));
    CHECK_FALSE(std::ifstream(overflow_out).good());
}

TEST_CASE("a GPU memory limit is planned against before anything starts, and sizes are read with units", "[cli]")
{
    // The device side of the plan: a tree-gpu job that cannot fit --gpu-memory is refused at once,
    // with the numbers and the largest N that would fit, with or without a GPU here.
    const auto started = std::chrono::steady_clock::now();
    auto r = run_grove("bench step --engine tree-gpu -n 1000000 --gpu-memory 300M 2>&1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("grove bench step needs about") && Catch::Contains("of GPU memory") &&
                             Catch::Contains("room for the interaction lists") &&
                             Catch::Contains("largest N that fits is about"));
    const std::string in = test::scratch_path("gpu_plan_in.hdf5");
    write_snapshot(in, make_plummer(1000, 3));
    r = run_grove("run " + in + " --engine tree-gpu --gpu-memory 100M -o " + test::scratch_path("gpu_plan_run") +
                  " --t-end 0.1 --dt 0.01 2>&1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("grove run needs about") && Catch::Contains("largest N that fits is about 0"));
    r = run_grove("forces " + in + " --engine tree-gpu --gpu-memory 1K -o " + test::scratch_path("gpu_plan_out.hdf5") +
                  " 2>&1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("of GPU memory"));
    CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() < 10);
    // Sizes: a number with K, M, G or T; anything else is refused naming the option.
    for (const char* bad : {"12Q", "G", "-1G", "0"}) {
        r = run_grove(std::string("bench step --engine tree-cpu -n 1000 --list-memory ") + bad + " 2>&1");
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Catch::Contains("--list-memory takes a size"));
    }
    // A list budget of a few groups on the CPU: the run works, in batches.
    r = run_grove("bench step --engine tree-cpu -n 3000 --steps 2 --warmup 0 --list-memory 4K 2>&1");
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains("memory: host"));
}

TEST_CASE("grove convert writes other formats, and every command reads them with --units", "[cli][formats]")
{
    const std::string in = test::data_path("galaxy_16k.hdf5");
    const std::string tipsy = test::scratch_path("cli_galaxy.tipsy"), g2 = test::scratch_path("cli_galaxy.g2");
    auto r = run_grove("convert " + in + " -o " + tipsy + " 2>&1");
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Catch::Contains("(hdf5)") && Catch::Contains("(tipsy)"));
    REQUIRE(run_grove("convert " + tipsy + " -o " + g2 + " --units gadget 2>&1").status == 0);
    // The tipsy file read in GADGET's units gives the forces of the HDF5 file to float rounding.
    // (By the direct sum: a tree's frame moves with its particles' box, so the float positions
    // would get other cells, and the tree's error.)
    const std::string from_hdf5 = test::scratch_path("cli_forces_hdf5.hdf5"),
                      from_tipsy = test::scratch_path("cli_forces_tipsy.hdf5");
    REQUIRE(run_grove("forces " + in + " --engine direct-cpu --eps 0.1 -o " + from_hdf5 + " 2>&1").status == 0);
    REQUIRE(run_grove("forces " + tipsy + " --units gadget --engine direct-cpu --eps 0.1 -o " + from_tipsy + " 2>&1")
                .status == 0);
    const ParticleSet a = read_snapshot(from_hdf5), b = read_snapshot(from_tipsy);
    CHECK(b.units.G == Approx(a.units.G));
    REQUIRE(a.size() == b.size());
    CHECK((a.acc - b.acc).norm() < 1e-4 * a.acc.norm()); // same IDs, types apart: the halo's order is kept
    // What cannot be done is refused in one line.
    CHECK(run_grove("convert " + in + " -o " + test::scratch_path("cli_galaxy.xyz") + " 2>&1").status == 1);
    r = run_grove("convert " + in + " -o " + test::scratch_path("cli_galaxy.dat") + " --format fits 2>&1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("tipsy"));
    r = run_grove("info " + tipsy);
    CHECK_THAT(r.output, Catch::Contains("(tipsy)") && Catch::Contains("assumed"));
    r = run_grove("info " + tipsy + " --units gadget");
    CHECK_THAT(r.output, Catch::Contains("gadget (G = 43007") && !Catch::Contains("assumed"));
    r = run_grove("forces " + tipsy + " --units furlongs --engine tree-cpu -o " + from_tipsy + " 2>&1");
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains("--units"));
}
