// The GPU tree engine's state and its evaluation (opening radii, walk, lists, download), shared by
// tree.cu (the ForceEngine) and tree_resident.cu (a particle store on the device). Private to gpu/.
// An evaluation is queued (enqueue), the host does what it has to beside the GPU (the look-ahead
// build, moving a store's particles), then it is finished (finish): the wait, the checks, the
// phase times, the forces converted.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/device_buffer.cuh"
#include "gpu/evaluate.cuh"
#include "gpu/group_order.cuh"
#include "gpu/tree_gpu.h"
#include "gpu/tree_walk.cuh"
#include "tree/acceleration_estimate.hpp"
#include "tree/group_shares.hpp"
#include "tree/refit.hpp"
#include "tree/softening_moments.hpp"

namespace grove {

class TreeGpuResident;

// Where an evaluation leaves its forces.
enum class ForcesTo {
    caller_order, // downloaded, in the order of the particles the tree was built from
    tree_order,   // downloaded, in the tree's Morton order (handed over to a particle store)
    device,       // left in d_sorted on the device: tree order, without G, without potentials
};

// Where the relative criterion's group scales come from: the engine's estimate of |a| (made on the
// host, or by a first geometric pass where there is none), or dev.mac_scale, which the caller (a
// store on the device) has filled for the uploaded tree.
enum class GroupScales { from_estimate, on_device };

// What a resident store in block steps says of a tick's walk (tree_resident_bins.cu); whole
// evaluations take the defaults.
struct WalkShape {
    // Which walks' lists are alike (the room a one-pass walk takes is the last walk's of its
    // class): 0 for whole evaluations; each kind of block tick has a class of its own. A class of
    // its own also sizes the list pools for every group of the walk, which another set of groups
    // walked each time may need.
    int list_class = 0;
    // Few groups, of at most a warp's targets each (gpu::kSplitTargets): one warp each would leave
    // the GPU idle while it works through a group's long lists, so their lists are evaluated in
    // stretches (gpu/evaluate.cuh: ListSplit).
    bool few_groups = false;
};

// The events an evaluation records once, in stream order; its phases lie between them.
enum EvaluationEvent {
    kBegin,
    kRadiiDone,
    kPass1Done,
    kScanDone,
    kListsDone, // the last batch's leaf lists
    kDownloaded,
    kEvaluationEvents
};

// The events of each batch of groups (tree/list_batches.hpp): its walk (pass 2, or the one pass)
// and group order, then its node and leaf lists.
enum BatchEvent { kBatchBegin, kBatchWalked, kBatchNodesDone, kBatchLeavesDone, kBatchEvents };

struct TreeGpuEngine::Impl {
    // What the last walk under an opening criterion (kind, parameter) says of the next one's lists.
    // Room per group for the one-pass walk: the longest lists, or twice the mean where the longest
    // are longer, a quarter more, in multiples of 8 (every room starts on a 32-byte sector); a pool
    // for the lists longer than that (next_room says how much); the entries of all lists, which
    // bound the memory room and pool may take.
    struct ListRoom {
        int nodes = 0, leaves = 0;
        long long total = 0;
        long long node_pool = 0, leaf_pool = 0;
    };
    // How an evaluation walks, and what finish() needs of it.
    struct Evaluation {
        OpeningCriterion criterion;
        ForcesTo to = ForcesTo::caller_order;
        WalkShape shape;
        // The criterion's entry in list_room, with the walk's class (shape.list_class).
        std::tuple<int, double, int> key;
        ListRoom room; // the room of a one-pass walk
        bool one_pass = false;
        bool potentials = true; // the list kernels make potentials (not for a kick's forces)
        GroupScales scales = GroupScales::from_estimate;
        float4* out = nullptr; // where the list kernels sum (null: d_sorted)
        GroupRange share;
        // The groups walked and evaluated together, their lists in one of two buffers (the next
        // batch walks into the other while this one is evaluated); one batch when the lists of
        // the whole share fit the budget. Known at enqueue for one pass, after the count for two.
        std::vector<GroupRange> batches;
        long long budget = LLONG_MAX; // list entries the batches' buffers may hold together
        double first_pass_seconds = -1;
        cudaEvent_t lists_after = nullptr; // enqueue()'s
    };

    TreeParams params;
    GravityParams gravity;
    cudaStream_t stream = nullptr;
    cudaStream_t walk_stream = nullptr; // the next batch's walk, beside this one's evaluation
    cudaEvent_t events[kEvaluationEvents] = {};
    std::vector<std::array<cudaEvent_t, kBatchEvents>> batch_events; // grown as batches need them
    cudaEvent_t buffer_free[2] = {}; // a list buffer's last evaluation done: it may be walked into
    PhaseTimes times, upload_times;

