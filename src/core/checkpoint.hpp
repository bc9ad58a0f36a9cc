// Run checkpoints: a snapshot in double precision (so any tool can read it) plus a /Checkpoint
// group with what a bit-identical restart needs: the command line, the loop position, the
// particles' order in memory, the reference energy, the diagnostics file's length, and the
// integrator's own state as the named fields and counters it lists (core/integrator_state.hpp).
#pragma once

#include <cstdint>

#include <optional>
#include <string>
#include <vector>

#include "core/integrator_state.hpp"
#include "core/particles.hpp"

namespace grove {

struct Checkpoint {
    ParticleSet particles;         // positions, velocities, masses, accelerations, potentials
    std::vector<std::string> argv; // the run's command line after "grove run"
    long long step = 0;            // intervals done
    double next_snapshot = 0;
    int snapshot_index = 0;
    double reference_energy = 0;
    double start_time = 0;           // the run's first time (t of its initial snapshot)
    bool has_start_time = false;     // absent in checkpoints from before it was kept
    long long diagnostics_bytes = 0; // diagnostics.txt is cut back to this length on restart
    IntegratorState integrator;      // whatever the integrator lists (empty for leapfrog)
};

// A checksum of everything a restart depends on (the particles in memory order with their forces,
// time, units and run parameters, the run's counters and the integrator's state). Written with
// every checkpoint; read_checkpoint refuses one that does not match.
std::uint64_t checkpoint_checksum(const Checkpoint& c);

// Written under a temporary name and renamed, so a crash while writing keeps the previous one.
void write_checkpoint(const std::string& path, const Checkpoint& c);

// A checkpoint that processes write in turn (a run on domains, parallel/domain_files.hpp), on a
// snapshot made by create_snapshot and write_snapshot_rows: add_checkpoint_group adds c's group
// (all but its particles, whose time, units and run parameters c.particles gives) with the memory
// order sized for `count` particles, which write_memory_order_rows fills from row `first` with
// each process's IDs; seal_checkpoint writes the checksum last and puts the file on the disk. The checksum is the
// particles' arrays (pos, vel, mass, acc, pot as matrices, then the IDs and the types) and then what
// add_checkpoint_record adds of c.
void add_checkpoint_group(const std::string& path, const Checkpoint& c, std::size_t count);
void write_memory_order_rows(const std::string& path, const std::vector<std::uint64_t>& ids, std::size_t first);
void seal_checkpoint(const std::string& path, std::uint64_t checksum);
class Checksum;
void add_checkpoint_record(Checksum& sum, const Checkpoint& c);
Checkpoint read_checkpoint(const std::string& path);
// A checkpoint's all but its particles (c.particles empty), and where `sealed` is given the
// checksum it was sealed with (none for one written before checksums); for a restart on domains,
// whose ranks each read a share of the particles (parallel/domain_files.hpp), and for a restart
// that needs its command line before it reads the rest.
Checkpoint read_checkpoint_record(const std::string& path, std::optional<std::uint64_t>* sealed = nullptr);
// Rows first .. first + rows - 1 of the memory order (the IDs in the order the run held them).
std::vector<std::uint64_t> read_memory_order_rows(const std::string& path, std::size_t first, std::size_t rows);
// Throws std::runtime_error naming the path where a checkpoint's checksum is not `sum`.
void check_sealed(const std::string& path, std::optional<std::uint64_t> sealed, std::uint64_t sum);
// Where a checkpoint's run stands, read from its attributes alone (no particles, no checksum):
// the intervals done, and the tick within the next one where it was written there (else 0).
// Nothing for an HDF5 file that is not a checkpoint.
struct CheckpointPlace {
    long long step = 0, tick = 0;
};
std::optional<CheckpointPlace> checkpoint_place(const std::string& path);

} // namespace grove
