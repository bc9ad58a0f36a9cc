// The processes of an `mpirun -np K grove ...` job (MPI when the build has it; one process
// otherwise): rank, size, the few collectives the distributed engine needs, and a job-wide stop.
// grove runs without mpirun too: then the size is 1 and every call is a no-op.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/rank_exchange.hpp"

namespace grove {

class Communicator {
  public:
    // The job's communicator; initialises MPI on first use (thread support: funnelled).
    static Communicator& world();
    int rank() const { return rank_; }
    int size() const { return size_; }
    bool is_root() const { return rank_ == 0; }
    // This rank's number among the ranks on its node (its GPU is local_rank % GPUs).
    int local_rank() const { return local_rank_; }
    // Every rank's `counts[r]` values gathered in rank order into `out` on all ranks.
    void all_gather(const double* mine, std::size_t count, const std::vector<std::size_t>& counts, double* out) const;
    // The same where no rank knows the others' counts: every rank's values, of any number, in
    // rank order; `counts` gets how many came from each rank.
    std::vector<double> all_gather(const std::vector<double>& mine, std::vector<std::size_t>& counts) const;
    // The largest of every rank's value, on all ranks.
    int max(int value) const;
    // Element-wise sum over ranks, in place, on all ranks.
    void sum(double* values, std::size_t count) const;
    // Element-wise smallest and largest over ranks, in place, on all ranks.
    void min(double* values, std::size_t count) const;
    void max(double* values, std::size_t count) const;
    // Personalised all-to-all: send[r] goes to rank r (send has size() buffers); `received` gets
    // the buffers the ranks sent this one, by rank (reusing their capacity). Any sizes: large
    // buffers travel in pieces.
    void all_to_all(const std::vector<std::vector<char>>& send, std::vector<std::vector<char>>& received) const;
    // The same from bytes that stay where they are, into room the caller gives once the lengths
    // are known (RankExchange::ReceiveInto).
    void all_to_all(const std::vector<ByteSpan>& send, const RankExchange::ReceiveInto& into) const;
    // `bytes` bytes at `data` copied from rank `root` to every rank.
    void broadcast(void* data, std::size_t bytes, int root) const;
    // Ends every process of the job with exit status `status` (after `message` on stderr), so that
    // a failure on one rank never leaves the others waiting.
    [[noreturn]] void abort(const std::string& message, int status) const;
    void finalize();
    // The first `count` ranks as a communicator of their own (a scaling benchmark's subsets),
    // made by every rank of this one; the others get an empty result.
    std::unique_ptr<Communicator> first(int count) const;
    // Waits for every rank.
    void barrier() const;

  private:
    Communicator();
    struct Handle; // the MPI communicator, where there is one
    std::shared_ptr<Handle> handle_;
    int rank_ = 0, size_ = 1, local_rank_ = 0;
    bool initialised_ = false;
};

} // namespace grove
