// The GPU tree engine: the host builds (or refits) the tree, which is packed and uploaded and
// evaluated (tree_evaluation.cu) while the host builds the next one from the store's predicted
// drift; on a store on the device, tree_resident.cu does the step's work there.
#include "gpu/tree_gpu.h"

#include "gpu/tree_engine_impl.cuh"
#include "gpu/tree_resident.cuh"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/softening.hpp"
#include "core/wall_clock.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_info.h"
#include "tree/float_tree.hpp"
#include "tree/lane_layout.hpp"

namespace grove {

TreeGpuEngine::Impl::Impl(TreeParams p, GravityParams g) : params(p), gravity(g), updater(p.rebuild_every)
{
    if (cuda_device_count() == 0) throw std::runtime_error("tree-gpu: no CUDA device is visible");
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaStreamCreateWithFlags(&walk_stream, cudaStreamNonBlocking));
    for (cudaEvent_t& e : events) CUDA_CHECK(cudaEventCreate(&e));
    for (cudaEvent_t& e : buffer_free) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

TreeGpuEngine::Impl::~Impl()
{
    resident.reset(); // its buffers and events before the stream
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    for (cudaEvent_t e : buffer_free) cudaEventDestroy(e);
    for (const auto& batch : batch_events)
        for (cudaEvent_t e : batch) cudaEventDestroy(e);
    cudaStreamDestroy(walk_stream);
    cudaStreamDestroy(stream);
}

TreeGpuEngine::TreeGpuEngine(TreeParams tree, GravityParams gravity)
    : ForceEngine("tree-gpu"), impl_(std::make_unique<Impl>(tree, gravity))
{
}
TreeGpuEngine::~TreeGpuEngine() = default;

void TreeGpuEngine::compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out)
{
    impl_->half_eps2 = half_squared_softening(impl_->gravity, type, static_cast<std::size_t>(pos.cols()), name());
    compute_on_host(pos, mass, out, nullptr);
}

// store: where the forces may stay in the tree's order, the store whose particles follow them
// there; they move while the GPU works, once the look-ahead build has read them (null: none).
void TreeGpuEngine::compute_on_host(PositionsRef pos, MassesRef mass, Forces& out, ParticleStore* store)
{
    const auto start = WallClock::now();
    BuildTimes build;
    Impl& d = *impl_;
    d.updater.update(d.tree, pos, mass, d.params.build, &build);
    const OpeningCriterion criterion = d.params.opening();
    // Forces in the tree's order only from a tree whose order has not been handed over (a fresh
    // build); they need no particle order on the device, but the relative criterion's first
    // pass, which keeps its estimate in the caller's order, does.
    const bool tree_order = store && d.updater.order_fresh();
    d.upload(d.tree, !(tree_order && criterion.kind == MacKind::geometric));
    // With look-ahead, the host builds the next tree while the GPU works on this one; it indexes
    // the order this call hands over.
    if (d.params.lookahead) d.updater.start_lookahead(d.tree, pos, mass, d.params.build, tree_order);
    const Impl::Evaluation evaluation =
        d.enqueue(criterion, tree_order ? ForcesTo::tree_order : ForcesTo::caller_order);
    d.updater.run_lookahead();
    if (tree_order && !d.tree.order.empty()) store->move_early(d.tree.order);
    d.finish(evaluation, out);
    d.updater.finish_lookahead();
    // This step's accelerations are the next one's estimate unless the caller sets another.
    if (criterion.kind == MacKind::relative) d.estimate.set(out.acc, d.gravity.G);
    PhaseTimes all = {{"keys", build.keys},       {"sort", build.sort},     {"build", build.build},
                      {"moments", build.moments}, {"groups", build.groups}, {"gather", build.gather}};
    all.insert(all.end(), d.upload_times.begin(), d.upload_times.end());
    all.insert(all.end(), d.times.begin(), d.times.end());
    // Whatever the phases leave out of the call's wall time (launches, waits), so that a run's
    // timing line adds up.
    double phases = 0;
    for (const auto& [name, seconds] : all) phases += seconds;
    all.emplace_back("other", std::max(0.0, seconds_since(start) - phases));
    if (d.params.lookahead) // overlapped the GPU phases; what it took beyond them is in "other"
        all.emplace_back("look-ahead build", d.updater.lookahead_seconds());
    d.times = all;
}

