// Contiguous shares of a list of targets over an MPI job's ranks (the first m % ranks one
// larger), and the gather of every rank's results back into the list's order: how the
// distributed direct and Hermite engines split their targets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "parallel/communicator.hpp"

namespace grove {

class TargetShares {
  public:
    TargetShares(std::size_t targets, const Communicator& comm);
    // This rank's part of `targets` (which has the length given above).
    std::vector<std::int32_t> mine(const std::vector<std::int32_t>& targets) const;
    // Every rank's `components` values per target of its share, gathered on all ranks into `out`
    // (components x targets, in the targets' order).
    void gather(const double* mine, std::size_t components, double* out) const;

  private:
    const Communicator& comm_;
    std::vector<std::size_t> counts_, first_;
};

} // namespace grove
