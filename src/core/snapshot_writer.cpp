#include "core/snapshot_writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <omp.h>

#include "core/snapshot.hpp"
#include "core/wall_clock.hpp"

namespace grove {

SnapshotWriter::SnapshotWriter(bool reserve_core)
{
    if (!reserve_core) return;
    threads_before_ = omp_get_max_threads();
    if (threads_before_ > 2) omp_set_num_threads(threads_before_ - 1);
}

SnapshotWriter::~SnapshotWriter()
{
    if (threads_before_ > 0) omp_set_num_threads(threads_before_);
}

namespace {

// dst = src for an Eigen array or a std::vector, by threads: a serial copy of the 10^6-particle
// arrays took about as long as a step.
template <class Array> void parallel_copy(Array& dst, const Array& src)
{
    if constexpr (std::is_base_of_v<Eigen::EigenBase<Array>, Array>)
        dst.resize(src.rows(), src.cols());
    else
        dst.resize(src.size());
    const auto bytes = static_cast<std::int64_t>(src.size() * sizeof(*src.data()));
    constexpr std::int64_t kChunk = 1 << 20;
    const std::int64_t chunks = (bytes + kChunk - 1) / kChunk;
    auto* to = reinterpret_cast<char*>(dst.data());
    const auto* from = reinterpret_cast<const char*>(src.data());
#pragma omp parallel for schedule(static) if (chunks > 4)
    for (std::int64_t k = 0; k < chunks; ++k)
        std::memcpy(to + k * kChunk, from + k * kChunk, static_cast<std::size_t>(std::min(kChunk, bytes - k * kChunk)));
}

// Every field of a ParticleSet (particles.hpp), the large arrays in parallel.
void copy_particles(const ParticleSet& src, ParticleSet& dst)
{
    parallel_copy(dst.pos, src.pos);
    parallel_copy(dst.vel, src.vel);
    parallel_copy(dst.mass, src.mass);
    parallel_copy(dst.id, src.id);
    parallel_copy(dst.type, src.type);
    parallel_copy(dst.acc, src.acc);
    parallel_copy(dst.pot, src.pot);
    dst.time = src.time;
    dst.units = src.units;
    dst.run_parameters = src.run_parameters;
}

// The per-particle arrays of two sets exchanged.
void swap_arrays(ParticleSet& a, ParticleSet& b)
{
    a.pos.swap(b.pos);
    a.vel.swap(b.vel);
    a.mass.swap(b.mass);
    a.id.swap(b.id);
    a.type.swap(b.type);
    a.acc.swap(b.acc);
    a.pot.swap(b.pot);
    a.extra.swap(b.extra);
}

} // namespace

void SnapshotWriter::wait()
{
    const auto start = WallClock::now();
    std::exception_ptr error;
    try {
        task_.wait();
    } catch (...) {
        error = std::current_exception();
    }
    wait_seconds_ += seconds_since(start);
    if (error) std::rethrow_exception(error);
}

void SnapshotWriter::write(const std::string& path, const ParticleSet& particles)
{
    if (borrowed_) throw std::logic_error("snapshot writer: a write while a borrowed one is not given back");
    wait();
    // Copied into storage kept from the last write: same-sized arrays are reused, so a copy costs
    // no page faults.
    const auto start = WallClock::now();
    copy_particles(particles, copy_);
    copy_seconds_ += seconds_since(start);
    start_thread(path);
}

void SnapshotWriter::write_borrowed(const std::string& path, ParticleSet& particles)
{
    if (borrowed_) throw std::logic_error("snapshot writer: a write while a borrowed one is not given back");
    wait();
    copy_ = ParticleSet{}; // an earlier copy's storage goes
    swap_arrays(copy_, particles);
    copy_.time = particles.time;
    copy_.units = particles.units;
    copy_.run_parameters = particles.run_parameters;
    borrowed_ = true;
    start_thread(path);
}

void SnapshotWriter::give_back(ParticleSet& particles)
{
    if (!borrowed_) return;
    std::exception_ptr error; // the arrays come back first
    try {
        wait();
    } catch (...) {
        error = std::current_exception();
    }
    swap_arrays(copy_, particles);
    borrowed_ = false;
    if (error) std::rethrow_exception(error);
}

template <class Write> void SnapshotWriter::in_background(Write&& write)
{
    task_.post([this, write] {
        const auto begin = WallClock::now();
        std::exception_ptr error;
        try {
            write();
        } catch (...) {
            error = std::current_exception();
        }
        write_seconds_ += seconds_since(begin);
        if (error) std::rethrow_exception(error);
    });
}

void SnapshotWriter::start_thread(const std::string& path)
{
    in_background([this, path] { write_snapshot(path, copy_); });
}

void SnapshotWriter::seal(const std::string& temporary, const std::string& path)
{
    wait();
    in_background([temporary, path] { seal_snapshot(temporary, path); });
}

} // namespace grove
