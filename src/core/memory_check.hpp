// What the machine can give: large allocations are estimated first and refused with the numbers,
// rather than failing half-way (or, with overcommit, being killed later).
#pragma once

#include <cstdint>
#include <string>

namespace grove {

// Memory the system reports as available now (MemAvailable), or its physical memory where that is
// not reported; 0 if neither is known.
std::uint64_t available_memory_bytes();

// Throws std::runtime_error "<what> needs about X GB; this machine has Y GB available" when
// `bytes` exceeds the available memory. Does nothing when that is unknown.
void check_memory(std::uint64_t bytes, const std::string& what);

} // namespace grove
