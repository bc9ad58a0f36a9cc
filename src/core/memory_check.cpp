#include "core/memory_check.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace grove {

std::uint64_t available_memory_bytes()
{
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::uint64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

void check_memory(std::uint64_t bytes, const std::string& what)
{
    const std::uint64_t available = available_memory_bytes();
    if (available == 0 || bytes <= available) return;
    char text[160];
    std::snprintf(text, sizeof text, " needs about %.3g GB; this machine has %.3g GB available", bytes * 1e-9,
                  available * 1e-9);
    throw std::runtime_error(what + text);
}

} // namespace grove
