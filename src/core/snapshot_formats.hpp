// The particle file formats grove reads and writes, told apart by their content: GADGET/SWIFT HDF5
// (snapshot.hpp; grove's own, with units, forces and run parameters), tipsy (tipsy_file.hpp) and
// GADGET binary formats 1 and 2 (gadget_binary.hpp). Every command reads its input through
// read_snapshot; `grove convert` writes any of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/gadget_binary.hpp"
#include "core/particles.hpp"
#include "core/tipsy_file.hpp"

namespace grove {

enum class SnapshotFormat { hdf5, tipsy, gadget1, gadget2 };

// "hdf5" | "tipsy" | "gadget1" | "gadget2"; throws std::invalid_argument naming them otherwise.
SnapshotFormat snapshot_format_by_name(const std::string& name);
const char* snapshot_format_name(SnapshotFormat format);

// The format of an existing file from its first bytes: the HDF5 signature, a GADGET header record
// (256 bytes, or the name HEAD), a tipsy header whose counts add up. Throws std::runtime_error
// naming the file where it is none of them or cannot be read.
SnapshotFormat snapshot_format(const std::string& path);

// The format a name asks for by its extension (.hdf5 .h5; .tipsy .std .bin; .gadget .g1; .g2), if any.
std::optional<SnapshotFormat> snapshot_format_of_name(const std::string& path);

// Reads any of the formats. Tipsy and GADGET binary files carry no units: `units` then gives
// them (default: Hénon units with G = 1 for tipsy, GADGET's kpc, km/s, 1e10 Msun for GADGET
// binary); an HDF5 file's own units are kept unless `units` is given.
ParticleSet read_snapshot(const std::string& path, const std::optional<Units>& units = std::nullopt);

// Particles [begin, end) of a file in its order: an HDF5 snapshot reads them alone
// (read_hdf5_snapshot_part), the other formats read whole and cut.
ParticleSet read_snapshot_part(const std::string& path, std::uint64_t begin, std::uint64_t end,
                               const std::optional<Units>& units = std::nullopt);

// The number of particles a file holds, from its header, without reading them.
std::uint64_t snapshot_particle_count(const std::string& path);

struct WriteFormatOptions {
    TipsyOptions tipsy;
    bool double_precision = false; // GADGET binary
};

// Writes atomically in the given format (HDF5: write_snapshot).
void write_snapshot_as(const std::string& path, const ParticleSet& particles, SnapshotFormat format,
                       const WriteFormatOptions& options = {});

} // namespace grove
