// One writer per run directory: a lock file holding the owner's process id, created atomically.
// A second run into the directory is refused while the owner lives; a lock left by a process that
// is gone (killed, machine crashed) is taken over with a notice. Temporary files that such a
// process left behind are removed then too.
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
};

} // namespace grove