void TreeGpuEngine::compute(ParticleStore& store)
{
    Impl& d = *impl_;
    if (d.resident && store.device() == d.resident.get()) {
        if (store.on_device()) {
            d.resident->compute();
            return;
        }
        // Placed there but not loaded: the run's start (each step loads it first).
        d.resident->evaluate_start(store.host(), store.types());
        return;
    }
    ParticleSet& p = store.host();
    d.half_eps2 =
        half_squared_softening(d.gravity, d.gravity.per_type() ? store.types() : TypesRef{}, p.size(), name());
    d.updater.follow(store);
    if (p.has_forces()) d.estimate.set(p.acc, d.gravity.G);
    try {
        compute_on_host(p.pos, p.mass, d.forces, store.may_reorder() ? &store : nullptr);
    } catch (...) {
        store.undo_early();
        throw;
    }
    d.updater.hand_forces(store, d.tree, d.forces, d.handed_over); // an early move without one is undone
}

DeviceParticles* TreeGpuEngine::device_particles()
{
    Impl& d = *impl_;
    if (!d.params.resident || !d.params.lookahead || d.params.rebuild_every != 1 || d.share_count != 1) return nullptr;
    if (!d.resident) d.resident = std::make_unique<TreeGpuResident>(d);
    return d.resident.get();
}

DeviceParticles* TreeGpuEngine::device_particles_on_domains(RankExchange& ranks)
{
    Impl& d = *impl_;
    if (d.params.mac != MacKind::geometric || d.gravity.per_type()) return nullptr;
    if (!device_particles()) return nullptr;
    d.resident->set_ranks(&ranks);
    return d.resident.get();
}

PhaseTimes TreeGpuEngine::last_phase_times() const
{
    return impl_->times;
}

ListWork TreeGpuEngine::last_work() const
{
    return impl_->last_work;
}

void TreeGpuEngine::upload(const Octree& tree)
{
    impl_->upload(tree, true);
    impl_->times = impl_->upload_times; // until the next evaluate(), the last phases are pack and upload
}

void TreeGpuEngine::evaluate(const OpeningCriterion& criterion, Forces& out)
{
    impl_->evaluate(criterion, out, ForcesTo::caller_order);
}

void TreeGpuEngine::set_acceleration_estimate(const Eigen::Matrix3Xd& acc)
{
    impl_->estimate.set(acc, impl_->gravity.G);
}

void TreeGpuEngine::load(Octree& tree, TypesRef type)
{
    impl_->half_eps2 = half_squared_softening(impl_->gravity, type, tree.particles.size(), name());
    upload(tree);
}

void TreeGpuEngine::evaluate_loaded(const OpeningCriterion& criterion, Forces& out)
{
    evaluate(criterion, out);
}

std::vector<double> TreeGpuEngine::last_particle_costs() const
{
    return impl_->last_costs;
}

void TreeGpuEngine::set_share_costs(const std::vector<double>& costs)
{
    impl_->share_costs = costs;
}

void TreeGpuEngine::set_share(int index, int count)
{
    if (count < 1 || index < 0 || index >= count) throw std::invalid_argument("tree-gpu: share index out of range");
    impl_->share_index = index;
    impl_->share_count = count;
}

TreeStats TreeGpuEngine::loaded_statistics() const
{
    if (!impl_->loaded) throw std::logic_error("tree-gpu: no tree loaded");
    return statistics(*impl_->loaded).lists;
}

