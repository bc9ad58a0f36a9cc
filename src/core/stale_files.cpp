#include "core/stale_files.hpp"

#include <signal.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace grove {

bool process_alive(long pid)
{
    return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

void remove_stale_temporaries(const std::string& directory, const std::string& prefix)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(directory.empty() ? "." : directory, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        const auto tmp = name.rfind(".tmp.");
        if (tmp == std::string::npos) continue;
        char* end = nullptr;
        const long pid = std::strtol(name.c_str() + tmp + 5, &end, 10);
        if (end && *end == '\0' && !process_alive(pid)) fs::remove(entry.path(), ec);
    }
}

} // namespace grove
