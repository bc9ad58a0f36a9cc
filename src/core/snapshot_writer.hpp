// Snapshots written in the background: the writer takes its own copy of the particles and the
// caller goes on; at most one write is in flight (the next one waits for it), and a write that
// failed is rethrown by the next call, so a failure still stops a run. HDF5 is not thread-safe
// here, so every other HDF5 call of the process must wait() first.
#pragma once

#include <string>

#include "core/background_task.hpp"
#include "core/particles.hpp"

namespace grove {

class SnapshotWriter {
  public:
    // reserve_core: the writer thread gets a core of its own while the writer lives: the calling
    // thread's OpenMP team shrinks by one (where it has more than two), since an OpenMP loop waits
    // for its slowest thread and one thread sharing a core with the writer slowed every host phase
    // of a force engine.
    explicit SnapshotWriter(bool reserve_core = false);
    SnapshotWriter(const SnapshotWriter&) = delete;
    SnapshotWriter& operator=(const SnapshotWriter&) = delete;
    ~SnapshotWriter(); // waits for the write in flight; its error, if any, is lost

    // Starts writing `particles` to `path` (write_snapshot: a temporary name, renamed when done)
    // after the previous write has finished. Throws that write's error, if it failed.
    void write(const std::string& path, const ParticleSet& particles);
    // The same without a copy: the per-particle arrays move into the writer (the set keeps its
    // time, units and parameters, and no particles) until give_back() returns them after the write.
    // For a caller that does not touch them meanwhile (a run whose state lives on a device), for
    // which the copy would be the largest thing it holds.
    void write_borrowed(const std::string& path, ParticleSet& particles);
    // Waits for a borrowed write and returns its arrays to `particles`; then throws the write's
    // error, if it failed. Nothing where none is borrowed.
    void give_back(ParticleSet& particles);
    // Starts seal_snapshot(temporary, path) (a file that processes wrote, put on the disk and
    // renamed) after the previous write has finished. Throws that write's error, if it failed.
    void seal(const std::string& temporary, const std::string& path);
    // Waits for the write in flight; throws its error, if it failed.
    void wait();

    // Seconds the caller spent copying and waiting, and the writer thread spent writing.
    double copy_seconds() const { return copy_seconds_; }
    double wait_seconds() const { return wait_seconds_; }
    double write_seconds() const { return write_seconds_; } // read after wait()

  private:
    void start_thread(const std::string& path); // the write of copy_
    template <class Write> void in_background(Write&& write);
    ParticleSet copy_;      // what the thread in flight writes
    bool borrowed_ = false; // copy_'s arrays are a caller's (write_borrowed)
    double copy_seconds_ = 0, wait_seconds_ = 0, write_seconds_ = 0;
    int threads_before_ = 0; // the OpenMP team size before a reservation, 0 without one
    BackgroundTask task_;    // the writes, one at a time; last, so that it ends first (its job reads copy_)
};

} // namespace grove
