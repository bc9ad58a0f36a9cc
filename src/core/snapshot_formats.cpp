#include "core/snapshot_formats.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/memory_plan.hpp"
#include "core/snapshot.hpp"

namespace grove {

SnapshotFormat snapshot_format_by_name(const std::string& name)
{
    if (name == "hdf5") return SnapshotFormat::hdf5;
    if (name == "tipsy") return SnapshotFormat::tipsy;
    if (name == "gadget1") return SnapshotFormat::gadget1;
    if (name == "gadget2") return SnapshotFormat::gadget2;
    throw std::invalid_argument("format must be hdf5, tipsy, gadget1 or gadget2, got '" + name + "'");
}

const char* snapshot_format_name(SnapshotFormat format)
{
    switch (format) {
    case SnapshotFormat::hdf5:
        return "hdf5";
    case SnapshotFormat::tipsy:
        return "tipsy";
    case SnapshotFormat::gadget1:
        return "gadget1";
    case SnapshotFormat::gadget2:
        return "gadget2";
    }
    return "?";
}

SnapshotFormat snapshot_format(const std::string& path)
{
    {
        std::error_code ec;
        if (!std::filesystem::exists(path, ec)) throw std::runtime_error(path + ": no such file");
        std::ifstream in(path, std::ios::binary);
        if (!in) throw std::runtime_error(path + ": cannot open the file");
        char signature[8] = {};
        in.read(signature, 8);
        if (in.gcount() == 8 && std::memcmp(signature, "\x89HDF\r\n\x1a\n", 8) == 0) return SnapshotFormat::hdf5;
    }
    const int gadget = gadget_binary_format(path);
    if (gadget == 1) return SnapshotFormat::gadget1;
    if (gadget == 2) return SnapshotFormat::gadget2;
    if (tipsy_particle_count(path) > 0) return SnapshotFormat::tipsy;
    throw std::runtime_error(path + ": not an HDF5 file, nor tipsy or GADGET binary (format 1 or 2): its first bytes "
                                    "are none of their headers");
}

std::optional<SnapshotFormat> snapshot_format_of_name(const std::string& path)
{
    const auto dot = path.rfind('.');
    if (dot == std::string::npos) return std::nullopt;
    const std::string ext = path.substr(dot + 1);
    if (ext == "hdf5" || ext == "h5") return SnapshotFormat::hdf5;
    if (ext == "tipsy" || ext == "std" || ext == "bin") return SnapshotFormat::tipsy;
    if (ext == "gadget" || ext == "g1") return SnapshotFormat::gadget1;
    if (ext == "g2") return SnapshotFormat::gadget2;
    return std::nullopt;
}

namespace {

// Planned from the header's count before the file is read (the HDF5 reader plans its own).
void plan_read(const std::string& path, std::uint64_t count)
{
    check_memory_plan(Workload::read, static_cast<std::size_t>(count),
                      "reading " + std::to_string(count) + " particles from " + path);
}

} // namespace

ParticleSet read_snapshot(const std::string& path, const std::optional<Units>& units)
{
    switch (snapshot_format(path)) {
    case SnapshotFormat::hdf5: {
        ParticleSet p = read_hdf5_snapshot(path);
        if (units) p.units = *units;
        return p;
    }
    case SnapshotFormat::tipsy:
        plan_read(path, tipsy_particle_count(path));
        return read_tipsy(path, units ? *units : nbody_units());
    case SnapshotFormat::gadget1:
    case SnapshotFormat::gadget2:
        plan_read(path, gadget_binary_particle_count(path));
        return read_gadget_binary(path, units ? *units : gadget_units());
    }
    throw std::logic_error("read_snapshot: unknown format");
}

ParticleSet read_snapshot_part(const std::string& path, std::uint64_t begin, std::uint64_t end,
                               const std::optional<Units>& units)
{
    if (snapshot_format(path) != SnapshotFormat::hdf5) return particle_range(read_snapshot(path, units), begin, end);
    ParticleSet p = read_hdf5_snapshot_part(path, begin, end);
    if (units) p.units = *units;
    return p;
}

std::uint64_t snapshot_particle_count(const std::string& path)
{
    switch (snapshot_format(path)) {
    case SnapshotFormat::hdf5:
        return hdf5_particle_count(path);
    case SnapshotFormat::tipsy:
        return tipsy_particle_count(path);
    case SnapshotFormat::gadget1:
    case SnapshotFormat::gadget2:
        return gadget_binary_particle_count(path);
    }
    return 0;
}

void write_snapshot_as(const std::string& path, const ParticleSet& p, SnapshotFormat format,
                       const WriteFormatOptions& options)
{
    switch (format) {
    case SnapshotFormat::hdf5:
        write_snapshot(path, p);
        return;
    case SnapshotFormat::tipsy:
        write_tipsy(path, p, options.tipsy);
        return;
    case SnapshotFormat::gadget1:
    case SnapshotFormat::gadget2:
        write_gadget_binary(path, p, {format == SnapshotFormat::gadget1 ? 1 : 2, options.double_precision});
        return;
    }
}

} // namespace grove
