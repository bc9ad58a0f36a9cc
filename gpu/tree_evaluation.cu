// The GPU tree engine's upload and evaluation (tree_engine_impl.cuh): per opening criterion the
// per-node radii (and for the relative one the groups' scales from the host), the walk in one pass
// or two around a CUB scan (tree_walk.cu), the list evaluation (evaluate.cu), the permutation to
// the caller's order and the download; the host applies G (tree/store_forces.hpp).
#include "gpu/tree_engine_impl.cuh"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <stdexcept>

#include <cub/device/device_scan.cuh>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include "core/resize_keeping_memory.hpp"
#include "core/wall_clock.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/tree_walk.cuh"
#include "tree/float_tree.hpp"
#include "tree/list_batches.hpp"
#include "tree/store_forces.hpp"

namespace grove {

namespace {

// Sums from Morton order to the caller's order: a permutation, done where scattered writes are
// cheap.
__global__ void to_caller_order_kernel(int n, const std::uint32_t* order, const float4* sorted, float4* out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) out[order[k]] = sorted[k];
}

} // namespace

void TreeGpuEngine::Impl::upload(const Octree& t, bool with_order)
{
    if (t.particles.size() > static_cast<std::size_t>(INT32_MAX / 2))
        throw std::runtime_error("tree-gpu: at most 2^30 particles");
    const auto start = WallClock::now();
    num_particles = static_cast<int>(t.particles.size());
    num_nodes = t.num_nodes();
    num_groups = static_cast<int>(t.groups.size());
    const std::size_t counts[] = {static_cast<std::size_t>(num_particles), static_cast<std::size_t>(num_nodes),
                                  static_cast<std::size_t>(num_groups)};
    auto count = [&](const TreeArrayInfo& info) { return counts[static_cast<int>(info.extent)]; };
    for_each_array(host, [&](auto& a, const TreeArrayInfo& info) {
        if (!info.per_theta) a.reserve(count(info), info.name);
    });
    for_each_array(dev, [&](auto& a, const TreeArrayInfo& info) { a.reserve(count(info), info.name); });
    // The particles, the bulk of the upload, travel while the host packs the rest.
    pack_float_particles(t, pointers_of(host));
    if (num_particles > 0)
        CUDA_CHECK(cudaMemcpyAsync(dev.particles.data(), host.particles.data(),
                                   static_cast<std::size_t>(num_particles) * sizeof(*host.particles.data()),
                                   cudaMemcpyHostToDevice, stream));
    pack_float_nodes(t, pointers_of(host), with_order);
    order_uploaded = with_order;
    const double pack_seconds = seconds_since(start);
    const auto packed = WallClock::now();
    for_each_array_pair(host, dev, [&](auto& h, auto& d, const TreeArrayInfo& info) {
        const std::size_t n = count(info);
        const void* array = &h;
        const bool needed = array != static_cast<const void*>(&host.particles) &&
                            (with_order || array != static_cast<const void*>(&host.order));
        if (!info.per_theta && n && needed) // the device computes the per-theta arrays
            CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), n * sizeof(*h.data()), cudaMemcpyHostToDevice, stream));
    });
    make_softening_moments(t, half_eps2, softening);
    softening_by_type = !softening.empty();
    if (softening_by_type) {
        smallest_half = *std::min_element(softening.particle.begin(), softening.particle.end());
        d_particle_half.reserve(softening.particle.size(), "tree softening by type");
        d_node_half.reserve(softening.node.size(), "tree softening by type");
        d_node_radius2.reserve(softening.node.size(), "tree softening by type");
        CUDA_CHECK(cudaMemcpyAsync(d_node_radius2.data(), softening.radius2.data(),
                                   softening.radius2.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
        CUDA_CHECK(cudaMemcpyAsync(d_particle_half.data(), softening.particle.data(),
                                   softening.particle.size() * sizeof(float), cudaMemcpyHostToDevice, stream));
        CUDA_CHECK(cudaMemcpyAsync(d_node_half.data(), softening.node.data(), softening.node.size() * sizeof(float),
                                   cudaMemcpyHostToDevice, stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    // What the upload adds to the pack: the particles' part runs beside the packing, so the
    // copies' own duration would count that time twice.
    upload_times = {{"pack", pack_seconds}, {"upload", seconds_since(packed)}};
    loaded = &t;
    uploaded = true;
    evaluated = false;
}

gpu::ListSoftening TreeGpuEngine::Impl::list_softening() const
{
    gpu::ListSoftening s;
    s.eps2 = static_cast<float>(gravity.eps * gravity.eps);
    if (softening_by_type) {
        s.particle_half = d_particle_half.data();
        s.node_half = d_node_half.data();
        s.guard = !(2 * smallest_half > 0.f);
    }
    return s;
}

void TreeGpuEngine::Impl::evaluate(const OpeningCriterion& criterion, Forces& out, ForcesTo to)
{
    finish(enqueue(criterion, to), out);
}

TreeGpuEngine::Impl::Evaluation TreeGpuEngine::Impl::plan(const OpeningCriterion& criterion, ForcesTo to,
                                                          bool may_walk_once, WalkShape shape) const
{
    Evaluation e;
    e.criterion = criterion;
    e.to = to;
    e.shape = shape;
    // Forces left on the device feed a kick, which needs only the accelerations; their
    // potentials are made when they are stored (evaluate_potentials).
    e.potentials = to != ForcesTo::device;
    // This share's groups (set_share), of equal cost by the last evaluation's list lengths or of
    // equal particle counts (tree/group_shares.hpp); the walk and the evaluation see only them.
    // (A store on the device in block steps walks a selection of the tree's groups: all of num_groups.)
    e.share =
        share_count == 1 ? GroupRange{0, num_groups} : share_of_groups(*loaded, share_costs, share_index, share_count);
    const auto g = static_cast<long long>(e.share.last - e.share.first);
    e.key = std::make_tuple(static_cast<int>(criterion.kind), criterion.parameter(), shape.list_class);
    const auto found = list_room.find(e.key);
    e.room = found != list_room.end() ? found->second : ListRoom{};
    const long long room_entries = g * (e.room.nodes + e.room.leaves) + e.room.node_pool + e.room.leaf_pool;
    e.one_pass = may_walk_once && share_count == 1 && e.room.nodes > 0 && e.room.leaves > 0 &&
                 room_entries <= 4 * e.room.total + (1LL << 20);
    return e;
}

long long TreeGpuEngine::Impl::list_budget_entries(long long wanted)
{
    constexpr long long kEntry = sizeof(std::int32_t);
    const std::size_t held = list_bytes_held();
    long long budget = LLONG_MAX;
    if (params.list_memory > 0) budget = static_cast<long long>(params.list_memory / kEntry);
    // A reserve for what a step allocates after its lists (a grown tree, the group order's keys, on
    // domains the LETs' buffers grown) and for an output's potentials, made on the lists while they
    // are held (a float4 a particle): a 16th of the memory, at least 512 MiB.
    const auto reserve_of = [&](std::size_t memory) {
        return std::max<std::size_t>(memory / 16, std::size_t{512} << 20) +
               static_cast<std::size_t>(num_particles) * sizeof(float4);
    };
    if (params.device_memory > 0) { // what the limit leaves beside everything else held, as a device of that size would
        const std::size_t others = gpu::device_bytes_held() - held;
        const std::size_t taken = others + reserve_of(params.device_memory);
        const std::size_t room = params.device_memory > taken ? params.device_memory - taken : 0;
        budget = std::min(budget, static_cast<long long>(room / kEntry));
    }
    if (wanted * kEntry <= static_cast<long long>(held)) {
        // Lists that fit in what the list buffers hold may take that, no more: buffers shaped for
        // other batches then give their memory back before the others grow into it
        // (launch_batches). Without a bound they kept it, and one batch's buffer grew beside
        // another's into memory that was not free.
        budget = std::min(budget, static_cast<long long>(held / kEntry));
    } else {
        // Room to grow into: what is free besides what the lists hold, less the reserve.
        std::size_t free_bytes = 0, total_bytes = 0;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        const std::size_t reserve = reserve_of(total_bytes);
        const std::size_t room = free_bytes + held > reserve ? free_bytes + held - reserve : 0;
        budget = std::min(budget, static_cast<long long>(room / kEntry));
    }
    return std::max(budget, 1LL);
}

void TreeGpuEngine::Impl::reserve_evaluation_buffers(std::size_t g, ForcesTo to)
{
    const auto n = static_cast<std::size_t>(num_particles);
    d_node_count.reserve(g + 1, "node-list counts");
    d_leaf_count.reserve(g + 1, "leaf-list counts");
    d_node_offset.reserve(g + 1, "node-list offsets");
    d_leaf_offset.reserve(g + 1, "leaf-list offsets");
    d_sorted.reserve(n, "sorted accelerations");
    // Forces left on the device (a resident step's) need neither the permuted copy nor the download's.
    if (to == ForcesTo::caller_order) d_out.reserve(n, "accelerations");
    if (to != ForcesTo::device) h_sorted.reserve(n, "accelerations");
    h_totals.reserve(2, "list totals");
    h_mismatch.reserve(1, "walk check");
    d_mismatch.reserve(1, "walk check");
    h_longest.reserve(3, "longest lists");
    d_longest.reserve(3, "longest lists");
    d_node_place.reserve(g, "node-list places");
    d_leaf_place.reserve(g, "leaf-list places");
    d_pool_cursor.reserve(4, "list pools");
    d_walk_totals.reserve(kWalkTotals, "list totals");
    h_walk_totals.reserve(kWalkTotals, "list totals");
    d_next_group.reserve(2, "group counters");
    std::size_t scan_bytes = 0;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, d_node_count.data(), d_node_offset.data(),
                                             static_cast<int>(g + 1), stream));
    d_scan_temp.reserve(scan_bytes, "scan workspace");
}

TreeGpuEngine::Impl::Evaluation TreeGpuEngine::Impl::enqueue(const OpeningCriterion& criterion, ForcesTo to,
                                                             bool may_walk_once, GroupScales scales, WalkShape shape,
                                                             cudaEvent_t lists_after)
{
    if (!uploaded) throw std::logic_error("tree-gpu: evaluate before upload");
    if (!(criterion.parameter() > 0)) throw std::invalid_argument("tree-gpu: theta and alpha must be > 0");
    if (to == ForcesTo::caller_order && !order_uploaded)
        throw std::logic_error("tree-gpu: forces wanted in the caller's order, but no order was uploaded");
    const auto n = static_cast<std::size_t>(num_particles);
    const bool relative = criterion.kind == MacKind::relative;
    const bool host_scales = relative && scales == GroupScales::from_estimate;
    // The first pass's forces come in the caller's order, as the estimate is kept.
    const auto first_pass = [&](const OpeningCriterion& c, Forces& f) { evaluate(c, f, ForcesTo::caller_order); };
    const double first_pass_seconds =
        host_scales ? estimate_by_first_pass(estimate, n, gravity.G, first_pass_forces, first_pass) : -1;
    handed_over = false;
    times.clear();
    if (n == 0) {
        Evaluation none;
        none.criterion = criterion;
        none.to = to;
        none.first_pass_seconds = first_pass_seconds;
        return none;
    }
    Evaluation e = plan(criterion, to, may_walk_once, shape);
    e.first_pass_seconds = first_pass_seconds;
    e.scales = scales;
    e.lists_after = lists_after;
    if (host_scales) { // the groups' scales from the estimate, on the host
        host.mac_scale.reserve(static_cast<std::size_t>(num_groups), "tree group scales");
        fill_group_mac_scales(loaded->groups, loaded->order.data(), estimate.magnitudes(), host.mac_scale.data());
    }
    reserve_evaluation_buffers(static_cast<std::size_t>(e.share.last - e.share.first), to);
    const OctreeView<float> view = launch_radii(e);
    if (share_count > 1) // the particles of other shares get zero
        CUDA_CHECK(cudaMemsetAsync(d_sorted.data(), 0, n * sizeof(float4), stream));
    CUDA_CHECK(cudaMemsetAsync(d_longest.data(), 0, 3 * sizeof(int), stream));
    CUDA_CHECK(cudaMemsetAsync(d_walk_totals.data(), 0, kWalkTotals * sizeof(unsigned long long), stream));
    CUDA_CHECK(cudaEventRecord(events[kRadiiDone], stream));
    if (e.one_pass) {
        for (int ev = kPass1Done; ev <= kScanDone; ++ev) CUDA_CHECK(cudaEventRecord(events[ev], stream)); // no pass 1
        // Every batch has the share's pool: the long lists may all fall in one.
        const long long per_group = e.room.nodes + e.room.leaves, pool = e.room.node_pool + e.room.leaf_pool;
        const long long wanted = view.num_groups * per_group + pool;
        e.budget = list_budget_entries(wanted);
        e.batches = wanted <= e.budget ? std::vector<GroupRange>{e.share}
                                       : batches_by_room(e.share, per_group, std::max(e.budget / 2 - pool, 1LL));
    } else {
        launch_count(e, view);
    }
    launch_batches(e, view);
    launch_download(e);
    return e;
}

OctreeView<float> TreeGpuEngine::Impl::launch_radii(const Evaluation& e)
{
    const bool relative = e.criterion.kind == MacKind::relative;
    OctreeView<float> view = device_view();
    CUDA_CHECK(cudaEventRecord(events[kBegin], stream));
    // The relative criterion keeps a geometric bound (at least the floor) under its own test.
    const double theta = e.criterion.geometric_theta();
    gpu::launch_opening_radii(num_nodes, dev.size.data(), dev.com_offset.data(), static_cast<float>(theta),
                              softening_by_type ? d_node_radius2.data() : nullptr, dev.r_open2.data(), stream);
    if (relative) {
        if (e.scales == GroupScales::from_estimate)
            CUDA_CHECK(cudaMemcpyAsync(dev.mac_scale.data(), host.mac_scale.data(),
                                       static_cast<std::size_t>(num_groups) * sizeof(float), cudaMemcpyHostToDevice,
                                       stream));
        gpu::launch_relative_radii(num_nodes, dev.size.data(), dev.com_mass.data(),
                                   static_cast<float>(e.criterion.alpha), dev.r_rel2.data(), stream);
        view.r_rel2 = dev.r_rel2.data();
        view.mac_scale = dev.mac_scale.data() + e.share.first;
    }
    d_walk_nodes.reserve(static_cast<std::size_t>(num_nodes), "walk nodes");
    gpu::launch_pack_walk_nodes(view, d_walk_nodes.data(), stream);
    view.walk_nodes = d_walk_nodes.data();
    view.groups += e.share.first;
    view.num_groups = e.share.last - e.share.first;
    return view;
}

void TreeGpuEngine::Impl::launch_count(Evaluation& e, const OctreeView<float>& view)
{
    const auto g = static_cast<std::size_t>(view.num_groups);
    gpu::launch_walk_count(view, d_node_count.data(), d_leaf_count.data(), d_longest.data(), stream);
    CUDA_CHECK(cudaEventRecord(events[kPass1Done], stream));
    // The counts' extra last entry is 0, so offset[g] is the total.
    CUDA_CHECK(cudaMemsetAsync(d_node_count.data() + g, 0, sizeof(long long), stream));
    CUDA_CHECK(cudaMemsetAsync(d_leaf_count.data() + g, 0, sizeof(long long), stream));
    std::size_t scan_bytes = d_scan_temp.capacity();
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_scan_temp.data(), scan_bytes, d_node_count.data(), d_node_offset.data(),
                                             static_cast<int>(g + 1), stream));
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_scan_temp.data(), scan_bytes, d_leaf_count.data(), d_leaf_offset.data(),
                                             static_cast<int>(g + 1), stream));
    CUDA_CHECK(
        cudaMemcpyAsync(h_totals.data(), d_node_offset.data() + g, sizeof(long long), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_totals.data() + 1, d_leaf_offset.data() + g, sizeof(long long), cudaMemcpyDeviceToHost,
                               stream));
    if (share_count > 1 && g > 0) { // this share's list lengths: the costs that cut the next shares
        h_node_count.reserve(g, "node-list counts");
        h_leaf_count.reserve(g, "leaf-list counts");
        CUDA_CHECK(cudaMemcpyAsync(h_node_count.data(), d_node_count.data(), g * sizeof(long long),
                                   cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaMemcpyAsync(h_leaf_count.data(), d_leaf_count.data(), g * sizeof(long long),
                                   cudaMemcpyDeviceToHost, stream));
    }
    CUDA_CHECK(cudaMemsetAsync(d_mismatch.data(), 0, sizeof(int), stream));
    CUDA_CHECK(cudaEventRecord(events[kScanDone], stream));
    CUDA_CHECK(cudaStreamSynchronize(stream)); // list sizes decide the allocations
    total_nodes = h_totals[0];
    total_leaves = h_totals[1];
    if (share_count > 1)
        last_costs = g > 0 ? group_costs_from_counts(*loaded, h_node_count.data(), h_leaf_count.data(), e.share)
                           : std::vector<double>(static_cast<std::size_t>(num_particles), 0.0);
    const long long wanted = total_nodes + total_leaves;
    e.budget = list_budget_entries(wanted);
    if (wanted <= e.budget) {
        e.batches = {e.share};
        return;
    }
    // Cut where the scanned lengths say, from the offsets copied back.
    h_node_offset.reserve(g + 1, "node-list offsets");
    h_leaf_offset.reserve(g + 1, "leaf-list offsets");
    CUDA_CHECK(cudaMemcpyAsync(h_node_offset.data(), d_node_offset.data(), (g + 1) * sizeof(long long),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_leaf_offset.data(), d_leaf_offset.data(), (g + 1) * sizeof(long long),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    static_assert(sizeof(long long) == sizeof(std::int64_t), "offsets are 64-bit");
    e.batches =
        batches_by_lengths(e.share, reinterpret_cast<const std::int64_t*>(h_node_offset.data()),
                           reinterpret_cast<const std::int64_t*>(h_leaf_offset.data()), std::max(e.budget / 2, 1LL));
}

namespace {

// A batch's offsets from 0: out[i] = offset[i] - offset[0] for i = 0 ... count.
__global__ void rebase_offsets_kernel(int count, const long long* node_offset, const long long* leaf_offset,
                                      long long* node_out, long long* leaf_out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > count) return;
    node_out[i] = node_offset[i] - node_offset[0];
    leaf_out[i] = leaf_offset[i] - leaf_offset[0];
}

} // namespace

void TreeGpuEngine::Impl::launch_batch_walk(const Evaluation& e, const OctreeView<float>& batch_view, GroupRange batch,
                                            int buffer, gpu::ListIndex& nodes, gpu::ListIndex& leaves, cudaStream_t on)
{
    const int k0 = batch.first - e.share.first; // the batch's first group within the share
    std::int32_t* node_list = d_node_list[buffer].data();
    std::int32_t* leaf_list = d_leaf_list[buffer].data();
    if (e.one_pass) {
        const long long groups = batch_view.num_groups;
        const long long node_pool = e.room.node_pool, leaf_pool = e.room.leaf_pool;
        gpu::BoundedLists lists;
        lists.node_capacity = e.room.nodes;
        lists.leaf_capacity = e.room.leaves;
        lists.node_list = node_list;
        lists.leaf_list = leaf_list;
        lists.node_count = d_node_count.data() + k0;
        lists.leaf_count = d_leaf_count.data() + k0;
        lists.node_place = d_node_place.data() + k0;
        lists.leaf_place = d_leaf_place.data() + k0;
        lists.node_pool_base = groups * e.room.nodes;
        lists.leaf_pool_base = groups * e.room.leaves;
        lists.node_pool_capacity = node_pool;
        lists.leaf_pool_capacity = leaf_pool;
        lists.pool = d_pool_cursor.data() + 2 * buffer;
        lists.longest = d_longest.data();
        lists.totals = d_walk_totals.data();
        CUDA_CHECK(cudaMemsetAsync(lists.pool, 0, 2 * sizeof(unsigned long long), on));
        gpu::launch_walk_bounded(batch_view, lists, on);
        nodes = {nullptr, lists.node_count, e.room.nodes, nullptr, lists.node_place};
        leaves = {nullptr, lists.leaf_count, e.room.leaves, nullptr, lists.leaf_place};
        pool_nodes_held = lists.node_pool_base + node_pool;
        pool_leaves_held = lists.leaf_pool_base + leaf_pool;
    } else if (e.batches.size() == 1) { // the share's lists at its scanned offsets
        gpu::launch_walk_write(batch_view, d_node_offset.data(), d_leaf_offset.data(), node_list, leaf_list,
                               d_mismatch.data(), on);
        nodes = {d_node_offset.data(), nullptr, 0};
        leaves = {d_leaf_offset.data(), nullptr, 0};
    } else { // the batch's lists at its offsets from 0
        const int count = batch_view.num_groups;
        long long* node_offset = d_batch_node_offset[buffer].data();
        long long* leaf_offset = d_batch_leaf_offset[buffer].data();
        rebase_offsets_kernel<<<static_cast<unsigned>(gpu::ceil_div(count + 1, 256)), 256, 0, on>>>(
            count, d_node_offset.data() + k0, d_leaf_offset.data() + k0, node_offset, leaf_offset);
        gpu::check_launch("rebase_offsets_kernel", on);
        gpu::launch_walk_write(batch_view, node_offset, leaf_offset, node_list, leaf_list, d_mismatch.data(), on);
        nodes = {node_offset, nullptr, 0};
        leaves = {leaf_offset, nullptr, 0};
    }
    group_order[buffer].sort(batch_view, nodes, leaves, on);
}

void TreeGpuEngine::Impl::launch_batches(const Evaluation& e, const OctreeView<float>& view)
{
    const std::size_t count = e.batches.size();
    // Room for the largest batch in each buffer, reserved before any batch runs (a buffer that
    // grows frees its memory, which waits for the device).
    std::size_t node_room = 0, leaf_room = 0, groups = 0;
    for (const GroupRange& b : e.batches) {
        const auto k0 = static_cast<std::size_t>(b.first - e.share.first);
        const auto k1 = static_cast<std::size_t>(b.last - e.share.first);
        groups = std::max(groups, k1 - k0);
        if (e.one_pass) {
            node_room = std::max(node_room, (k1 - k0) * static_cast<std::size_t>(e.room.nodes) +
                                                static_cast<std::size_t>(e.room.node_pool));
            leaf_room = std::max(leaf_room, (k1 - k0) * static_cast<std::size_t>(e.room.leaves) +
                                                static_cast<std::size_t>(e.room.leaf_pool));
        } else if (count == 1) {
            node_room = static_cast<std::size_t>(total_nodes);
            leaf_room = static_cast<std::size_t>(total_leaves);
        } else {
            node_room = std::max(node_room, static_cast<std::size_t>(h_node_offset[k1] - h_node_offset[k0]));
            leaf_room = std::max(leaf_room, static_cast<std::size_t>(h_leaf_offset[k1] - h_leaf_offset[k0]));
        }
    }
    const int buffers = count > 1 ? 2 : 1;
    // What the buffers would hold with each keeping its memory where that is enough. Buffers sized
    // for other batches (smaller, or larger than these need) give their memory back first where
    // that would not fit: the budget counts what the lists hold as room for these.
    std::size_t after = 0;
    for (int b = 0; b < 2; ++b)
        after += b < buffers
                     ? std::max(d_node_list[b].capacity(), node_room) + std::max(d_leaf_list[b].capacity(), leaf_room)
                     : d_node_list[b].capacity() + d_leaf_list[b].capacity();
    if (static_cast<long long>(after) > e.budget)
        for (int b = 0; b < 2; ++b) {
            if (d_node_list[b].capacity() != node_room || b >= buffers) d_node_list[b].release();
            if (d_leaf_list[b].capacity() != leaf_room || b >= buffers) d_leaf_list[b].release();
        }
    for (int b = 0; b < buffers; ++b) {
        d_node_list[b].reserve(std::max<std::size_t>(node_room, 1), "node lists");
        d_leaf_list[b].reserve(std::max<std::size_t>(leaf_room, 1), "leaf lists");
        if (count > 1 && !e.one_pass) {
            d_batch_node_offset[b].reserve(groups + 1, "a batch's node-list offsets");
            d_batch_leaf_offset[b].reserve(groups + 1, "a batch's leaf-list offsets");
        }
    }
    while (batch_events.size() < count) {
        std::array<cudaEvent_t, kBatchEvents> ev{};
        for (cudaEvent_t& one : ev) CUDA_CHECK(cudaEventCreate(&one));
        batch_events.push_back(ev);
    }

    const bool overlap = count > 1; // batch b + 1 walks on walk_stream while batch b is evaluated
    if (overlap) CUDA_CHECK(cudaStreamWaitEvent(walk_stream, events[kScanDone], 0));
    last_lists.evaluation = e;
    last_lists.view = view;
    last_lists.softening = list_softening();
    for (std::size_t b = 0; b < count; ++b) {
        const GroupRange batch = e.batches[b];
        const int buffer = static_cast<int>(b % 2);
        const int k0 = batch.first - e.share.first;
        OctreeView<float> batch_view = view;
        batch_view.groups += k0;
        batch_view.num_groups = batch.last - batch.first;
        if (batch_view.mac_scale) batch_view.mac_scale += k0;
        const cudaStream_t on = overlap ? walk_stream : stream;
        auto& ev = batch_events[b];
        if (overlap && b >= 2) CUDA_CHECK(cudaStreamWaitEvent(walk_stream, buffer_free[buffer], 0));
        CUDA_CHECK(cudaEventRecord(ev[kBatchBegin], on));
        gpu::ListIndex nodes, leaves;
        launch_batch_walk(e, batch_view, batch, buffer, nodes, leaves, on);
        CUDA_CHECK(cudaEventRecord(ev[kBatchWalked], on));
        if (overlap) CUDA_CHECK(cudaStreamWaitEvent(stream, ev[kBatchWalked], 0));
        if (b == 0 && e.lists_after) CUDA_CHECK(cudaStreamWaitEvent(stream, e.lists_after, 0));
        // A block tick's pieces (at most a warp's targets each) are few: their lists in stretches.
        const int segments = e.shape.few_groups ? gpu::split_segments(batch_view.num_groups) : 1;
        launch_list_kernels(batch_view, nodes, leaves, buffer, e.out ? e.out : d_sorted.data(), e.potentials, segments,
                            ev[kBatchNodesDone]);
        CUDA_CHECK(cudaEventRecord(ev[kBatchLeavesDone], stream));
        if (overlap) CUDA_CHECK(cudaEventRecord(buffer_free[buffer], stream));
        last_lists.nodes = nodes;
        last_lists.leaves = leaves;
    }
    CUDA_CHECK(cudaEventRecord(events[kListsDone], stream));
}

void TreeGpuEngine::Impl::launch_list_kernels(const OctreeView<float>& view, const gpu::ListIndex& nodes,
                                              const gpu::ListIndex& leaves, int buffer, float4* out, bool potentials,
                                              int segments, cudaEvent_t nodes_done)
{
    gpu::ListSplit node_split, leaf_split;
    if (segments > 1) {
        const auto slots = static_cast<std::size_t>(view.num_groups) * segments * gpu::kSplitTargets;
        d_split_partial.reserve(2 * slots, "list stretches' sums");
        node_split = {segments, d_split_partial.data()};
        leaf_split = {segments, d_split_partial.data() + slots};
    }
    CUDA_CHECK(cudaMemsetAsync(d_next_group.data(), 0, 2 * sizeof(int), stream));
    gpu::launch_evaluate_nodes(view, nodes, d_node_list[buffer].data(), last_lists.softening, out, d_next_group.data(),
                               d_walk_totals.data() + kCellPairs, potentials, stream, node_split);
    if (nodes_done) CUDA_CHECK(cudaEventRecord(nodes_done, stream));
    gpu::launch_evaluate_leaves(view, leaves, d_leaf_list[buffer].data(), last_lists.softening, out,
                                d_next_group.data() + 1, d_walk_totals.data() + kParticlePairs, potentials, stream,
                                leaf_split);
    if (segments > 1) gpu::launch_sum_split(view, node_split, leaf_split, out, stream);
}

void TreeGpuEngine::Impl::launch_download(const Evaluation& e)
{
    const auto n = static_cast<std::size_t>(num_particles);
    if (e.to == ForcesTo::caller_order) {
        to_caller_order_kernel<<<static_cast<unsigned>(gpu::ceil_div(n, 256)), 256, 0, stream>>>(
            num_particles, dev.order.data(), d_sorted.data(), d_out.data());
        gpu::check_launch("to_caller_order_kernel", stream);
    }
    if (e.to != ForcesTo::device)
        CUDA_CHECK(cudaMemcpyAsync(h_sorted.data(), e.to == ForcesTo::tree_order ? d_sorted.data() : d_out.data(),
                                   n * sizeof(float4), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_mismatch.data(), d_mismatch.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_longest.data(), d_longest.data(), 3 * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_walk_totals.data(), d_walk_totals.data(), kWalkTotals * sizeof(unsigned long long),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaEventRecord(events[kDownloaded], stream));
}

namespace {

// A list's length where it is longer than `room`, else 0.
struct LongerThan {
    long long room;
    __host__ __device__ long long operator()(long long length) const { return length > room ? length : 0; }
};

} // namespace

TreeGpuEngine::Impl::ListRoom TreeGpuEngine::Impl::next_room(const Evaluation& e) const
{
    const long long groups = std::max(e.share.last - e.share.first, 1);
    const auto nodes = static_cast<long long>(e.one_pass ? h_walk_totals[0] : total_nodes);
    const auto leaves = static_cast<long long>(e.one_pass ? h_walk_totals[1] : total_leaves);
    const auto more = [](long long entries) { return (entries + entries / 4 + 15) / 8 * 8; };
    ListRoom r;
    r.nodes = static_cast<int>(more(std::min<long long>(h_longest[0], 2 * nodes / groups)));
    r.leaves = static_cast<int>(more(std::min<long long>(h_longest[1], 2 * leaves / groups)));
    r.total = nodes + leaves;
    // What the lists longer than the room took: measured by the one-pass walk, summed here from
    // the counts of the two-pass one.
    const auto beyond = [&](const long long* count, int room) {
        return thrust::transform_reduce(thrust::cuda::par.on(stream), count, count + groups, LongerThan{room}, 0LL,
                                        thrust::plus<long long>());
    };
    // Twice what they took, and at least a 64th of all entries: the next tree's long lists take
    // more or less than this one's, and a pool found full walks and evaluates the whole step again.
    const auto pool = [&](long long took, long long entries) { return more(std::max(2 * took, entries / 64)); };
    r.node_pool =
        pool(e.one_pass ? static_cast<long long>(h_walk_totals[2]) : beyond(d_node_count.data(), r.nodes), nodes);
    r.leaf_pool =
        pool(e.one_pass ? static_cast<long long>(h_walk_totals[3]) : beyond(d_leaf_count.data(), r.leaves), leaves);
    // Ticks of one kind in block steps walk other groups each time: their pools may take any list.
    if (e.shape.list_class != 0) {
        r.node_pool = more(nodes);
        r.leaf_pool = more(leaves);
    }
    return r;
}

void TreeGpuEngine::Impl::finish(const Evaluation& e, Forces& out)
{
    const auto n = static_cast<std::size_t>(num_particles);
    if (e.to != ForcesTo::device) {
        resize_keeping_memory(out.acc, static_cast<Eigen::Index>(n)); // a forest's size moves a little each step
        resize_keeping_memory(out.pot, static_cast<Eigen::Index>(n));
    }
    if (n == 0) {
        if (e.first_pass_seconds >= 0) times.emplace_back("first pass", e.first_pass_seconds);
        last_work = {};
        return;
    }
    CUDA_CHECK(cudaEventSynchronize(events[kDownloaded]));
    if (!e.one_pass && h_mismatch[0] != 0)
        throw std::logic_error("tree-gpu: walk pass 2 wrote other list lengths than pass 1 counted (group " +
                               std::to_string(h_mismatch[0] - 1) + " of a batch)");
    list_room[e.key] = next_room(e);
    node_stride = e.one_pass ? e.room.nodes : 0;
    leaf_stride = e.one_pass ? e.room.leaves : 0;
    walks = e.one_pass ? 1 : 2;
    batches = static_cast<int>(e.batches.size());
    if (e.one_pass && h_longest[2] != 0) {
        // Some list did not fit and was cut: this evaluation again, with both passes. The lost
        // attempt's time is a phase of its own, so that a benchmark shows it rather than hiding it
        // in the host's time between phases.
        float lost_ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&lost_ms, events[kBegin], events[kDownloaded]));
        const int why = h_longest[2];
        Evaluation again = enqueue(e.criterion, e.to, false, e.scales, e.shape);
        again.first_pass_seconds = e.first_pass_seconds;
        finish(again, out);
        times.emplace_back(std::string(kLostEvaluationPhase) + (why & gpu::kPoolFull ? ", pool full" : ""),
                           lost_ms * 1e-3);
        walks = 3;
        return;
    }
    if (e.first_pass_seconds >= 0) times.emplace_back("first pass", e.first_pass_seconds);
    last_work = {static_cast<double>(h_walk_totals[kCellPairs]), static_cast<double>(h_walk_totals[kParticlePairs]),
                 static_cast<double>(e.one_pass ? h_walk_totals[0] : total_nodes),
                 static_cast<double>(e.one_pass ? h_walk_totals[1] : total_leaves),
                 static_cast<double>(e.share.last - e.share.first)};
    const auto elapsed = [](cudaEvent_t from, cudaEvent_t to) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
        return ms * 1e-3;
    };
    times.emplace_back("opening radii", elapsed(events[kBegin], events[kRadiiDone]));
    times.emplace_back("pass 1", elapsed(events[kRadiiDone], events[kPass1Done]));
    times.emplace_back("scan", elapsed(events[kPass1Done], events[kScanDone]));
    // Each batch's phases, summed (with several batches a walk runs beside an evaluation).
    double walk = 0, node_lists = 0, leaf_lists = 0;
    for (std::size_t b = 0; b < e.batches.size(); ++b) {
        const auto& ev = batch_events[b];
        walk += elapsed(ev[kBatchBegin], ev[kBatchWalked]);
        node_lists += elapsed(ev[kBatchWalked], ev[kBatchNodesDone]);
        leaf_lists += elapsed(ev[kBatchNodesDone], ev[kBatchLeavesDone]);
    }
    times.emplace_back("pass 2", walk);
    times.emplace_back("nodes", node_lists);
    times.emplace_back("leaves", leaf_lists);
    times.emplace_back("download", elapsed(events[kListsDone], events[kDownloaded]));
    evaluated = true;
    handed_over = e.to == ForcesTo::tree_order;
    if (e.to == ForcesTo::device) return;
    const auto convert_start = WallClock::now();
    static_assert(sizeof(Accum<float>) == sizeof(float4), "the kernels write Accum<float> as float4");
    store_forces(nullptr, reinterpret_cast<const Accum<float>*>(h_sorted.data()), static_cast<Eigen::Index>(n),
                 gravity.G, out);
    times.emplace_back("convert", seconds_since(convert_start));
}

