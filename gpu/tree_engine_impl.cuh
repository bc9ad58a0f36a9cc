// The GPU tree engine's state and its evaluation (opening radii, walk, lists, download), shared by
// tree.cu (the ForceEngine) and tree_resident.cu (whole leapfrog steps on the device). Private to
// gpu/.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include <cub/device/device_scan.cuh>

#include "core/wall_clock.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/device_info.h"
#include "gpu/evaluate.cuh"
#include "gpu/group_order.cuh"
#include "gpu/tree_gpu.h"
#include "gpu/tree_walk.cuh"
#include "tree/acceleration_estimate.hpp"
#include "tree/float_tree.hpp"
#include "tree/group_shares.hpp"
#include "tree/lane_layout.hpp"
#include "tree/refit.hpp"
#include "tree/store_forces.hpp"

namespace grove {

class TreeGpuResident;

// Sums from Morton order to the caller's order: a permutation, done where scattered writes are
// cheap (bench/results/house-h100.md measured the host doing it).
__global__ void to_caller_order_kernel(int n, const std::uint32_t* order, const float4* sorted, float4* out);

struct TreeGpuEngine::Impl {
    TreeParams params;
    GravityParams gravity;
    cudaStream_t stream = nullptr;
    static constexpr int kEvents = 9;
    cudaEvent_t events[kEvents] = {};
    PhaseTimes times, upload_times;

    Octree tree;                    // compute()'s host tree, kept so that repeated builds reuse its storage
    TreeUpdater updater;            // compute(): build or refit
    const Octree* loaded = nullptr; // the tree last uploaded (statistics)
    int num_particles = 0, num_nodes = 0, num_groups = 0;
    bool uploaded = false, evaluated = false;
    long long total_nodes = 0, total_leaves = 0;
    AccelerationEstimate estimate;        // the relative criterion's |a| (tree/acceleration_estimate.hpp)
    int share_index = 0, share_count = 1; // set_share
    // compute(store): forces left in the tree's order (no permutation kernel) when the tree was just
    // built; handed_over says whether the last evaluation did so.
    bool forces_in_tree_order = false, handed_over = false;
    bool order_uploaded = false;               // the device holds the particle order (permutation kernel)
    std::unique_ptr<TreeGpuResident> resident; // made on the first device_particles()
    std::uint64_t store_epoch = 0;             // the store's order epoch the host tree indexes
    Forces forces;                             // compute(store)'s, before the store takes them
    std::vector<std::uint32_t> order;          // the order handed to the store

    TreeArrays<float, gpu::PinnedBuffer> host; // what the host packs
    TreeArrays<float, gpu::DeviceBuffer> dev;  // what the kernels read
    gpu::PinnedBuffer<long long> h_totals, h_node_count, h_leaf_count;
    std::vector<double> share_costs, last_costs; // set_share_costs; this share's, last evaluation
    gpu::PinnedBuffer<int> h_mismatch, h_longest;
    gpu::DeviceBuffer<int> d_mismatch; // pass 2's length check
    gpu::DeviceBuffer<int> d_longest;  // the longest node and leaf lists of the last walk
    // Room per group for the one-pass walk, by opening criterion (kind, parameter): the longest
    // lists of the last walk under it, a quarter more, in multiples of 8 (every room starts on a
    // 32-byte sector, which the walk writes whole); the totals of its last two-pass walk bound the
    // memory that room may take.
    struct ListRoom {
        int nodes = 0, leaves = 0;
        long long total = 0;
    };
    std::map<std::pair<int, double>, ListRoom> list_room;
    int walks = 0;                        // walk passes of the last evaluation: 1, 2, or 3 after an overflow
    int node_stride = 0, leaf_stride = 0; // > 0: the last evaluation's lists are at g * stride
    gpu::DeviceBuffer<int> d_next_group;  // the evaluation kernels' group counters (nodes, leaves)
    gpu::GroupOrder group_order;          // the order in which they take the groups
    gpu::PinnedBuffer<float4> h_sorted;   // results in the caller's order
    gpu::DeviceBuffer<long long> d_node_count, d_leaf_count, d_node_offset, d_leaf_offset;
    gpu::DeviceBuffer<unsigned char> d_scan_temp;
    gpu::DeviceBuffer<std::int32_t> d_node_list, d_leaf_list;
    gpu::DeviceBuffer<WalkNode<float>> d_walk_nodes; // what the walk reads, packed per criterion
    gpu::DeviceBuffer<float4> d_sorted, d_out;
    // What the last evaluation's list kernels read, for evaluate_potentials.
    struct LastLists {
        OctreeView<float> view;
        gpu::ListIndex nodes, leaves;
        float eps2 = 0;
    } last_lists;

