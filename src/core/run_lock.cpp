#include "core/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
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

// The process id written in the lock file, 0 where there is none (a new file, or one whose owner
// had not written it yet).
long owner_of(int fd)
{
    char text[32] = {};
    const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
    return n > 0 ? std::strtol(text, nullptr, 10) : 0;
}

// Whether fd is still the file at path (a run that ends removes its lock file: a process that
// opened it just before then holds a lock on a file no other run will see).
bool still_there(int fd, const std::string& path)
{
    struct stat open_file {
    }, named{};
    return ::fstat(fd, &open_file) == 0 && ::stat(path.c_str(), &named) == 0 && open_file.st_ino == named.st_ino &&
           open_file.st_dev == named.st_dev;
}

} // namespace

RunLock::RunLock(const std::string& directory) : path_((fs::path(directory) / ".grove-run.lock").string())
{
    // The kernel's lock on the open file, not a process id test: it is taken atomically, and it is
    // released when its holder ends however it ends (a killed process, and a zombie not yet
    // reaped, hold none).
    for (int attempt = 0; attempt < 8; ++attempt) {
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd_ < 0) throw std::runtime_error("cannot create the lock file " + path_ + ": " + std::strerror(errno));
        if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            const int error = errno;
            const long owner = owner_of(fd_);
            ::close(fd_);
            fd_ = -1;
            if (error != EWOULDBLOCK) throw std::runtime_error("cannot lock " + path_ + ": " + std::strerror(error));
            throw std::runtime_error("another grove run" + (owner > 0 ? " (pid " + std::to_string(owner) + ")" : "") +
                                     " is writing to " + directory + "; wait for it to end or choose another -o");
        }
        if (!still_there(fd_, path_)) { // its owner removed it as we opened it: take the new one
            ::close(fd_);
            fd_ = -1;
            continue;
        }
        const long previous = owner_of(fd_);
        if (previous > 0 && previous != ::getpid())
            notice_ =
                "took over the lock of " + directory + " from pid " + std::to_string(previous) + ", which is gone";
        const std::string pid = std::to_string(::getpid()) + "\n";
        if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
            ::close(fd_);
            fd_ = -1;
            throw std::runtime_error("cannot write the lock file " + path_);
        }
        remove_leftovers(fs::path(directory));
        return;
    }
    throw std::runtime_error("cannot take the lock file " + path_);
}

RunLock::~RunLock()
{
    std::error_code ec;
    fs::remove(path_, ec); // before the lock goes: a run waiting for it then sees no file to take
    if (fd_ >= 0) ::close(fd_);
}

} // namespace grove