void TreeGpuEngine::Impl::release_host_path_buffers()
{
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int b = 0; b < 2; ++b) {
        d_node_list[b].release();
        d_leaf_list[b].release();
        d_batch_node_offset[b].release();
        d_batch_leaf_offset[b].release();
    }
    d_out.release();
    evaluated = false; // the lists the potentials would be made from are gone
    // The host's side of the host pipeline: its trees, their packed copy and the forces' copies.
    // A store on the device builds its own trees; the host pipeline makes these again if it runs.
    tree = Octree{};
    updater.release();
    loaded = nullptr;
    uploaded = false;
    for_each_array(host, [](auto& a, const TreeArrayInfo&) { a.release(); });
    h_sorted.release();
    forces = Forces{};
    first_pass_forces = Forces{};
    estimate.release();
}

void TreeGpuEngine::Impl::evaluate_last_lists(int segments, float4* out)
{
    if (!evaluated) throw std::logic_error("tree-gpu: no evaluation to evaluate again");
    if (batches > 1) throw std::logic_error("tree-gpu: the last evaluation's lists were not kept together");
    if (segments < 1) throw std::invalid_argument("tree-gpu: stretches must be >= 1");
    const LastLists& l = last_lists;
    if (segments > 1 && loaded == nullptr) throw std::logic_error("tree-gpu: no uploaded tree to evaluate again");
    if (segments > 1)
        for (int g = 0; g < l.view.num_groups; ++g) {
            const ParticleRange r = loaded->groups[static_cast<std::size_t>(l.evaluation.share.first + g)].range;
            if (r.end - r.begin > gpu::kSplitTargets)
                throw std::invalid_argument("tree-gpu: lists in stretches need groups of at most " +
                                            std::to_string(gpu::kSplitTargets) + " particles");
        }
    launch_list_kernels(l.view, l.nodes, l.leaves, 0, out, true, segments);
}

void TreeGpuEngine::Impl::evaluate_potentials(float4* out)
{
    if (num_particles == 0) return;
    if (!evaluated) throw std::logic_error("tree-gpu: potentials before an evaluation");
    const LastLists& l = last_lists;
    if (l.view.num_groups == 0) return;
    if (batches > 1) { // the earlier batches' lists are gone: walk them again
        Evaluation again = l.evaluation;
        again.potentials = true;
        again.out = out;
        launch_batches(again, OctreeView<float>(l.view));
        return;
    }
    launch_list_kernels(l.view, l.nodes, l.leaves, 0, out, true, 1);
}

} // namespace grove
