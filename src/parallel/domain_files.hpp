// The files of a run on domains, written without gathering its particles anywhere: the IDs are
// cut into one range a rank (from every rank's sample of its own), each rank takes the particles
// of its range in ID order, and the ranks write their rows in turn into one file that the first
// rank made, then renames. The file is the one a process holding every particle writes (its
// particles of each type in ID order, and a checkpoint's memory order the ID order), so every
// tool reads it as before and a restart takes it on any number of ranks; no rank holds more than
// its share of it. The ranks need one file system, as their reading of the input does.
#pragma once

#include <string>

#include "core/checkpoint.hpp"
#include "core/particles.hpp"
#include "parallel/communicator.hpp"

namespace grove {

// This rank's share of the file: the particles of its range of IDs, in ID order (every rank's
// part of the set given as `local`). The ranges hold about equal counts.
ParticleSet share_in_id_order(const ParticleSet& local, const Communicator& comm);

// The snapshot of every rank's `local` particles at `path` (written under a temporary name and
// renamed when every rank's rows are in). Every rank calls it; a rank whose write fails throws
// std::runtime_error naming the path (and the job ends with it, parallel/communicator.hpp).
void write_snapshot_from_domains(const std::string& path, const ParticleSet& local, const Communicator& comm);
// The same but the last step: every rank's rows are in the temporary it returns, which the first
// rank seals (core/snapshot.hpp: seal_snapshot; a run's writer does it in the background).
std::string write_snapshot_rows_from_domains(const std::string& path, const ParticleSet& local,
                                             const Communicator& comm);

// The checkpoint of every rank's c.particles with c's record (the first rank's), as
// write_checkpoint writes it of the gathered set, checksum included. The integrator's state must
// hold no per-particle fields or arrays (the shared leapfrog's holds none): std::logic_error.
void write_checkpoint_from_domains(const std::string& path, const Checkpoint& c, const Communicator& comm);

// A checkpoint of a run on domains, read on any number of ranks: c.particles is this rank's share
// (share_in_id_order of a part of the file), the rest the whole record, its checksum checked as
// read_checkpoint checks it (std::runtime_error naming the path).
Checkpoint read_checkpoint_on_domains(const std::string& path, const Communicator& comm);

} // namespace grove
