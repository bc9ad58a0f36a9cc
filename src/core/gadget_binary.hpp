// GADGET's own binary snapshots (Springel 2005, GADGET-2 user guide section 6), as MAGI, GalIC and
// DICE write them: Fortran records (a 4-byte length before and after each block) of a 256-byte
// header (npart[6], massarr[6], time, redshift, flags, npartTotal[6], num_files, ...), then the
// blocks POS, VEL, ID and MASS (the particles of types whose massarr is 0), particles ordered by
// type; gas blocks after those are ignored. Format 2 puts before each block a record of its
// 4-letter name and length. Positions and velocities are floats or doubles, IDs 32 or 64 bits (the
// reader takes them from the blocks' lengths), either byte order (from the first record's length).
// No units in the file: the reader takes the caller's (GADGET's kpc, km/s, 1e10 Msun by default).
#pragma once

#include <cstdint>
#include <string>

#include "core/particles.hpp"

namespace grove {

struct GadgetBinaryOptions {
    int format = 1;                // 1, or 2 (with block names)
    bool double_precision = false; // positions, velocities and masses as doubles
};

// A snapshot that GADGET split over files BASE.0 ... BASE.K-1 (num_files > 1) is read whole from the
// name of any of them. Throws std::runtime_error naming the file for a file that is not GADGET
// binary, records whose lengths do not match, files whose counts do not add up to the header's
// totals, or particle data that is not valid.
ParticleSet read_gadget_binary(const std::string& path, const Units& units);

// 1 or 2 where the file starts as GADGET binary of that format does (in either byte order), else 0.
int gadget_binary_format(const std::string& path);

// The header's total (of all its files; 0 where the file is not GADGET binary).
std::uint64_t gadget_binary_particle_count(const std::string& path);

// Writes atomically, particles ordered by type; IDs in 64 bits where one needs them. Throws
// std::runtime_error naming the path.
void write_gadget_binary(const std::string& path, const ParticleSet& particles, const GadgetBinaryOptions& options);

} // namespace grove
