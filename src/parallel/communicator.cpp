#include "parallel/communicator.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#if defined(GROVE_HAVE_MPI)
#include <mpi.h>
#endif

namespace grove {

struct Communicator::Handle {
#if defined(GROVE_HAVE_MPI)
    MPI_Comm comm = MPI_COMM_WORLD;
    bool owned = false;
    ~Handle()
    {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (owned && !finalized) MPI_Comm_free(&comm);
    }
#endif
};

Communicator& Communicator::world()
{
    static Communicator c;
    return c;
}

Communicator::Communicator()
{
#if defined(GROVE_HAVE_MPI)
    // Started by mpirun (Open MPI, MPICH or a PMIx launcher)? Otherwise one process, and MPI is
    // never initialised: a plain `grove` pays nothing for it.
    const bool launched = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
    if (!launched) return;
    int ready = 0;
    MPI_Initialized(&ready);
    if (!ready) {
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        initialised_ = true;
    }
    handle_ = std::make_shared<Handle>();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local_rank_);
    MPI_Comm_free(&node);
#endif
}

void Communicator::all_gather(const double* mine, std::size_t count, const std::vector<std::size_t>& counts,
                              double* out) const
{
    if (size_ == 1) {
        std::copy(mine, mine + count, out);
        return;
    }
#if defined(GROVE_HAVE_MPI)
    std::vector<int> sizes(static_cast<std::size_t>(size_)), offsets(static_cast<std::size_t>(size_));
    std::size_t at = 0;
    for (int r = 0; r < size_; ++r) {
        if (counts[static_cast<std::size_t>(r)] > static_cast<std::size_t>(INT32_MAX) || at > INT32_MAX)
            throw std::runtime_error("all_gather: more than 2^31 values");
        sizes[static_cast<std::size_t>(r)] = static_cast<int>(counts[static_cast<std::size_t>(r)]);
        offsets[static_cast<std::size_t>(r)] = static_cast<int>(at);
        at += counts[static_cast<std::size_t>(r)];
    }
    MPI_Allgatherv(mine, static_cast<int>(count), MPI_DOUBLE, out, sizes.data(), offsets.data(), MPI_DOUBLE,
                   handle_->comm);
#endif
}

std::vector<double> Communicator::all_gather(const std::vector<double>& mine, std::vector<std::size_t>& counts) const
{
    const auto ranks = static_cast<std::size_t>(size_);
    const double my_count = static_cast<double>(mine.size()); // exact below 2^53
    std::vector<double> each(ranks);
    all_gather(&my_count, 1, std::vector<std::size_t>(ranks, 1), each.data());
    counts.resize(ranks);
    std::size_t total = 0;
    for (std::size_t r = 0; r < ranks; ++r) total += counts[r] = static_cast<std::size_t>(each[r]);
    std::vector<double> out(total);
    all_gather(mine.data(), mine.size(), counts, out.data());
    return out;
}

int Communicator::max(int value) const
{
    if (size_ == 1) return value;
#if defined(GROVE_HAVE_MPI)
    MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, handle_->comm);
#endif
    return value;
}

void Communicator::sum(double* values, std::size_t count) const
{
    if (size_ == 1) return;
#if defined(GROVE_HAVE_MPI)
    constexpr std::size_t kChunk = std::size_t{1} << 28; // MPI counts are int
    for (std::size_t at = 0; at < count; at += kChunk)
        MPI_Allreduce(MPI_IN_PLACE, values + at, static_cast<int>(std::min(kChunk, count - at)), MPI_DOUBLE, MPI_SUM,
                      handle_->comm);
#endif
}

void Communicator::min(double* values, std::size_t count) const
{
    if (size_ == 1) return;
#if defined(GROVE_HAVE_MPI)
    MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, MPI_MIN, handle_->comm);
#endif
}

void Communicator::max(double* values, std::size_t count) const
{
    if (size_ == 1) return;
#if defined(GROVE_HAVE_MPI)
    MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, MPI_MAX, handle_->comm);
#endif
}

void Communicator::all_to_all(const std::vector<std::vector<char>>& send,
                              std::vector<std::vector<char>>& received) const
{
    std::vector<ByteSpan> spans(send.size());
    for (std::size_t r = 0; r < send.size(); ++r) spans[r] = {send[r].data(), send[r].size()};
    received.resize(send.size());
    all_to_all(spans, [&](int r, std::size_t bytes) {
        received[static_cast<std::size_t>(r)].resize(bytes);
        return received[static_cast<std::size_t>(r)].data();
    });
}

