#include "core/snapshot_writer.hpp"

#include <utility>

#include "core/snapshot.hpp"

namespace grove {

SnapshotWriter::~SnapshotWriter()
{
    if (thread_.joinable()) thread_.join();
}

void SnapshotWriter::wait()
{
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void SnapshotWriter::write(const std::string& path, ParticleSet particles)
{
    wait();
    thread_ = std::thread([this, path, p = std::move(particles)] {
        try {
            write_snapshot(path, p);
        } catch (...) {
            error_ = std::current_exception();
        }
    });
}

} // namespace grove
