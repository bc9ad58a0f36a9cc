#include "core/particle_order.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace grove {

namespace {

// out[k * c .. k * c + c) = in[index[k] * c ..) (gather) or the reverse (scatter), in parallel.
template <class T>
void permute_blocks(const T* in, T* out, const std::vector<std::uint32_t>& index, int c, bool scatter)
{
    const auto n = static_cast<std::int64_t>(index.size());
    const auto w = static_cast<std::size_t>(c);
#pragma omp parallel for schedule(static) if (n > 16384)
    for (std::int64_t k = 0; k < n; ++k) {
        const std::size_t from = scatter ? static_cast<std::size_t>(k) : index[static_cast<std::size_t>(k)];
        const std::size_t to = scatter ? index[static_cast<std::size_t>(k)] : static_cast<std::size_t>(k);
        for (std::size_t d = 0; d < w; ++d) out[to * w + d] = in[from * w + d];
    }
}

template <class Array, class Scratch>
void permute_array(Array& a, Scratch& scratch, const std::vector<std::uint32_t>& index, int c, bool scatter)
{
    if (a.size() == 0) return;
    if (static_cast<std::size_t>(a.size()) != index.size() * static_cast<std::size_t>(c))
        throw std::invalid_argument("particle order: an array's length differs from the particle count");
    if constexpr (std::is_same_v<Array, Eigen::Matrix3Xd>)
        scratch.resize(3, a.cols());
    else
        scratch.resize(a.size());
    permute_blocks(a.data(), scratch.data(), index, c, scatter);
    a.swap(scratch);
}

} // namespace

void ParticleOrder::permute(ParticleSet& p, const std::vector<std::uint32_t>& index, bool scatter, bool forces)
{
    if (index.size() != p.size())
        throw std::invalid_argument("particle order: " + std::to_string(index.size()) + " indices for " +
                                    std::to_string(p.size()) + " particles");
    permute_array(p.pos, columns_, index, 3, scatter);
    permute_array(p.vel, columns_, index, 3, scatter);
    if (forces) permute_array(p.acc, columns_, index, 3, scatter);
    permute_array(p.mass, scalars_, index, 1, scatter);
    if (forces) permute_array(p.pot, scalars_, index, 1, scatter);
}

void ParticleOrder::adopt(ParticleSet& p, const std::vector<std::uint32_t>& order, Forces forces)
{
    permute(p, order, false, forces == Forces::moved);
    if (caller_index_.empty()) {
        caller_index_ = order;
        return;
    }
    index_scratch_.resize(order.size());
    permute_blocks(caller_index_.data(), index_scratch_.data(), order, 1, false);
    caller_index_.swap(index_scratch_);
}

bool ParticleOrder::restore(ParticleSet& p)
{
    if (caller_index_.empty()) return false;
    permute(p, caller_index_, true, true);
    caller_index_.clear();
    return true;
}

} // namespace grove
