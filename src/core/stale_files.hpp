// Files that writers killed before they finished left behind: "NAME.tmp.PID" where no process
// PID runs any more. Removed before a new write of NAME (or a new run in a directory), so that a
// SIGKILL costs at most one stale file, and only until the next write.
#pragma once

#include <string>

namespace grove {

bool process_alive(long pid);

// Removes "<directory>/<prefix>*.tmp.PID" files whose PID is gone (prefix "" for all of them).
void remove_stale_temporaries(const std::string& directory, const std::string& prefix = "");

} // namespace grove
