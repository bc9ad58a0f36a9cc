#include "core/memory_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace grove {

namespace {

// The number in a cgroup file ("max" and missing files: none).
bool read_number(const std::string& path, std::uint64_t& value)
{
    std::ifstream in(path);
    std::string text;
    if (!(in >> text) || text == "max") return false;
    try {
        value = std::stoull(text);
    } catch (const std::exception&) {
        return false;
    }
    return true;
}

// The tightest limit less use over the group at `dir` and its parents up to `root`.
std::uint64_t room_in(std::string dir, const std::string& root, const char* limit_file, const char* usage_file)
{
    std::uint64_t room = 0;
    bool any = false;
    for (;;) {
        std::uint64_t limit = 0, used = 0;
        // v1 reports "no limit" as a number near 2^63.
        if (read_number(dir + "/" + limit_file, limit) && limit < (1ull << 60)) {
            read_number(dir + "/" + usage_file, used);
            const std::uint64_t left = limit > used ? limit - used : 1;
            room = any ? std::min(room, left) : left;
            any = true;
        }
        if (dir.size() <= root.size()) break;
        dir = dir.substr(0, dir.rfind('/'));
    }
    return any ? room : 0;
}

} // namespace

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

std::uint64_t peak_resident_bytes()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
    return 0;
}

std::uint64_t cgroup_room_bytes(const std::string& proc_cgroup, const std::string& root)
{
    std::istringstream lines(proc_cgroup);
    std::string line;
    while (std::getline(lines, line)) {
        // "hierarchy-id:controllers:path": v2 is "0::/path", v1's memory line names "memory".
        const auto first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
        const std::string trimmed = path == "/" ? "" : path;
        if (line.compare(0, first, "0") == 0 && controllers.empty())
            return room_in(root + trimmed, root, "memory.max", "memory.current");
        std::istringstream names(controllers);
        std::string name;
        while (std::getline(names, name, ','))
            if (name == "memory")
                return room_in(root + "/memory" + trimmed, root + "/memory", "memory.limit_in_bytes",
                               "memory.usage_in_bytes");
    }
    return 0;
}

std::uint64_t usable_memory_bytes()
{
    std::ifstream in("/proc/self/cgroup");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::uint64_t available = available_memory_bytes(), room = cgroup_room_bytes(text);
    if (available == 0) return room;
    return room == 0 ? available : std::min(available, room);
}

} // namespace grove