    Impl(TreeParams p, GravityParams g);
    ~Impl();

    OctreeView<float> device_view() const { return make_view(dev, num_particles, num_nodes, num_groups); }

    void upload(const Octree& t)
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
        // Forces left in the tree's order need no permutation on the device, so no order either
        // (the relative criterion's first pass permutes its estimate: it keeps the order).
        const bool with_order =
            !(forces_in_tree_order && &t == &tree && updater.order_fresh() && params.mac == MacKind::geometric);
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

    // while_gpu_runs: host work done after the last kernel is queued and before the wait for it
    // (the look-ahead build).
    // may_walk_once = false: both walk passes whatever the room (the repeat of a cut one-pass walk).
    // resident (a particle store on the device, tree_resident.cu): the sums stay on the device in
    // d_sorted, in the order of the tree walked, without potentials; out is left alone.
    void evaluate(const OpeningCriterion& criterion, Forces& out, const std::function<void()>& while_gpu_runs = {},
                  bool may_walk_once = true, bool resident = false)
    {
        if (!uploaded) throw std::logic_error("tree-gpu: evaluate before upload");
        const bool relative = criterion.kind == MacKind::relative;
        if (!(criterion.parameter() > 0)) throw std::invalid_argument("tree-gpu: theta and alpha must be > 0");
        const auto n = static_cast<std::size_t>(num_particles);
        // Forces stay in the tree's order only for compute(store) on a fresh build (and never
        // for the first pass, whose estimate is in the caller's order).
        const bool in_tree_order = resident || (forces_in_tree_order && loaded == &tree && updater.order_fresh());
        if (!in_tree_order && !order_uploaded)
            throw std::logic_error("tree-gpu: forces wanted in the caller's order, but no order was uploaded");
        handed_over = false;
        double first_pass_seconds = -1;
        if (relative && !estimate.covers(n) && n > 0) {
            const auto start = WallClock::now();
            const bool keep = std::exchange(forces_in_tree_order, false);
            evaluate(OpeningCriterion::geometric(kFirstPassTheta), out);
            forces_in_tree_order = keep;
            estimate.set(out.acc, gravity.G);
            first_pass_seconds = seconds_since(start);
        }
        if (!resident) {
            out.acc.resize(3, static_cast<Eigen::Index>(n));
            out.pot.resize(static_cast<Eigen::Index>(n));
        }
        times.clear();
        if (first_pass_seconds >= 0) times.emplace_back("first pass", first_pass_seconds);
        if (n == 0) return;
        const auto g_all = static_cast<std::size_t>(num_groups);
        // This share's groups (set_share), of equal cost by the last evaluation's list lengths or
        // of equal particle counts (tree/group_shares.hpp); the walk and the evaluation see only them.
        const GroupRange share = share_of_groups(*loaded, share_costs, share_index, share_count);
        const auto g_first = static_cast<std::size_t>(share.first);
        const std::size_t g = static_cast<std::size_t>(share.last) - g_first;
        if (relative) { // the groups' scales from the estimate, on the host
            host.mac_scale.reserve(g_all, "tree group scales");
            fill_group_mac_scales(loaded->groups, loaded->order.data(), estimate.magnitudes(), host.mac_scale.data());
        }
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

        OctreeView<float> view = device_view();
        CUDA_CHECK(cudaEventRecord(events[0], stream));
        // The relative criterion keeps the geometric floor (theta = 2/sqrt(3)) under its own test.
        const double theta = relative ? kMaxTheta : criterion.theta;
        gpu::launch_opening_radii(num_nodes, dev.size.data(), dev.com_offset.data(), static_cast<float>(theta),
                                  dev.r_open2.data(), stream);
        if (relative) {
            CUDA_CHECK(cudaMemcpyAsync(dev.mac_scale.data(), host.mac_scale.data(), g_all * sizeof(float),
                                       cudaMemcpyHostToDevice, stream));
            gpu::launch_relative_radii(num_nodes, dev.size.data(), dev.com_mass.data(),
                                       static_cast<float>(criterion.alpha), dev.r_rel2.data(), stream);
            view.r_rel2 = dev.r_rel2.data();
            view.mac_scale = dev.mac_scale.data() + g_first;
        }
        d_walk_nodes.reserve(static_cast<std::size_t>(num_nodes), "walk nodes");
        gpu::launch_pack_walk_nodes(view, d_walk_nodes.data(), stream);
        view.walk_nodes = d_walk_nodes.data();
        view.groups += g_first;
        view.num_groups = static_cast<std::int32_t>(g);
        if (share_count > 1) // the particles of other shares get zero
            CUDA_CHECK(cudaMemsetAsync(d_sorted.data(), 0, n * sizeof(float4), stream));
        // One walk instead of two when the last walk under this criterion left room enough per group
        // (a step's lists are close to the last step's): no pass 1, no scan, no wait for the totals.
        const auto key = std::make_pair(static_cast<int>(criterion.kind), criterion.parameter());
        const auto found = list_room.find(key);
        const ListRoom room = found != list_room.end() ? found->second : ListRoom{};
        const long long room_entries = static_cast<long long>(g) * (room.nodes + room.leaves);
        const bool one_pass = may_walk_once && share_count == 1 && room.nodes > 0 && room.leaves > 0 &&
                              room_entries <= 4 * room.total + (1LL << 20);
        CUDA_CHECK(cudaMemsetAsync(d_longest.data(), 0, 2 * sizeof(int), stream));
        CUDA_CHECK(cudaEventRecord(events[1], stream));
        gpu::ListIndex node_index, leaf_index;
        if (one_pass) {
            d_node_list.reserve(g * static_cast<std::size_t>(room.nodes), "node lists");
            d_leaf_list.reserve(g * static_cast<std::size_t>(room.leaves), "leaf lists");
            for (int e = 2; e <= 4; ++e) CUDA_CHECK(cudaEventRecord(events[e], stream)); // no pass 1, no scan
            CUDA_CHECK(cudaMemsetAsync(d_next_group.data(), 0, 2 * sizeof(int), stream));
            gpu::launch_walk_bounded(view, room.nodes, room.leaves, d_node_list.data(), d_leaf_list.data(),
                                     d_node_count.data(), d_leaf_count.data(), d_longest.data(), stream);
            node_index = {nullptr, d_node_count.data(), room.nodes};
            leaf_index = {nullptr, d_leaf_count.data(), room.leaves};
        } else {
            gpu::launch_walk_count(view, d_node_count.data(), d_leaf_count.data(), d_longest.data(), stream);
            CUDA_CHECK(cudaEventRecord(events[2], stream));
            // The counts' extra last entry is 0, so offset[g] is the total.
            CUDA_CHECK(cudaMemsetAsync(d_node_count.data() + g, 0, sizeof(long long), stream));
            CUDA_CHECK(cudaMemsetAsync(d_leaf_count.data() + g, 0, sizeof(long long), stream));
            CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_scan_temp.data(), scan_bytes, d_node_count.data(),
                                                     d_node_offset.data(), static_cast<int>(g + 1), stream));
            CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_scan_temp.data(), scan_bytes, d_leaf_count.data(),
                                                     d_leaf_offset.data(), static_cast<int>(g + 1), stream));
            CUDA_CHECK(cudaMemcpyAsync(h_totals.data(), d_node_offset.data() + g, sizeof(long long),
                                       cudaMemcpyDeviceToHost, stream));
            CUDA_CHECK(cudaMemcpyAsync(h_totals.data() + 1, d_leaf_offset.data() + g, sizeof(long long),
                                       cudaMemcpyDeviceToHost, stream));
            if (share_count > 1 && g > 0) { // this share's list lengths: the costs that cut the next shares
                h_node_count.reserve(g, "node-list counts");
                h_leaf_count.reserve(g, "leaf-list counts");
                CUDA_CHECK(cudaMemcpyAsync(h_node_count.data(), d_node_count.data(), g * sizeof(long long),
                                           cudaMemcpyDeviceToHost, stream));
                CUDA_CHECK(cudaMemcpyAsync(h_leaf_count.data(), d_leaf_count.data(), g * sizeof(long long),
                                           cudaMemcpyDeviceToHost, stream));
            }
            CUDA_CHECK(cudaEventRecord(events[3], stream));
            CUDA_CHECK(cudaStreamSynchronize(stream)); // list sizes decide the allocations
            total_nodes = h_totals[0];
            total_leaves = h_totals[1];
            if (share_count > 1)
                last_costs = g > 0 ? group_costs_from_counts(*loaded, h_node_count.data(), h_leaf_count.data(), share)
                                   : std::vector<double>(n, 0.0);
            d_node_list.reserve(static_cast<std::size_t>(std::max(total_nodes, 1LL)), "node lists");
            d_leaf_list.reserve(static_cast<std::size_t>(std::max(total_leaves, 1LL)), "leaf lists");

            CUDA_CHECK(cudaEventRecord(events[4], stream));
            CUDA_CHECK(cudaMemsetAsync(d_mismatch.data(), 0, sizeof(int), stream));
            CUDA_CHECK(cudaMemsetAsync(d_next_group.data(), 0, 2 * sizeof(int), stream));
            gpu::launch_walk_write(view, d_node_offset.data(), d_leaf_offset.data(), d_node_list.data(),
                                   d_leaf_list.data(), d_mismatch.data(), stream);
            node_index = {d_node_offset.data(), nullptr, 0};
            leaf_index = {d_leaf_offset.data(), nullptr, 0};
        }
        group_order.sort(view, node_index, leaf_index, stream); // timed with pass 2 (events[4..5])
        CUDA_CHECK(cudaEventRecord(events[5], stream));
        const float eps2 = static_cast<float>(gravity.eps * gravity.eps);
        // A resident step's kick needs only the accelerations; its potentials are made when they
        // are stored (evaluate_potentials).
        last_lists = LastLists{view, node_index, leaf_index, eps2};
        gpu::launch_evaluate_nodes(view, node_index, d_node_list.data(), eps2, d_sorted.data(), d_next_group.data(),
                                   !resident, stream);
        CUDA_CHECK(cudaEventRecord(events[6], stream));
        gpu::launch_evaluate_leaves(view, leaf_index, d_leaf_list.data(), eps2, d_sorted.data(),
                                    d_next_group.data() + 1, !resident, stream);
        CUDA_CHECK(cudaEventRecord(events[7], stream));
        if (!in_tree_order) {
            to_caller_order_kernel<<<static_cast<unsigned>(gpu::ceil_div(n, 256)), 256, 0, stream>>>(
                num_particles, dev.order.data(), d_sorted.data(), d_out.data());
            gpu::check_launch("to_caller_order_kernel", stream);
        }
        if (!resident)
            CUDA_CHECK(cudaMemcpyAsync(h_sorted.data(), in_tree_order ? d_sorted.data() : d_out.data(),
                                       n * sizeof(float4), cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaMemcpyAsync(h_mismatch.data(), d_mismatch.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(
            cudaMemcpyAsync(h_longest.data(), d_longest.data(), 2 * sizeof(int), cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaEventRecord(events[8], stream));
        if (while_gpu_runs) while_gpu_runs();
        CUDA_CHECK(cudaEventSynchronize(events[8]));
        if (!one_pass && h_mismatch[0] != 0)
            throw std::logic_error("tree-gpu: walk pass 2 wrote other list lengths than pass 1 counted (group " +
                                   std::to_string(h_mismatch[0] - 1) + ")");
        // The next walk under this criterion gets a quarter more room than this one's longest lists.
        const auto room_for = [](int longest) { return (longest + longest / 4 + 15) / 8 * 8; };
        list_room[key] = ListRoom{room_for(h_longest[0]), room_for(h_longest[1]),
                                  one_pass ? room.total : total_nodes + total_leaves};
        node_stride = one_pass ? room.nodes : 0;
        leaf_stride = one_pass ? room.leaves : 0;
        walks = one_pass ? 1 : 2;
        if (one_pass && (h_longest[0] > room.nodes || h_longest[1] > room.leaves)) {
            // Some list did not fit and was cut: this evaluation again, with both passes.
            evaluate(criterion, out, {}, false, resident);
            walks = 3;
            return;
        }

        const char* names[] = {"opening radii", "pass 1", "scan", "", "pass 2", "nodes", "leaves", "download"};
        for (int e = 0; e + 1 < kEvents; ++e) {
            if (e == 3) continue; // the host wait between the scan and pass 2
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, events[e], events[e + 1]));
            times.emplace_back(names[e], ms * 1e-3);
        }
        evaluated = true;
        handed_over = in_tree_order;
        if (resident) return;
        const auto convert_start = WallClock::now();
        static_assert(sizeof(Accum<float>) == sizeof(float4), "the kernels write Accum<float> as float4");
        store_forces(nullptr, reinterpret_cast<const Accum<float>*>(h_sorted.data()), static_cast<Eigen::Index>(n),
                     gravity.G, out);
        times.emplace_back("convert", seconds_since(convert_start));
    }

    // The last evaluation's list kernels again, now with potentials, into d_sorted (queued on the
    // stream). For the resident leapfrog, whose steps leave the potentials out: between its steps
    // the tree, the lists and the view they were walked with stay on the device as they were.
    void evaluate_potentials()
    {
        if (num_particles == 0) return;
        if (!evaluated) throw std::logic_error("tree-gpu: potentials before an evaluation");
        const LastLists& l = last_lists;
        if (l.view.num_groups == 0) return;
        CUDA_CHECK(cudaMemsetAsync(d_next_group.data(), 0, 2 * sizeof(int), stream));
        gpu::launch_evaluate_nodes(l.view, l.nodes, d_node_list.data(), l.eps2, d_sorted.data(), d_next_group.data(),
                                   true, stream);
        gpu::launch_evaluate_leaves(l.view, l.leaves, d_leaf_list.data(), l.eps2, d_sorted.data(),
                                    d_next_group.data() + 1, true, stream);
    }
};

} // namespace grove
