// grove convert IN -o OUT [--format F]: a particle file in another format (HDF5, tipsy, GADGET
// binary 1 or 2; core/snapshot_formats.hpp), the input's format found from its content.
#include <cstdio>
#include <string>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/snapshot_formats.hpp"

namespace grove {

int command_convert(int argc, char** argv)
{
    cxxopts::Options options(
        "grove convert",
        "Write a particle file in another format: GADGET/SWIFT HDF5 (grove's own), tipsy (standard or Bonsai's\n"
        "with 64-bit IDs) or GADGET binary format 1 or 2. The input's format comes from its content (HDF5,\n"
        "tipsy in either byte order, GADGET binary 1 or 2, a split HDF5 snapshot from any of its files).\n"
        "Tipsy and GADGET binary hold no units: --units says which an input of theirs is in (default: G = 1\n"
        "for tipsy, GADGET's kpc, km/s, 1e10 Msun for GADGET binary), and they hold floats unless --double.");
    options.add_options()("file", "Input particle file", cxxopts::value<std::string>())(
        "o,output", "Output file (required)", cxxopts::value<std::string>())(
        "format",
        "hdf5, tipsy, gadget1 or gadget2 (default: from the output's extension: .hdf5 .h5, .tipsy "
        ".std .bin, .gadget .g1, .g2)",
        cxxopts::value<std::string>())("native", "tipsy: this machine's byte order instead of the standard big-endian")(
        "no-ids", "tipsy: standard records (eps and phi) instead of Bonsai's 64-bit IDs")(
        "double", "GADGET binary: positions, velocities and masses as doubles");
    add_input_units_option(options);
    options.parse_positional({"file"});
    options.positional_help("IN -o OUT [--format hdf5|tipsy|gadget1|gadget2]");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    const auto& r = *parsed;
    if (!r.count("file")) throw std::runtime_error("missing input file (grove convert IN -o OUT)");
    if (!r.count("output")) throw std::runtime_error("missing output path (-o OUT)");
    const std::string input = r["file"].as<std::string>(), output = r["output"].as<std::string>();
    refuse_output_over_input(output, input);
    std::optional<SnapshotFormat> format = snapshot_format_of_name(output);
    try {
        if (r.count("format")) format = snapshot_format_by_name(r["format"].as<std::string>());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(std::string("--") + e.what());
    }
    if (!format)
        throw std::runtime_error("--format is needed: " + output +
                                 " has no extension that names one (.hdf5, .tipsy, .g1, .g2 ...)");
    const std::optional<Units> units = input_units(r);
    check_writable(output);
    const SnapshotFormat from = snapshot_format(input);
    const ParticleSet p = read_snapshot(input, units);
    WriteFormatOptions o;
    o.tipsy.big_endian = !r.count("native");
    o.tipsy.with_ids = !r.count("no-ids");
    o.double_precision = r.count("double") > 0;
    write_snapshot_as(output, p, *format, o);
    std::printf("wrote %zu particles from %s (%s) to %s (%s)\n", p.size(), input.c_str(), snapshot_format_name(from),
                output.c_str(), snapshot_format_name(*format));
    return 0;
}

} // namespace grove
