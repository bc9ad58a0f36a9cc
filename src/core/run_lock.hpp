// One writer per run directory: a lock file, locked by the kernel (flock) for as long as its owner
// holds it open, and holding the owner's process id for the messages. A second run into the
// directory is refused while the owner lives; the lock of a process that is gone (killed, machine
// crashed) is free, and is taken over with a notice. Temporary files that such a process left
// behind are removed then too.
#pragma once

#include <string>

namespace grove {

class RunLock {
  public:
    // Throws std::runtime_error naming the directory and the owner's pid when it is held.
    explicit RunLock(const std::string& directory);
    ~RunLock();
    RunLock(const RunLock&) = delete;
    RunLock& operator=(const RunLock&) = delete;

    // Nonempty when a stale lock was taken over (a line for the user).
    const std::string& notice() const { return notice_; }

  private:
    std::string path_;
    std::string notice_;
    int fd_ = -1; // the open lock file, whose flock is the lock
};

} // namespace grove
