// What a `grove run` writes into its directory: the lock that keeps a second run out, run.yml
// (every parameter used), diagnostics.txt (a line per logged step), snapshots (in the background)
// and checkpoints. Under mpirun the first rank alone writes; the others only count along.
#pragma once

#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/diagnostics.hpp"
#include "core/run_lock.hpp"
#include "core/snapshot_writer.hpp"
#include "parallel/communicator.hpp"

namespace grove {

class RunOutputs {
  public:
    // Creates the directory and takes its lock (writer only); a new run refuses a directory that
    // already holds one.
    RunOutputs(const std::string& dir, bool writer, bool restarting);
    bool writer() const { return writer_; }

    // run.yml, for a new run.
    void write_parameters(const ParticleSet& p, long long total_steps);
    // diagnostics.txt: cut back to what the checkpoint had seen and continued, or started with
    // the header lines (each ending in a newline), also on a restart that finds it missing or
    // shorter than the checkpoint recorded.
    void open_diagnostics(const Checkpoint* restart, const std::string& header);
    // One diagnostics line from `d` (which took compute_seconds to compute: the timing summary
    // counts it); returns the relative energy error against e0. `counts`: the integrator's columns
    // after the standard ones (Integrator::log_counts).
    double log(const Diagnostics& d, double compute_seconds, double time, long long step, double e0,
               double wall_seconds, const std::vector<std::pair<std::string, long long>>& counts = {});
    // From here on snapshots are written in the background, by a thread with a core of its own
    // (every rank leaves the core out, as the writer's does).
    void start_snapshot_writer();
    // The next snapshot_NNNN.hdf5, written by the background writer from its own copy.
    void snapshot(const ParticleSet& p);
    // The same on domains, every rank's `local` particles written by that rank in turn and no
    // rank holding more than its share (parallel/domain_files.hpp); every rank calls it.
    void snapshot_from_domains(const ParticleSet& local, const Communicator& comm);
    // The same from p's arrays, borrowed until give_back() (SnapshotWriter::write_borrowed).
    void snapshot_borrowed(ParticleSet& p);
    void give_back(ParticleSet& p);
    int snapshots() const { return snapshot_index_; }
    void set_snapshots(int index) { snapshot_index_ = index; }
    // checkpoint.hdf5, after the snapshots it counts are complete; c gets the snapshot count and
    // the diagnostics' length.
    void checkpoint(Checkpoint& c);
    // The same on domains, c.particles this rank's (every rank calls it).
    void checkpoint_from_domains(Checkpoint& c, const Communicator& comm);
    // Waits for the last snapshot.
    void finish();

    std::string path() const { return dir_; }
    double io_seconds() const { return io_seconds_; }
    double diagnostics_seconds() const { return diagnostics_seconds_; }
    const SnapshotWriter& snapshot_writer() const { return *snapshots_; }

  private:
    // The next snapshot's number taken (on every rank) and, on the writer, `write` of its path.
    void next_snapshot(const std::function<void(const std::string&)>& write);
    std::string dir_;
    bool writer_;
    std::optional<RunLock> lock_;
    std::ofstream diagnostics_;
    std::unique_ptr<SnapshotWriter> snapshots_; // with the core it reserves for its thread
    int snapshot_index_ = 0;
    double io_seconds_ = 0, diagnostics_seconds_ = 0;
};

} // namespace grove
