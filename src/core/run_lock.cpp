#include "core/run_lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/stale_files.hpp"

namespace grove {

namespace {

namespace fs = std::filesystem;

// Removes temporary files of writers that are gone, and an unfinished checkpoint (only the
// lock's owner writes one).
void remove_leftovers(const fs::path& dir)
{
    remove_stale_temporaries(dir.string());
    std::error_code ec;
    fs::remove(dir / "checkpoint.hdf5.partial", ec);
}

} // namespace

RunLock::RunLock(const std::string& directory) : path_((fs::path(directory) / ".grove-run.lock").string())
{
    for (int attempt = 0; attempt < 2; ++attempt) {
        const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            const std::string pid = std::to_string(::getpid()) + "\n";
            const bool written = ::write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size());
            ::close(fd);
            if (!written) {
                fs::remove(path_);
                throw std::runtime_error("cannot write the lock file " + path_);
            }
            remove_leftovers(fs::path(directory));
            return;
        }
        if (errno != EEXIST) throw std::runtime_error("cannot create the lock file " + path_);
        long owner = 0;
        std::ifstream(path_) >> owner;
        if (process_alive(owner))
            throw std::runtime_error("another grove run (pid " + std::to_string(owner) + ") is writing to " +
                                     directory + "; wait for it to end or choose another -o");
        notice_ = "took over the lock of " + directory + " from pid " + std::to_string(owner) + ", which is gone";
        std::error_code ec;
        fs::remove(path_, ec);
    }
    throw std::runtime_error("cannot take the lock file " + path_);
}

RunLock::~RunLock()
{
    std::error_code ec;
    fs::remove(path_, ec);
}

} // namespace grove