void Communicator::all_to_all(const std::vector<ByteSpan>& send, const RankExchange::ReceiveInto& into) const
{
    const auto k = static_cast<std::size_t>(size_);
    if (send.size() != k) throw std::invalid_argument("all_to_all: one buffer per rank");
    const ByteSpan own = send[static_cast<std::size_t>(rank_)];
    char* own_into = into(rank_, own.size);
    if (own.size > 0) std::memcpy(own_into, own.data, own.size);
    if (size_ == 1) return;
#if defined(GROVE_HAVE_MPI)
    std::vector<std::uint64_t> out_sizes(k), in_sizes(k);
    for (std::size_t r = 0; r < k; ++r) out_sizes[r] = send[r].size;
    MPI_Alltoall(out_sizes.data(), 1, MPI_UINT64_T, in_sizes.data(), 1, MPI_UINT64_T, handle_->comm);
    // Pieces of at most 1 GiB (MPI counts are int), each pair's in order under its own tag.
    constexpr std::uint64_t kPiece = std::uint64_t{1} << 30;
    std::vector<MPI_Request> requests;
    for (std::size_t r = 0; r < k; ++r) {
        if (static_cast<int>(r) == rank_) continue;
        char* to = into(static_cast<int>(r), in_sizes[r]);
        for (std::uint64_t at = 0, tag = 0; at < in_sizes[r]; at += kPiece, ++tag) {
            requests.emplace_back();
            MPI_Irecv(to + at, static_cast<int>(std::min(kPiece, in_sizes[r] - at)), MPI_BYTE, static_cast<int>(r),
                      static_cast<int>(tag), handle_->comm, &requests.back());
        }
    }
    for (std::size_t r = 0; r < k; ++r) {
        if (static_cast<int>(r) == rank_) continue;
        for (std::uint64_t at = 0, tag = 0; at < out_sizes[r]; at += kPiece, ++tag) {
            requests.emplace_back();
            MPI_Isend(send[r].data + at, static_cast<int>(std::min(kPiece, out_sizes[r] - at)), MPI_BYTE,
                      static_cast<int>(r), static_cast<int>(tag), handle_->comm, &requests.back());
        }
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
#endif
}

void Communicator::broadcast(void* data, std::size_t bytes, int root) const
{
    if (size_ == 1) return;
#if defined(GROVE_HAVE_MPI)
    constexpr std::size_t kChunk = std::size_t{1} << 30; // MPI counts are int
    auto* bytes_at = static_cast<unsigned char*>(data);
    for (std::size_t at = 0; at < bytes; at += kChunk)
        MPI_Bcast(bytes_at + at, static_cast<int>(std::min(kChunk, bytes - at)), MPI_BYTE, root, handle_->comm);
#else
    (void)data;
    (void)bytes;
    (void)root;
#endif
}

void Communicator::abort(const std::string& message, int status) const
{
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(nullptr);
#if defined(GROVE_HAVE_MPI)
    if (size_ > 1) MPI_Abort(MPI_COMM_WORLD, status);
#endif
    std::_Exit(status);
}

std::unique_ptr<Communicator> Communicator::first(int count) const
{
    if (count < 1 || count > size_) throw std::invalid_argument("Communicator::first: count out of range");
    if (size_ == 1) {
        std::unique_ptr<Communicator> c(new Communicator(*this));
        c->initialised_ = false; // only the world finalises
        return c;
    }
#if defined(GROVE_HAVE_MPI)
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(handle_->comm, rank_ < count ? 0 : MPI_UNDEFINED, rank_, &sub);
    if (sub == MPI_COMM_NULL) return nullptr;
    std::unique_ptr<Communicator> c(new Communicator(*this));
    c->handle_ = std::make_shared<Handle>();
    c->handle_->comm = sub;
    c->handle_->owned = true;
    MPI_Comm_rank(sub, &c->rank_);
    MPI_Comm_size(sub, &c->size_);
    c->initialised_ = false; // only the world finalises
    return c;
#else
    return nullptr;
#endif
}

void Communicator::barrier() const
{
#if defined(GROVE_HAVE_MPI)
    if (size_ > 1) MPI_Barrier(handle_->comm);
#endif
}

void Communicator::finalize()
{
#if defined(GROVE_HAVE_MPI)
    if (initialised_) {
        MPI_Finalize();
        initialised_ = false;
    }
#endif
}

} // namespace grove
