#include "parallel/domain_files.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <unistd.h>
#include <utility>
#include <vector>

#include "core/checksum.hpp"
#include "core/key_ranges.hpp"
#include "core/snapshot.hpp"
#include "core/stale_files.hpp"
#include "parallel/domains.hpp"
#include "tree/hilbert.hpp"

namespace grove {

namespace {

constexpr std::size_t kIdSamplesPerRank = 1024;

// What each rank writes: its share, in ID order, whether the file has forces (only where every
// rank's share has them, as a gather keeps them), and where its rows start.
struct Share {
    ParticleSet particles;
    bool forces = false;
    TypeCounts totals{}, first{}; // per type: the file's counts, and this rank's first rows
    std::uint64_t count = 0;      // every rank's particles
    std::uint64_t first_row = 0;  // this rank's first in the ID order of the whole file
};

Share share_of(const ParticleSet& local, const Communicator& comm)
{
    Share s;
    s.particles = share_in_id_order(local, comm);
    ParticleSet& mine = s.particles;
    double forces = mine.size() == 0 || mine.has_forces() ? 1 : 0;
    comm.min(&forces, 1);
    s.forces = forces > 0;
    if (!s.forces) { // as a gather of records some of which have none
        mine.acc.resize(3, 0);
        mine.pot.resize(0);
    }
    std::vector<double> counts(kNumParticleTypes + 1, 0.0);
    for (const std::uint8_t t : mine.type) counts[t] += 1;
    counts[kNumParticleTypes] = static_cast<double>(mine.size());
    const auto ranks = static_cast<std::size_t>(comm.size()), width = counts.size();
    std::vector<double> all(ranks * width);
    comm.all_gather(counts.data(), width, std::vector<std::size_t>(ranks, width), all.data());
    for (std::size_t r = 0; r < ranks; ++r) {
        const bool before = r < static_cast<std::size_t>(comm.rank());
        for (int t = 0; t < kNumParticleTypes; ++t) {
            const auto c = static_cast<std::uint64_t>(all[r * width + static_cast<std::size_t>(t)]);
            s.totals[t] += c;
            if (before) s.first[t] += c;
        }
        const auto n = static_cast<std::uint64_t>(all[r * width + kNumParticleTypes]);
        s.count += n;
        if (before) s.first_row += n;
    }
    return s;
}

// Every rank's turn to write into the file the first rank made, in rank order.
template <class Write> void in_turn(const Communicator& comm, Write&& write)
{
    for (int r = 0; r < comm.size(); ++r) {
        if (comm.rank() == r) write();
        comm.barrier(); // the file closed before the next rank opens it
    }
}

// The checksum's run of one array's bytes, every rank adding its share's in rank order.
void add_in_turn(Checksum& sum, const void* data, std::size_t bytes, const Communicator& comm)
{
    for (int r = 0; r < comm.size(); ++r) {
        if (comm.rank() == r) sum.add_piece(data, bytes);
        comm.broadcast(&sum, sizeof sum, r);
    }
    sum.end_pieces();
}

// A matrix's shape as the gathered set has it (add_matrix adds rows and columns first).
void add_shape(Checksum& sum, std::uint64_t rows, std::uint64_t cols)
{
    sum.add(static_cast<std::int64_t>(rows));
    sum.add(static_cast<std::int64_t>(cols));
}

// The checksum of the gathered set's arrays (core/checkpoint.cpp), each rank adding its share's
// bytes in turn; every rank ends with it.
Checksum sum_of_shares(const Share& s, const Communicator& comm)
{
    const ParticleSet& mine = s.particles;
    const std::uint64_t n = s.count, with_forces = s.forces ? n : 0;
    const auto doubles = [](std::size_t count) { return count * sizeof(double); };
    Checksum sum;
    add_shape(sum, 3, n);
    add_in_turn(sum, mine.pos.data(), doubles(3 * mine.size()), comm);
    add_shape(sum, 3, n);
    add_in_turn(sum, mine.vel.data(), doubles(3 * mine.size()), comm);
    add_shape(sum, n, 1);
    add_in_turn(sum, mine.mass.data(), doubles(mine.size()), comm);
    add_shape(sum, 3, with_forces);
    add_in_turn(sum, mine.acc.data(), doubles(static_cast<std::size_t>(mine.acc.size())), comm);
    add_shape(sum, with_forces, 1);
    add_in_turn(sum, mine.pot.data(), doubles(static_cast<std::size_t>(mine.pot.size())), comm);
    add_in_turn(sum, mine.id.data(), mine.id.size() * sizeof(std::uint64_t), comm);
    add_in_turn(sum, mine.type.data(), mine.type.size(), comm);
    return sum;
}

} // namespace

ParticleSet share_in_id_order(const ParticleSet& local, const Communicator& comm)
{
    // Samples of this rank's IDs, evenly spaced in their order, each weighing the particles it
    // stands for: every rank cuts the same ranges from all of them (core/key_ranges.hpp), as the
    // GPUs cut their domains' keys. The largest ID there is samples as one below (a sample lies
    // below the keys' end): its particles go to the last rank either way.
    constexpr std::uint64_t kEnd = std::numeric_limits<std::uint64_t>::max();
    std::vector<std::uint64_t> ids(local.id);
    std::sort(ids.begin(), ids.end());
    const std::size_t n = ids.size(), k = std::min(n, kIdSamplesPerRank);
    std::vector<WeightedKey> mine;
    for (std::size_t i = 0; i < k; ++i)
        mine.push_back({std::min(ids[(2 * i + 1) * n / (2 * k)], kEnd - 1), static_cast<double>(n) / k});
    const auto* bytes = reinterpret_cast<const char*>(mine.data());
    std::vector<std::vector<char>> all;
    comm.all_to_all(std::vector<std::vector<char>>(static_cast<std::size_t>(comm.size()),
                                                   std::vector<char>(bytes, bytes + mine.size() * sizeof(WeightedKey))),
                    all);
    std::vector<WeightedKey> samples;
    for (const std::vector<char>& theirs : all) {
        const std::size_t at = samples.size();
        samples.resize(at + theirs.size() / sizeof(WeightedKey));
        if (!theirs.empty()) std::memcpy(samples.data() + at, theirs.data(), theirs.size());
    }
    const std::vector<std::uint64_t> first = key_ranges_from_samples(std::move(samples), comm.size(), kEnd);
    std::vector<int> owner(local.size());
    for (std::size_t i = 0; i < local.size(); ++i) owner[i] = key_range_owner(first.data(), comm.size(), local.id[i]);
    return sorted_by_id(migrate(local, owner, comm));
}

std::string write_snapshot_rows_from_domains(const std::string& path, const ParticleSet& local,
                                             const Communicator& comm)
{
    const Share s = share_of(local, comm);
    // The first rank names the temporary; a run's stale ones (from a crash) go first.
    const std::filesystem::path target(path);
    std::string temporary = path + ".tmp." + std::to_string(::getpid());
    std::uint64_t length = temporary.size();
    comm.broadcast(&length, sizeof length, 0);
    temporary.resize(length);
    comm.broadcast(temporary.data(), length, 0);
    // A rank whose write fails ends the job (parallel/communicator.hpp); the first rank's own
    // failures leave no temporary behind, the others' one that the next write removes.
    const auto or_remove = [&](auto&& write) {
        try {
            write();
        } catch (...) {
            if (comm.is_root()) std::remove(temporary.c_str());
            throw;
        }
    };
    if (comm.is_root())
        or_remove([&] {
            remove_stale_temporaries(target.parent_path().string(), target.filename().string() + ".tmp.");
            create_snapshot(temporary, s.particles, s.totals, s.forces);
        });
    comm.barrier();
    in_turn(comm, [&] { or_remove([&] { write_snapshot_rows(temporary, s.particles, s.first); }); });
    return temporary;
}

void write_snapshot_from_domains(const std::string& path, const ParticleSet& local, const Communicator& comm)
{
    const std::string temporary = write_snapshot_rows_from_domains(path, local, comm);
    if (comm.is_root()) seal_snapshot(temporary, path);
    comm.barrier();
}

void write_checkpoint_from_domains(const std::string& path, const Checkpoint& c, const Communicator& comm)
{
    if (!c.integrator.fields.empty() || !c.integrator.arrays.empty())
        throw std::logic_error("a checkpoint from domains holds no integrator fields or arrays");
    const Share s = share_of(c.particles, comm);
    const ParticleSet& mine = s.particles;
    const std::string temporary = path + ".partial";
    if (comm.is_root()) {
        create_snapshot(temporary, mine, s.totals, s.forces);
        add_checkpoint_group(temporary, c, s.count);
    }
    comm.barrier();
    in_turn(comm, [&] {
        write_snapshot_rows(temporary, mine, s.first);
        write_memory_order_rows(temporary, mine.id, s.first_row);
    });
    Checksum sum = sum_of_shares(s, comm);
    if (comm.is_root()) {
        try {
            add_checkpoint_record(sum, c);
            seal_checkpoint(temporary, sum.value());
            std::filesystem::rename(temporary, path); // only a complete checkpoint replaces the last
        } catch (...) {
            std::remove(temporary.c_str());
            throw;
        }
    }
    comm.barrier();
}

Checkpoint read_checkpoint_on_domains(const std::string& path, const Communicator& comm)
{
    std::optional<std::uint64_t> sealed;
    Checkpoint c = read_checkpoint_record(path, &sealed);
    if (!c.integrator.fields.empty() || !c.integrator.arrays.empty())
        throw std::runtime_error(path + ": a checkpoint with integrator fields or arrays cannot go on on domains");
    const std::uint64_t n = hdf5_particle_count(path);
    const auto r = static_cast<std::uint64_t>(comm.rank()), k = static_cast<std::uint64_t>(comm.size());
    Share s = share_of(read_hdf5_snapshot_part(path, n * r / k, n * (r + 1) / k), comm);
    // A run on domains held its particles in ID order when it wrote them: the shares are the
    // memory order's pieces.
    if (read_memory_order_rows(path, s.first_row, s.particles.size()) != s.particles.id)
        throw std::runtime_error(path + ": the checkpoint holds its particles in another order than their IDs', "
                                        "not as a run on domains writes them");
    Checksum sum = sum_of_shares(s, comm);
    c.particles = std::move(s.particles);
    add_checkpoint_record(sum, c);
    check_sealed(path, sealed, sum.value());
    return c;
}

} // namespace grove
