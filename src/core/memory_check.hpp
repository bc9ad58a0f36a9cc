// What the machine can give: large allocations are estimated first and refused with the numbers,
// rather than failing half-way (or, with overcommit, being killed later). A job's whole plan is
// core/memory_plan.hpp.
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

// Throws std::runtime_error "<what> needs about X GB; Y GB can be used here" when `bytes` exceeds
// the usable memory. Does nothing when that is unknown.
void check_memory(std::uint64_t bytes, const std::string& what);

} // namespace grove
