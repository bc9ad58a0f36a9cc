#include "cli/run_outputs.hpp"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "core/wall_clock.hpp"
#include "parallel/domain_files.hpp"

namespace grove {

namespace {

namespace fs = std::filesystem;

std::string snapshot_name(const fs::path& dir, int index)
{
    char name[32];
    std::snprintf(name, sizeof name, "snapshot_%04d.hdf5", index);
    return (dir / name).string();
}

} // namespace

RunOutputs::RunOutputs(const std::string& dir, bool writer, bool restarting) : dir_(dir), writer_(writer)
{
    if (!writer_) return;
    const fs::path path(dir_);
    fs::create_directories(path);
    // One run per directory at a time (a second one would interleave its files with ours).
    lock_.emplace(dir_);
    if (!lock_->notice().empty()) std::fprintf(stderr, "grove run: %s\n", lock_->notice().c_str());
    if (!restarting && (fs::exists(path / "diagnostics.txt") || fs::exists(snapshot_name(path, 0))))
        throw std::runtime_error("output directory " + dir_ + " already holds a run; choose another -o");
}

void RunOutputs::start_snapshot_writer()
{
    snapshots_ = std::make_unique<SnapshotWriter>(true);
}

void RunOutputs::write_parameters(const ParticleSet& p, long long total_steps)
{
    if (!writer_) return;
    std::ofstream yml(fs::path(dir_) / "run.yml");
    yml << "# grove run: every parameter used\n";
    for (const auto& [k, v] : p.run_parameters) yml << k << ": \"" << v << "\"\n";
    yml << "run.steps: " << total_steps << "\n";
}

void RunOutputs::open_diagnostics(const Checkpoint* restart, const std::string& header)
{
    if (!writer_) return;
    const fs::path path = fs::path(dir_) / "diagnostics.txt";
    std::error_code error;
    const std::uintmax_t size = fs::file_size(path, error);
    const auto recorded = restart ? static_cast<std::uintmax_t>(restart->diagnostics_bytes) : 0;
    if (restart && !error && size >= recorded) {
        // Lines written after the checkpoint would be written again: cut them.
        fs::resize_file(path, recorded);
        diagnostics_.open(path, std::ios::app);
    } else {
        diagnostics_.open(path);
        diagnostics_ << header;
        // Missing or cut short: the restart does not depend on it, and starts it again from the
        // checkpoint rather than padding it with what was lost.
        if (restart) {
            diagnostics_ << "# restarted from the checkpoint after step " << restart->step
                         << "; the lines before were lost from this file\n";
            std::fprintf(stderr, "grove run: %s was %s; its lines before the checkpoint are lost, and it goes on\n",
                         path.string().c_str(), error ? "missing" : "shorter than the checkpoint recorded");
        }
    }
    if (!diagnostics_) throw std::runtime_error("cannot write " + path.string());
}

double RunOutputs::log(const Diagnostics& d, double compute_seconds, double time, long long step, double e0,
                       double wall_seconds, const std::vector<std::pair<std::string, long long>>& counts)
{
    const auto start = WallClock::now();
    diagnostics_seconds_ += compute_seconds;
    const double de = e0 != 0 ? (d.total - e0) / std::abs(e0) : 0;
    if (writer_) {
        char line[512];
        std::snprintf(line, sizeof line,
                      "%.10g %lld %.12e %.12e %.12e %.6e %.8f %.6e %.6e %.6e %.6e %.6e %.6e %.6g %.6g %.6g %.3f", time,
                      step, d.kinetic, d.potential, d.total, de, d.virial_ratio, d.momentum[0], d.momentum[1],
                      d.momentum[2], d.angular_momentum[0], d.angular_momentum[1], d.angular_momentum[2],
                      d.lagrangian_radii[0], d.lagrangian_radii[1], d.lagrangian_radii[2], wall_seconds);
        diagnostics_ << line;
        for (const auto& count : counts) diagnostics_ << ' ' << count.second;
        diagnostics_ << '\n' << std::flush;
    }
    diagnostics_seconds_ += seconds_since(start);
    return de;
}

void RunOutputs::next_snapshot(const std::function<void(const std::string&)>& write)
{
    const int index = snapshot_index_++;
    if (!writer_) return;
    const auto start = WallClock::now();
    write(snapshot_name(dir_, index));
    io_seconds_ += seconds_since(start);
}

void RunOutputs::snapshot(const ParticleSet& p)
{
    next_snapshot([&](const std::string& path) { snapshots_->write(path, p); });
}

void RunOutputs::snapshot_borrowed(ParticleSet& p)
{
    next_snapshot([&](const std::string& path) { snapshots_->write_borrowed(path, p); });
}

void RunOutputs::snapshot_from_domains(const ParticleSet& local, const Communicator& comm)
{
    const std::string path = snapshot_name(dir_, snapshot_index_++);
    const auto start = WallClock::now();
    if (writer_) snapshots_->wait(); // HDF5 is one thread's
    const std::string temporary = write_snapshot_rows_from_domains(path, local, comm);
    if (writer_) snapshots_->seal(temporary, path); // onto the disk beside the next steps
    io_seconds_ += seconds_since(start);
}

void RunOutputs::give_back(ParticleSet& p)
{
    if (!writer_) return;
    const auto start = WallClock::now();
    snapshots_->give_back(p);
    io_seconds_ += seconds_since(start);
}

void RunOutputs::checkpoint(Checkpoint& c)
{
    if (!writer_) return;
    const auto start = WallClock::now();
    snapshots_->wait(); // the snapshots the checkpoint counts are complete, and HDF5 is one thread's
    c.snapshot_index = snapshot_index_;
    diagnostics_.flush();
    c.diagnostics_bytes = static_cast<long long>(fs::file_size(fs::path(dir_) / "diagnostics.txt"));
    write_checkpoint((fs::path(dir_) / "checkpoint.hdf5").string(), c);
    io_seconds_ += seconds_since(start);
}

void RunOutputs::checkpoint_from_domains(Checkpoint& c, const Communicator& comm)
{
    const auto start = WallClock::now();
    double bytes = 0;
    if (writer_) {
        snapshots_->wait();
        diagnostics_.flush();
        bytes = static_cast<double>(fs::file_size(fs::path(dir_) / "diagnostics.txt"));
    }
    comm.broadcast(&bytes, sizeof bytes, 0);
    c.snapshot_index = snapshot_index_;
    c.diagnostics_bytes = static_cast<long long>(bytes);
    write_checkpoint_from_domains((fs::path(dir_) / "checkpoint.hdf5").string(), c, comm);
    io_seconds_ += seconds_since(start);
}

void RunOutputs::finish()
{
    if (!writer_) return;
    const auto start = WallClock::now();
    snapshots_->wait();
    io_seconds_ += seconds_since(start);
}

} // namespace grove
