#include "parallel/target_shares.hpp"

namespace grove {

TargetShares::TargetShares(std::size_t targets, const Communicator& comm)
    : comm_(comm), counts_(static_cast<std::size_t>(comm.size())), first_(counts_.size() + 1, 0)
{
    const std::size_t ranks = counts_.size();
    for (std::size_t r = 0; r < ranks; ++r) {
        counts_[r] = targets / ranks + (r < targets % ranks ? 1 : 0);
        first_[r + 1] = first_[r] + counts_[r];
    }
}

std::vector<std::int32_t> TargetShares::mine(const std::vector<std::int32_t>& targets) const
{
    const auto me = static_cast<std::size_t>(comm_.rank());
    return {targets.begin() + static_cast<std::ptrdiff_t>(first_[me]),
            targets.begin() + static_cast<std::ptrdiff_t>(first_[me + 1])};
}

void TargetShares::gather(const double* mine, std::size_t components, double* out) const
{
    std::vector<std::size_t> counts(counts_.size());
    for (std::size_t r = 0; r < counts.size(); ++r) counts[r] = components * counts_[r];
    const auto me = static_cast<std::size_t>(comm_.rank());
    comm_.all_gather(mine, counts[me], counts, out);
}

} // namespace grove
