// Snapshots in the GADGET/SWIFT HDF5 layout (Springel 2005; SWIFT's gravity_io), so that yt,
// pynbody, h5py scripts and other codes read them:
//   /Header         NumPart_ThisFile, NumPart_Total (uint64[6]), NumPart_Total_HighWord, MassTable,
//                   Time, Redshift, BoxSize, NumFilesPerSnapshot, Flag_*, Dimension
//   /Units          UnitLength_in_cm, UnitMass_in_g, UnitVelocity_in_cm_per_s, UnitTime_in_s
//   /PartTypeN      Coordinates, Velocities, Masses, ParticleIDs [, Potential, Acceleration]
//   /RunParameters  every option that made the file, as string attributes
// Writes go to a temporary name in the same directory and are renamed when complete.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/particles.hpp"

namespace grove {

// Writes `particles` to `path` atomically. Throws std::runtime_error naming the path if it cannot
// be written; an existing file under `path` is then left untouched.
void write_snapshot(const std::string& path, const ParticleSet& particles);

// A snapshot that processes write in turn, each the rows of its particles (a run on domains writes
// its files so, parallel/domain_files.hpp), under a name the caller renames when all are done:
// create_snapshot makes the file, with `header`'s time, units and run parameters and every dataset
// sized for counts[t] particles of type t (with forces or without); write_snapshot_rows then writes
// `part`'s particles of each type t, in their order, from row first[t] of that type's datasets
// (forces only into a file made with them). Both leave the file closed but not yet on the disk:
// seal_snapshot puts it there and renames it into place (removing it where that fails). Throw
// std::runtime_error naming the path.
using TypeCounts = std::array<std::uint64_t, kNumParticleTypes>;
void create_snapshot(const std::string& path, const ParticleSet& header, const TypeCounts& counts, bool forces);
void write_snapshot_rows(const std::string& path, const ParticleSet& part, const TypeCounts& first);
void seal_snapshot(const std::string& temporary, const std::string& path);

// Reads a snapshot written by grove or a GADGET-style file from another code (single or double
// precision, masses in MassTable, optional datasets missing; a snapshot split over files
// BASE.0.hdf5 ... BASE.K.hdf5 whole, from any of them). Validates it (ParticleSet::validate) and
// throws std::runtime_error naming the file and the problem. Other formats: snapshot_formats.hpp,
// whose read_snapshot takes any of them.
ParticleSet read_hdf5_snapshot(const std::string& path);

// The particles [begin, end) of an HDF5 snapshot in file order (its PartType groups one after
// another; end past the last is the last), read alone through hyperslabs: each rank of a run on
// domains reads its share. A snapshot split over files is read whole and cut. Validated as
// read_hdf5_snapshot validates (IDs unique within the part).
ParticleSet read_hdf5_snapshot_part(const std::string& path, std::uint64_t begin, std::uint64_t end);

// The number of particles an HDF5 snapshot holds, without reading them: its header's counts (of
// all its files), or where it has none the lengths of its Coordinates. Throws std::runtime_error
// naming the file for counts that overflow (a damaged header) or a file that cannot be opened.
std::uint64_t hdf5_particle_count(const std::string& path);

} // namespace grove
