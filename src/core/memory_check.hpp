// What this process can be given: the system's available memory and its cgroup's room. The plans
// that check jobs against them are core/memory_plan.hpp.
#pragma once

#include <cstdint>
#include <string>

namespace grove {

// Memory the system reports as available now (MemAvailable), or its physical memory where that is
// not reported; 0 if neither is known.
std::uint64_t available_memory_bytes();

// What this process's control group still allows (its limit less its use, the tightest of the
// group and its parents; cgroup v2 or v1), read from `proc_cgroup` (the text of /proc/self/cgroup)
// and the hierarchy under `root`. 0 where there is no limit or it is unknown.
std::uint64_t cgroup_room_bytes(const std::string& proc_cgroup, const std::string& root = "/sys/fs/cgroup");

// The smaller of the two for this process; 0 if neither is known.
std::uint64_t usable_memory_bytes();

// The most resident memory this process has held so far (VmHWM; pinned buffers included), 0 where
// it is not reported.
std::uint64_t peak_resident_bytes();

} // namespace grove
