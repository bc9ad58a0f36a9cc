// The GPU tree engine's upload and evaluation (tree_engine_impl.cuh): per opening criterion the
// per-node radii (and for the relative one the groups' scales from the host), the walk in one pass
// or two around a CUB scan (tree_walk.cu), the list evaluation (evaluate.cu), the permutation to
// the caller's order and the download; the host applies G (tree/store_forces.hpp).
#include "gpu/tree_engine_impl.cuh"

#include <algorithm>
#include <stdexcept>

#include <cub/device/device_scan.cuh>

#include "core/wall_clock.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/tree_walk.cuh"
#include "tree/float_tree.hpp"
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

// The phase between each event and the next (kScanDone to kPass2Begin is the host's wait).
constexpr const char* kPhaseNames[kEvaluationEvents - 1] = {"opening radii", "pass 1", "scan",   nullptr,
                                                            "pass 2",        "nodes",  "leaves", "download"};

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
    CUDA_CHECK(cudaStreamSynchronize(stream));
    // What the upload adds to the pack: the particles' part runs beside the packing, so the
    // copies' own duration would count that time twice.
    upload_times = {{"pack", pack_seconds}, {"upload", seconds_since(packed)}};
    loaded = &t;
    uploaded = true;
    evaluated = false;
}

void TreeGpuEngine::Impl::evaluate(const OpeningCriterion& criterion, Forces& out, ForcesTo to)
{
    finish(enqueue(criterion, to), out);
}

TreeGpuEngine::Impl::Evaluation TreeGpuEngine::Impl::plan(const OpeningCriterion& criterion, ForcesTo to,
                                                          bool may_walk_once) const
{
    Evaluation e;
    e.criterion = criterion;
    e.to = to;
    // This share's groups (set_share), of equal cost by the last evaluation's list lengths or of
    // equal particle counts (tree/group_shares.hpp); the walk and the evaluation see only them.
    e.share = share_of_groups(*loaded, share_costs, share_index, share_count);
    const auto g = static_cast<long long>(e.share.last - e.share.first);
    e.key = std::make_pair(static_cast<int>(criterion.kind), criterion.parameter());
    const auto found = list_room.find(e.key);
    e.room = found != list_room.end() ? found->second : ListRoom{};
    const long long room_entries = g * (e.room.nodes + e.room.leaves);
    e.one_pass = may_walk_once && share_count == 1 && e.room.nodes > 0 && e.room.leaves > 0 &&
                 room_entries <= 4 * e.room.total + (1LL << 20);
    return e;
}

void TreeGpuEngine::Impl::reserve_evaluation_buffers(std::size_t g)
{
    const auto n = static_cast<std::size_t>(num_particles);
    d_node_count.reserve(g + 1, "node-list counts");
    d_leaf_count.reserve(g + 1, "leaf-list counts");
    d_node_offset.reserve(g + 1, "node-list offsets");
    d_leaf_offset.reserve(g + 1, "leaf-list offsets");
    d_sorted.reserve(n, "sorted accelerations");
    d_out.reserve(n, "accelerations");
    h_sorted.reserve(n, "accelerations");
    h_totals.reserve(2, "list totals");
    h_mismatch.reserve(1, "walk check");
    d_mismatch.reserve(1, "walk check");
    h_longest.reserve(2, "longest lists");
    d_longest.reserve(2, "longest lists");
    d_next_group.reserve(2, "group counters");
    std::size_t scan_bytes = 0;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, d_node_count.data(), d_node_offset.data(),
                                             static_cast<int>(g + 1), stream));
    d_scan_temp.reserve(scan_bytes, "scan workspace");
}

TreeGpuEngine::Impl::Evaluation TreeGpuEngine::Impl::enqueue(const OpeningCriterion& criterion, ForcesTo to,
                                                             bool may_walk_once)
{
    if (!uploaded) throw std::logic_error("tree-gpu: evaluate before upload");
    if (!(criterion.parameter() > 0)) throw std::invalid_argument("tree-gpu: theta and alpha must be > 0");
    if (to == ForcesTo::caller_order && !order_uploaded)
        throw std::logic_error("tree-gpu: forces wanted in the caller's order, but no order was uploaded");
    const auto n = static_cast<std::size_t>(num_particles);
    const bool relative = criterion.kind == MacKind::relative;
    // The first pass's forces come in the caller's order, as the estimate is kept.
    const auto first_pass = [&](const OpeningCriterion& c, Forces& f) { evaluate(c, f, ForcesTo::caller_order); };
    const double first_pass_seconds =
        relative ? estimate_by_first_pass(estimate, n, gravity.G, first_pass_forces, first_pass) : -1;
    handed_over = false;
    times.clear();
    if (n == 0) {
        Evaluation none;
        none.criterion = criterion;
        none.to = to;
        none.first_pass_seconds = first_pass_seconds;
        return none;
    }
    Evaluation e = plan(criterion, to, may_walk_once);
    e.first_pass_seconds = first_pass_seconds;
    if (relative) { // the groups' scales from the estimate, on the host
        host.mac_scale.reserve(static_cast<std::size_t>(num_groups), "tree group scales");
        fill_group_mac_scales(loaded->groups, loaded->order.data(), estimate.magnitudes(), host.mac_scale.data());
    }
    reserve_evaluation_buffers(static_cast<std::size_t>(e.share.last - e.share.first));
    const OctreeView<float> view = launch_radii(e);
    if (share_count > 1) // the particles of other shares get zero
        CUDA_CHECK(cudaMemsetAsync(d_sorted.data(), 0, n * sizeof(float4), stream));
    CUDA_CHECK(cudaMemsetAsync(d_longest.data(), 0, 2 * sizeof(int), stream));
    CUDA_CHECK(cudaEventRecord(events[kRadiiDone], stream));
    if (e.one_pass)
        launch_walk_once(e, view);
    else
        launch_walk_twice(e, view);
    launch_lists(e, view);
    return e;
}

