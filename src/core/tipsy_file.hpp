// Tipsy files, as ChaNGa, pynbody and Bonsai keep them: a header (time as a double; the counts
// nbodies, ndim, nsph, ndark, nstar as 32-bit integers; then 4 bytes of padding, which Bonsai's
// variant sets to 2), then the gas, dark and star particles as records of floats:
//   gas  (48 bytes): mass, pos[3], vel[3], rho, temp, hsmooth, metals, phi
//   dark (36 bytes): mass, pos[3], vel[3], eps, phi
//   star (44 bytes): mass, pos[3], vel[3], metals, tform, eps, phi
// Bonsai's variant keeps a 64-bit particle ID in the last 8 bytes of each dark and star record (in
// place of eps and phi). Standard files are big-endian (XDR); others are in the machine's order:
// the reader takes the order in which ndim is 3. Old files without the padding (a 28-byte header)
// are read too. Types: gas is GADGET type 0, dark 1 (halo), star 4 (stars); grove writes type 0 as
// gas, 1 and 5 as dark and 2, 3, 4 as star, so disk and bulge come back as stars. A tipsy file has
// no units: the reader takes the caller's. Positions, velocities and masses are floats.
#pragma once

#include <string>

#include "core/particles.hpp"

namespace grove {

struct TipsyOptions {
    bool big_endian = true; // standard tipsy (XDR); false: this machine's order
    bool with_ids = true;   // Bonsai's variant, with each dark and star particle's 64-bit ID
};

// Throws std::runtime_error naming the file for a header that is not tipsy's, counts that do not
// match the file's size, or particle data that is not valid (ParticleSet::validate).
ParticleSet read_tipsy(const std::string& path, const Units& units);

// The header's total, or 0 where the file does not start with a tipsy header in either order.
std::uint64_t tipsy_particle_count(const std::string& path);

// Writes atomically; throws std::runtime_error naming the path.
void write_tipsy(const std::string& path, const ParticleSet& particles, const TipsyOptions& options);

} // namespace grove
