// grove export FILE -o OUT.txt: the particles as text, for programs that read no HDF5 (the legacy
// GRAPE clients of tests/grape/clients, plotting tools): the count on the first line, then one
// line per particle, "m x y z vx vy vz" with 17 significant digits, in the snapshot's order.
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"

namespace grove {

namespace {

int run_export(const std::string& input, const std::string& output)
{
    const ParticleSet p = read_snapshot(input);
    const std::string temporary = output + ".tmp." + std::to_string(::getpid());
    std::FILE* f = std::fopen(temporary.c_str(), "w");
    if (!f) throw std::runtime_error("cannot write " + output);
    bool ok = std::fprintf(f, "%zu\n", p.size()) > 0;
    for (std::size_t i = 0; ok && i < p.size(); ++i) {
        const auto k = static_cast<Eigen::Index>(i);
        ok = std::fprintf(f, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", p.mass[k], p.pos(0, k), p.pos(1, k),
                          p.pos(2, k), p.vel(0, k), p.vel(1, k), p.vel(2, k)) > 0;
    }
    ok = std::fflush(f) == 0 && ok;
    ok = ::fsync(::fileno(f)) == 0 && ok;
    ok = std::fclose(f) == 0 && ok;
    if (!ok) {
        std::remove(temporary.c_str()); // nothing half-written is left behind
        throw std::runtime_error("writing " + output + " failed (disk full?)");
    }
    std::filesystem::rename(temporary, output);
    std::printf("wrote %zu particles to %s\n", p.size(), output.c_str());
    return 0;
}

} // namespace

int command_export(int argc, char** argv)
{
    cxxopts::Options options("grove export", "Write a snapshot's particles as text: N on the first line, then\n"
                                             "\"m x y z vx vy vz\" per particle (17 digits), in the file's order.");
    options.add_options()("file", "Input snapshot (HDF5)", cxxopts::value<std::string>())(
        "o,output", "Output text file (required)", cxxopts::value<std::string>());
    options.parse_positional({"file"});
    options.positional_help("FILE -o OUT.txt");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    const auto& r = *parsed;
    if (!r.count("file")) throw std::runtime_error("missing input snapshot (grove export FILE -o OUT.txt)");
    if (!r.count("output")) throw std::runtime_error("missing output path (-o OUT.txt)");
    const std::string input = r["file"].as<std::string>(), output = r["output"].as<std::string>();
    refuse_output_over_input(output, input);
    check_writable(output);
    return run_export(input, output);
}

} // namespace grove