OctreeView<float> TreeGpuEngine::Impl::launch_radii(const Evaluation& e)
{
    const bool relative = e.criterion.kind == MacKind::relative;
    OctreeView<float> view = device_view();
    CUDA_CHECK(cudaEventRecord(events[kBegin], stream));
    // The relative criterion keeps the geometric floor (theta = 2/sqrt(3)) under its own test.
    const double theta = relative ? kMaxTheta : e.criterion.theta;
    gpu::launch_opening_radii(num_nodes, dev.size.data(), dev.com_offset.data(), static_cast<float>(theta),
                              dev.r_open2.data(), stream);
    if (relative) {
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

void TreeGpuEngine::Impl::launch_walk_once(const Evaluation& e, const OctreeView<float>& view)
{
    const auto g = static_cast<std::size_t>(view.num_groups);
    d_node_list.reserve(g * static_cast<std::size_t>(e.room.nodes), "node lists");
    d_leaf_list.reserve(g * static_cast<std::size_t>(e.room.leaves), "leaf lists");
    for (int ev = kPass1Done; ev <= kPass2Begin; ++ev) CUDA_CHECK(cudaEventRecord(events[ev], stream)); // no pass 1
    CUDA_CHECK(cudaMemsetAsync(d_next_group.data(), 0, 2 * sizeof(int), stream));
    gpu::launch_walk_bounded(view, e.room.nodes, e.room.leaves, d_node_list.data(), d_leaf_list.data(),
                             d_node_count.data(), d_leaf_count.data(), d_longest.data(), stream);
    last_lists.nodes = {nullptr, d_node_count.data(), e.room.nodes};
    last_lists.leaves = {nullptr, d_leaf_count.data(), e.room.leaves};
}

void TreeGpuEngine::Impl::launch_walk_twice(const Evaluation& e, const OctreeView<float>& view)
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
    CUDA_CHECK(cudaEventRecord(events[kScanDone], stream));
    CUDA_CHECK(cudaStreamSynchronize(stream)); // list sizes decide the allocations
    total_nodes = h_totals[0];
    total_leaves = h_totals[1];
    if (share_count > 1)
        last_costs = g > 0 ? group_costs_from_counts(*loaded, h_node_count.data(), h_leaf_count.data(), e.share)
                           : std::vector<double>(static_cast<std::size_t>(num_particles), 0.0);
    d_node_list.reserve(static_cast<std::size_t>(std::max(total_nodes, 1LL)), "node lists");
    d_leaf_list.reserve(static_cast<std::size_t>(std::max(total_leaves, 1LL)), "leaf lists");

    CUDA_CHECK(cudaEventRecord(events[kPass2Begin], stream));
    CUDA_CHECK(cudaMemsetAsync(d_mismatch.data(), 0, sizeof(int), stream));
    CUDA_CHECK(cudaMemsetAsync(d_next_group.data(), 0, 2 * sizeof(int), stream));
    gpu::launch_walk_write(view, d_node_offset.data(), d_leaf_offset.data(), d_node_list.data(), d_leaf_list.data(),
                           d_mismatch.data(), stream);
    last_lists.nodes = {d_node_offset.data(), nullptr, 0};
    last_lists.leaves = {d_leaf_offset.data(), nullptr, 0};
}

void TreeGpuEngine::Impl::launch_lists(const Evaluation& e, const OctreeView<float>& view)
{
    const auto n = static_cast<std::size_t>(num_particles);
    group_order.sort(view, last_lists.nodes, last_lists.leaves, stream); // timed with pass 2
    CUDA_CHECK(cudaEventRecord(events[kPass2Done], stream));
    // Forces left on the device feed a kick, which needs only the accelerations; their
    // potentials are made when they are stored (evaluate_potentials).
    const bool potentials = e.to != ForcesTo::device;
    last_lists.view = view;
    last_lists.eps2 = static_cast<float>(gravity.eps * gravity.eps);
    gpu::launch_evaluate_nodes(view, last_lists.nodes, d_node_list.data(), last_lists.eps2, d_sorted.data(),
                               d_next_group.data(), potentials, stream);
    CUDA_CHECK(cudaEventRecord(events[kNodesDone], stream));
    gpu::launch_evaluate_leaves(view, last_lists.leaves, d_leaf_list.data(), last_lists.eps2, d_sorted.data(),
                                d_next_group.data() + 1, potentials, stream);
    CUDA_CHECK(cudaEventRecord(events[kLeavesDone], stream));
    if (e.to == ForcesTo::caller_order) {
        to_caller_order_kernel<<<static_cast<unsigned>(gpu::ceil_div(n, 256)), 256, 0, stream>>>(
            num_particles, dev.order.data(), d_sorted.data(), d_out.data());
        gpu::check_launch("to_caller_order_kernel", stream);
    }
    if (e.to != ForcesTo::device)
        CUDA_CHECK(cudaMemcpyAsync(h_sorted.data(), e.to == ForcesTo::tree_order ? d_sorted.data() : d_out.data(),
                                   n * sizeof(float4), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_mismatch.data(), d_mismatch.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaMemcpyAsync(h_longest.data(), d_longest.data(), 2 * sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaEventRecord(events[kDownloaded], stream));
}

void TreeGpuEngine::Impl::finish(const Evaluation& e, Forces& out)
{
    const auto n = static_cast<std::size_t>(num_particles);
    if (e.to != ForcesTo::device) {
        out.acc.resize(3, static_cast<Eigen::Index>(n));
        out.pot.resize(static_cast<Eigen::Index>(n));
    }
    if (n == 0) {
        if (e.first_pass_seconds >= 0) times.emplace_back("first pass", e.first_pass_seconds);
        return;
    }
    CUDA_CHECK(cudaEventSynchronize(events[kDownloaded]));
    if (!e.one_pass && h_mismatch[0] != 0)
        throw std::logic_error("tree-gpu: walk pass 2 wrote other list lengths than pass 1 counted (group " +
                               std::to_string(h_mismatch[0] - 1) + ")");
    // The next walk under this criterion gets a quarter more room than this one's longest lists.
    const auto room_for = [](int longest) { return (longest + longest / 4 + 15) / 8 * 8; };
    list_room[e.key] = ListRoom{room_for(h_longest[0]), room_for(h_longest[1]),
                                e.one_pass ? e.room.total : total_nodes + total_leaves};
    node_stride = e.one_pass ? e.room.nodes : 0;
    leaf_stride = e.one_pass ? e.room.leaves : 0;
    walks = e.one_pass ? 1 : 2;
    if (e.one_pass && (h_longest[0] > e.room.nodes || h_longest[1] > e.room.leaves)) {
        // Some list did not fit and was cut: this evaluation again, with both passes.
        Evaluation again = enqueue(e.criterion, e.to, false);
        again.first_pass_seconds = e.first_pass_seconds;
        finish(again, out);
        walks = 3;
        return;
    }
    if (e.first_pass_seconds >= 0) times.emplace_back("first pass", e.first_pass_seconds);
    for (int ev = kBegin; ev + 1 < kEvaluationEvents; ++ev) {
        if (!kPhaseNames[ev]) continue;
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, events[ev], events[ev + 1]));
        times.emplace_back(kPhaseNames[ev], ms * 1e-3);
    }
    evaluated = true;
    handed_over = e.to == ForcesTo::tree_order;
    if (e.to == ForcesTo::device) return;
    const auto convert_start = WallClock::now();
    static_assert(sizeof(Accum<float>) == sizeof(float4), "the kernels write Accum<float> as float4");
    store_forces(nullptr, reinterpret_cast<const Accum<float>*>(h_sorted.data()), static_cast<Eigen::Index>(n),
                 gravity.G, out);
    times.emplace_back("convert", seconds_since(convert_start));
}

void TreeGpuEngine::Impl::evaluate_potentials()
{
    if (num_particles == 0) return;
    if (!evaluated) throw std::logic_error("tree-gpu: potentials before an evaluation");
    const LastLists& l = last_lists;
    if (l.view.num_groups == 0) return;
    CUDA_CHECK(cudaMemsetAsync(d_next_group.data(), 0, 2 * sizeof(int), stream));
    gpu::launch_evaluate_nodes(l.view, l.nodes, d_node_list.data(), l.eps2, d_sorted.data(), d_next_group.data(), true,
                               stream);
    gpu::launch_evaluate_leaves(l.view, l.leaves, d_leaf_list.data(), l.eps2, d_sorted.data(), d_next_group.data() + 1,
                                true, stream);
}

} // namespace grove