InteractionLists TreeGpuEngine::download_lists() const
{
    const Impl& d = *impl_;
    if (!d.evaluated) throw std::logic_error("tree-gpu: no evaluation to report");
    if (d.batches > 1)
        throw std::logic_error("tree-gpu: the last evaluation walked in " + std::to_string(d.batches) +
                               " batches, whose lists were not kept together");
    InteractionLists lists;
    const auto g = static_cast<std::size_t>(d.num_groups);
    static_assert(sizeof(long long) == sizeof(std::int64_t), "offsets are 64-bit");
    if (d.node_stride > 0) { // one-pass walk: each group's lists at g * stride or in the pool, packed here
        const auto packed = [&](const long long* d_count, const long long* d_place, const std::int32_t* d_list,
                                int stride, long long held, std::vector<std::int64_t>& offset,
                                std::vector<std::int32_t>& list) {
            std::vector<std::int64_t> count(g), place(g);
            std::vector<std::int32_t> all(static_cast<std::size_t>(held));
            if (g) CUDA_CHECK(cudaMemcpy(count.data(), d_count, g * 8, cudaMemcpyDeviceToHost));
            if (g) CUDA_CHECK(cudaMemcpy(place.data(), d_place, g * 8, cudaMemcpyDeviceToHost));
            if (!all.empty()) CUDA_CHECK(cudaMemcpy(all.data(), d_list, all.size() * 4, cudaMemcpyDeviceToHost));
            offset.assign(g + 1, 0);
            for (std::size_t k = 0; k < g; ++k) {
                offset[k + 1] = offset[k] + count[k];
                const auto at = static_cast<std::ptrdiff_t>(count[k] > stride ? place[k] : k * stride);
                list.insert(list.end(), all.begin() + at, all.begin() + at + count[k]);
            }
        };
        packed(d.d_node_count.data(), d.d_node_place.data(), d.d_node_list[0].data(), d.node_stride, d.pool_nodes_held,
               lists.node_offset, lists.node_list);
        packed(d.d_leaf_count.data(), d.d_leaf_place.data(), d.d_leaf_list[0].data(), d.leaf_stride, d.pool_leaves_held,
               lists.leaf_offset, lists.leaf_list);
        return lists;
    }
    lists.node_offset.resize(g + 1);
    lists.leaf_offset.resize(g + 1);
    lists.node_list.resize(static_cast<std::size_t>(d.total_nodes));
    lists.leaf_list.resize(static_cast<std::size_t>(d.total_leaves));
    CUDA_CHECK(cudaMemcpy(lists.node_offset.data(), d.d_node_offset.data(), (g + 1) * 8, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(lists.leaf_offset.data(), d.d_leaf_offset.data(), (g + 1) * 8, cudaMemcpyDeviceToHost));
    if (d.total_nodes)
        CUDA_CHECK(cudaMemcpy(lists.node_list.data(), d.d_node_list[0].data(), lists.node_list.size() * 4,
                              cudaMemcpyDeviceToHost));
    if (d.total_leaves)
        CUDA_CHECK(cudaMemcpy(lists.leaf_list.data(), d.d_leaf_list[0].data(), lists.leaf_list.size() * 4,
                              cudaMemcpyDeviceToHost));
    return lists;
}

std::vector<float> TreeGpuEngine::sum_last_lists(int segments)
{
    Impl& d = *impl_;
    const auto n = static_cast<std::size_t>(d.num_particles);
    std::vector<float> sums(4 * n);
    if (n == 0) return sums;
    d.d_out.reserve(n, "accelerations");
    d.evaluate_last_lists(segments, d.d_out.data());
    CUDA_CHECK(cudaMemcpyAsync(sums.data(), d.d_out.data(), n * sizeof(float4), cudaMemcpyDeviceToHost, d.stream));
    CUDA_CHECK(cudaStreamSynchronize(d.stream));
    return sums;
}

int TreeGpuEngine::last_walk_passes() const
{
    return impl_->walks;
}

int TreeGpuEngine::last_list_batches() const
{
    return impl_->batches;
}

DeviceMemory TreeGpuEngine::device_memory() const
{
    return {gpu::device_bytes_held(), impl_->list_bytes_held(), impl_->batches};
}

TreeGpuStats TreeGpuEngine::statistics(const Octree& tree) const
{
    const InteractionLists lists = download_lists();
    TreeGpuStats s;
    s.lists = list_statistics(tree, lists);
    LaneWork nodes, leaves;
    for (std::size_t g = 0; g < tree.groups.size(); ++g) {
        const ParticleRange r = tree.groups[g].range;
        std::int64_t leaf_sources = 0;
        for (std::int64_t k = lists.leaf_offset[g]; k < lists.leaf_offset[g + 1]; ++k) {
            const ParticleRange lr = tree.range[static_cast<std::size_t>(lists.leaf_list[static_cast<std::size_t>(k)])];
            leaf_sources += lr.end - lr.begin;
        }
        for (int first = r.begin; first < r.end; first += kMaxTargetsPerWarp) {
            const LaneLayout layout = choose_lane_layout(std::min(kMaxTargetsPerWarp, r.end - first));
            const LaneWork wn = lane_work(layout, lists.node_offset[g + 1] - lists.node_offset[g]);
            const LaneWork wl = lane_work(layout, leaf_sources);
            nodes.useful += wn.useful;
            nodes.slots += wn.slots;
            leaves.useful += wl.useful;
            leaves.slots += wl.slots;
        }
    }
    s.busy_nodes = nodes.slots > 0 ? nodes.useful / nodes.slots : 0;
    s.busy_leaves = leaves.slots > 0 ? leaves.useful / leaves.slots : 0;
    s.busy = (nodes.slots + leaves.slots) > 0 ? (nodes.useful + leaves.useful) / (nodes.slots + leaves.slots) : 0;
    s.interactions = nodes.useful + leaves.useful;
    return s;
}

} // namespace grove