    Octree tree;                    // compute()'s host tree, kept so that repeated builds reuse its storage
    TreeUpdater updater;            // compute(): build or refit
    const Octree* loaded = nullptr; // the tree last uploaded (statistics)
    int num_particles = 0, num_nodes = 0, num_groups = 0;
    bool uploaded = false, evaluated = false;
    bool handed_over = false;    // the last evaluation's forces are in the tree's order
    bool order_uploaded = false; // the device holds the particle order (permutation kernel)
    long long total_nodes = 0, total_leaves = 0;
    ListWork last_work;                        // the last finished evaluation's pairs
    AccelerationEstimate estimate;             // the relative criterion's |a| (tree/acceleration_estimate.hpp)
    int share_index = 0, share_count = 1;      // set_share
    std::unique_ptr<TreeGpuResident> resident; // made on the first device_particles()
    Forces forces;                             // compute(store)'s, before the store takes them
    Forces first_pass_forces;                  // the relative criterion's first pass

    TreeArrays<float, gpu::PinnedBuffer> host; // what the host packs
    TreeArrays<float, gpu::DeviceBuffer> dev;  // what the kernels read
    gpu::PinnedBuffer<long long> h_totals, h_node_count, h_leaf_count;
    std::vector<double> share_costs, last_costs; // set_share_costs; this share's, last evaluation
    gpu::PinnedBuffer<int> h_mismatch, h_longest;
    gpu::DeviceBuffer<int> d_mismatch; // pass 2's length check
    gpu::DeviceBuffer<int> d_longest;  // the longest node and leaf lists of the last walk, a cut flag
    // The one-pass walk's pool: where the lists longer than their room lie, each buffer's
    // cursors, the walk's totals (gpu::BoundedLists).
    gpu::DeviceBuffer<long long> d_node_place, d_leaf_place;
    // d_walk_totals: the one-pass walk's entries and pool use (gpu::BoundedLists), then the pairs
    // the list kernels summed.
    static constexpr int kCellPairs = 4, kParticlePairs = 5, kWalkTotals = 6;
    gpu::DeviceBuffer<unsigned long long> d_pool_cursor, d_walk_totals;
    gpu::PinnedBuffer<unsigned long long> h_walk_totals;
    long long pool_nodes_held = 0, pool_leaves_held = 0; // the last one-pass walk's pool, after its rooms
    std::map<std::tuple<int, double, int>, ListRoom> list_room;
    int walks = 0;                             // walk passes of the last evaluation: 1, 2, or 3 after an overflow
    int batches = 0;                           // batches of the last evaluation
    int node_stride = 0, leaf_stride = 0;      // > 0: the last evaluation's lists are at g * stride
    gpu::DeviceBuffer<int> d_next_group;       // the evaluation kernels' group counters (nodes, leaves)
    gpu::DeviceBuffer<float4> d_split_partial; // a few groups' list stretches' sums (gpu/evaluate.cuh: ListSplit)
    gpu::GroupOrder group_order[2];            // the order in which they take the groups, per list buffer
    gpu::PinnedBuffer<float4> h_sorted;        // results in the caller's order
    gpu::DeviceBuffer<long long> d_node_count, d_leaf_count, d_node_offset, d_leaf_offset;
    gpu::DeviceBuffer<unsigned char> d_scan_temp;
    gpu::DeviceBuffer<std::int32_t> d_node_list[2], d_leaf_list[2];              // a batch's lists in each
    gpu::DeviceBuffer<long long> d_batch_node_offset[2], d_batch_leaf_offset[2]; // a batch's, from 0
    gpu::PinnedBuffer<long long> h_node_offset, h_leaf_offset; // the share's scanned lengths, to cut batches
    gpu::DeviceBuffer<WalkNode<float>> d_walk_nodes;           // what the walk reads, packed per criterion
    gpu::DeviceBuffer<float4> d_sorted, d_out;
    // What the last evaluation walked, for evaluate_potentials.
    struct LastLists {
        Evaluation evaluation;
        OctreeView<float> view;       // the share's groups
        gpu::ListIndex nodes, leaves; // of its last batch, which its buffers still hold
        gpu::ListSoftening softening;
    } last_lists;
    // Softening by type (core/softening.hpp): h per particle in the order of the positions the
    // next upload's tree was built from (empty for one softening), and the uploaded tree's moments.
    std::vector<double> half_eps2;
    SofteningMoments<float> softening;
    bool softening_by_type = false; // d_particle_half and d_node_half hold the uploaded tree's
    float smallest_half = 0;
    gpu::DeviceBuffer<float> d_particle_half, d_node_half, d_node_radius2;

