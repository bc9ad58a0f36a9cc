#include "core/particle_order.hpp"

#include "core/resize_keeping_memory.hpp"
#include "core/step_update.hpp"

#include <cmath>
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
        resize_keeping_memory(scratch, a.cols());
    else
        resize_keeping_memory(scratch, a.size());
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

void ParticleOrder::compose_caller_index(const std::vector<std::uint32_t>& order)
{
    if (caller_index_.empty()) {
        index_scratch_ = order;
        return;
    }
    index_scratch_.resize(order.size());
    permute_blocks(caller_index_.data(), index_scratch_.data(), order, 1, false);
}

void ParticleOrder::move_early(ParticleSet& p, const std::vector<std::uint32_t>& order)
{
    if (early_) throw std::logic_error("particle order: move_early twice without adopt");
    if (order.size() != p.size() || static_cast<std::size_t>(p.vel.cols()) != p.size())
        throw std::invalid_argument("particle order: " + std::to_string(order.size()) + " indices for " +
                                    std::to_string(p.size()) + " particles");
    const auto n = static_cast<Eigen::Index>(order.size());
    resize_keeping_memory(columns_, n);
    bool finite = true;
#pragma omp parallel for schedule(static) reduction(&& : finite) if (n > 16384)
    for (Eigen::Index k = 0; k < n; ++k) {
        const auto i = static_cast<Eigen::Index>(order[static_cast<std::size_t>(k)]);
        for (int d = 0; d < 3; ++d) {
            columns_(d, k) = p.pos(d, i);
            finite = finite && std::isfinite(columns_(d, k));
        }
    }
    // The old positions, velocities and masses stay in the scratch arrays until adopt():
    // undo_early() swaps them back, and an engine still holding a view of them reads what it was
    // given. The velocities move now too (the step's forces are not needed to move them), so that
    // adopt() is left with the kick, a pass in order.
    p.pos.swap(columns_);
    permute_array(p.vel, velocities_, order, 3, false);
    permute_array(p.mass, scalars_, order, 1, false);
    compose_caller_index(order); // installed by the adopt(), kept aside until then
    early_ = true;
    early_finite_ = finite;
}

void ParticleOrder::undo_early(ParticleSet& p)
{
    if (!early_) return;
    p.pos.swap(columns_);
    p.vel.swap(velocities_);
    p.mass.swap(scalars_);
    early_ = false;
}

bool ParticleOrder::adopt(ParticleSet& p, const std::vector<std::uint32_t>& order, Forces forces, VelocityKick kick)
{
    bool finite = true;
    if (early_) { // everything moved already: the kick, and the caller index set aside
        const Eigen::Index n = p.vel.cols();
        if (forces == Forces::moved || static_cast<std::size_t>(n) != order.size() ||
            (kick.acc && kick.acc->cols() != n))
            throw std::logic_error("particle order: adopt after move_early needs the same order and new forces");
        double* v = p.vel.data();
        const double* a = kick.acc ? kick.acc->data() : nullptr;
        const auto count = static_cast<std::int64_t>(3 * n);
#pragma omp parallel for schedule(static) reduction(&& : finite) if (count > 16384)
        for (std::int64_t i = 0; i < count; ++i) {
            v[i] = v[i] + (a ? kick.dt * a[i] : 0.0); // as the one-part move computes it
            finite = finite && std::isfinite(v[i]);
        }
        caller_index_.swap(index_scratch_);
        early_ = false;
        return finite && early_finite_;
    } else if (kick.acc) {
        const Eigen::Index n = p.pos.cols();
        if (static_cast<std::size_t>(n) != order.size() || kick.acc->cols() != n || p.vel.cols() != n)
            throw std::invalid_argument("particle order: the kick's accelerations or the particles differ in length");
        resize_keeping_memory(columns_, n);
        resize_keeping_memory(velocities_, n);
        const Eigen::Matrix3Xd& a = *kick.acc;
#pragma omp parallel for schedule(static) reduction(&& : finite) if (n > 16384)
        for (Eigen::Index k = 0; k < n; ++k) {
            const auto i = static_cast<Eigen::Index>(order[static_cast<std::size_t>(k)]);
            for (int d = 0; d < 3; ++d) {
                const double x = p.pos(d, i), v = kicked(p.vel(d, i), a(d, k), kick.dt);
                columns_(d, k) = x;
                velocities_(d, k) = v;
                finite = finite && std::isfinite(x) && std::isfinite(v);
            }
        }
        p.pos.swap(columns_);
        p.vel.swap(velocities_);
        permute_array(p.mass, scalars_, order, 1, false);
        if (forces == Forces::moved) {
            permute_array(p.acc, columns_, order, 3, false);
            permute_array(p.pot, scalars_, order, 1, false);
        }
    } else {
        permute(p, order, false, forces == Forces::moved);
    }
    compose_caller_index(order);
    caller_index_.swap(index_scratch_);
    return finite;
}

bool ParticleOrder::settle(ParticleSet& p)
{
    if (caller_index_.empty()) return false;
    const std::size_t n = caller_index_.size();
    // out[k] = in[caller_index[k]] for c values a particle, through `moved` (kept, with its
    // memory, for the next call); an empty array stays empty.
    const auto gather = [&](auto& values, auto& moved, int c) {
        if (values.empty()) return;
        if (values.size() != n * static_cast<std::size_t>(c))
            throw std::invalid_argument("particle order: an array's length differs from the particle count");
        moved.resize(values.size());
        permute_blocks(values.data(), moved.data(), caller_index_, c, false);
        values.swap(moved);
    };
    gather(p.id, ids_, 1);
    gather(p.type, types_, 1);
    for (auto& entry : p.extra) {
        std::vector<double> values;
        std::vector<std::uint64_t> counts;
        gather(entry.second.values, values, entry.second.components);
        gather(entry.second.counts, counts, entry.second.components);
    }
    caller_index_.clear();
    return true;
}

bool ParticleOrder::restore(ParticleSet& p)
{
    if (caller_index_.empty()) return false;
    permute(p, caller_index_, true, true);
    caller_index_.clear();
    return true;
}

} // namespace grove
