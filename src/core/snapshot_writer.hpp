// Snapshots written in the background: the caller hands over its own copy of the particles and
// goes on; at most one write is in flight (the next one waits for it), and a write that failed
// is rethrown by the next call, so a failure still stops a run. HDF5 is not thread-safe here, so
// every other HDF5 call of the process must wait() first.
#pragma once

#include <exception>
#include <string>
#include <thread>

#include "core/particles.hpp"

namespace grove {

class SnapshotWriter {
  public:
    SnapshotWriter() = default;
    SnapshotWriter(const SnapshotWriter&) = delete;
    SnapshotWriter& operator=(const SnapshotWriter&) = delete;
    ~SnapshotWriter(); // waits for the write in flight; its error, if any, is lost

    // Starts writing `particles` to `path` (write_snapshot: a temporary name, renamed when done)
    // after the previous write has finished. Throws that write's error, if it failed.
    void write(const std::string& path, ParticleSet particles);
    // Waits for the write in flight; throws its error, if it failed.
    void wait();

  private:
    std::thread thread_;
    std::exception_ptr error_;
};

} // namespace grove