    Impl(TreeParams p, GravityParams g);
    ~Impl();

    OctreeView<float> device_view() const { return make_view(dev, num_particles, num_nodes, num_groups); }
    // The list kernels' softening for the uploaded tree.
    gpu::ListSoftening list_softening() const;

    // Packs and uploads a built tree; with_order: its particle order too, which forces in the
    // caller's order need (the permutation kernel).
    void upload(const Octree& t, bool with_order);
    // enqueue() then finish(), with nothing on the host between.
    void evaluate(const OpeningCriterion& criterion, Forces& out, ForcesTo to);
    // Queues an evaluation of the uploaded tree. may_walk_once = false: both walk passes whatever
    // the room (the repeat of a cut one-pass walk). The relative criterion without an estimate for
    // this N first runs a whole geometric evaluation and keeps its accelerations, unless the scales
    // are on the device already.
    // lists_after: an event of work queued on another stream beside this evaluation that must
    // not wait for its list kernels (the resident step's key sort), or null. Their warps take
    // groups from a counter and stay resident to the last group, so a kernel queued on another
    // stream once they run waits for all of them; they wait for the event instead.
    Evaluation enqueue(const OpeningCriterion& criterion, ForcesTo to, bool may_walk_once = true,
                       GroupScales scales = GroupScales::from_estimate, WalkShape shape = {},
                       cudaEvent_t lists_after = nullptr);
    // Waits for it, checks its walk, redoes it with both passes if a one-pass walk overflowed its
    // room, and records its phases; out gets the forces unless they stay on the device.
    void finish(const Evaluation& e, Forces& out);
    // The last evaluation's list kernels again, now with potentials, into `out` (n sums, queued on
    // the stream). For a store on the device, whose steps leave the potentials out: between its steps
    // the tree, the lists and the view they were walked with stay on the device as they were.
    void evaluate_potentials(float4* out);
    // The last lists evaluated again into out, whole or in stretches (TreeGpuEngine::sum_last_lists).
    void evaluate_last_lists(int segments, float4* out);
    // The list kernels on the stream, on lists in buffer `buffer`: node lists, then (nodes_done
    // recorded where given) leaf lists, their lists in `segments` stretches where more than one.
    void launch_list_kernels(const OctreeView<float>& view, const gpu::ListIndex& nodes, const gpu::ListIndex& leaves,
                             int buffer, float4* out, bool potentials, int segments, cudaEvent_t nodes_done = nullptr);
    // Gives back the interaction lists (the next evaluation sizes them again to what is free), the
    // caller-order copy of the forces and the host pipeline's host buffers: room for a particle
    // store on the device.
    void release_host_path_buffers();

    // On the device: nonzero where the last enqueued one-pass walk cut a list (finish() then
    // evaluates again), for kernels queued behind it that must not use its sums.
    const int* d_cut_flag() const { return d_longest.data() + 2; }
    // Bytes the list buffers hold now.
    std::size_t list_bytes_held() const
    {
        std::size_t held = 0;
        for (int b = 0; b < 2; ++b) held += d_node_list[b].bytes() + d_leaf_list[b].bytes();
        return held;
    }

  private:
    // The walk's plan: this share's groups, and one pass when the last walk under this criterion
    // left room enough per group (a step's lists are close to the last step's).
    Evaluation plan(const OpeningCriterion& criterion, ForcesTo to, bool may_walk_once, WalkShape shape) const;
    // The opening radii and the packed walk nodes for the criterion; the view the walk reads.
    OctreeView<float> launch_radii(const Evaluation& e);
    // The two-pass walk's count and scan over the share, the wait for the totals, and the batches
    // cut from them.
    void launch_count(Evaluation& e, const OctreeView<float>& view);
    // Each batch: its walk (into the room, or pass 2 at the scanned offsets) and group order, its
    // node and leaf lists; batch b + 1 walks on walk_stream while batch b is evaluated.
    void launch_batches(const Evaluation& e, const OctreeView<float>& view);
    void launch_batch_walk(const Evaluation& e, const OctreeView<float>& batch_view, GroupRange batch, int buffer,
                           gpu::ListIndex& nodes, gpu::ListIndex& leaves, cudaStream_t on);
    // What the evaluation just finished says of the next one's lists.
    ListRoom next_room(const Evaluation& e) const;
    // The forces to where they go.
    void launch_download(const Evaluation& e);
    void reserve_evaluation_buffers(std::size_t groups, ForcesTo to);
    // List entries (both kinds, both buffers) that an evaluation wanting `wanted` may hold:
    // TreeParams::list_memory, the room under TreeParams::device_memory, most of the free memory.
    long long list_budget_entries(long long wanted);
};

} // namespace grove
