// The GPU tree engine's state and its evaluation (opening radii, walk, lists, download), shared by
// tree.cu (the ForceEngine) and tree_resident.cu (a particle store on the device). Private to gpu/.
// An evaluation is queued (enqueue), the host does what it has to beside the GPU (the look-ahead
// build, moving a store's particles), then it is finished (finish): the wait, the checks, the
// phase times, the forces converted.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpu/device_buffer.cuh"
#include "gpu/evaluate.cuh"
#include "gpu/group_order.cuh"
#include "gpu/tree_gpu.h"
#include "tree/acceleration_estimate.hpp"
#include "tree/group_shares.hpp"
#include "tree/refit.hpp"

namespace grove {

class TreeGpuResident;

// Where an evaluation leaves its forces.
enum class ForcesTo {
    caller_order, // downloaded, in the order of the particles the tree was built from
    tree_order,   // downloaded, in the tree's Morton order (handed over to a particle store)
    device,       // left in d_sorted on the device: tree order, without G, without potentials
};

// The events an evaluation records, in stream order; its phases lie between them.
enum EvaluationEvent {
    kBegin,
    kRadiiDone,
    kPass1Done,
    kScanDone,
    kPass2Begin, // after the host's wait for the list totals
    kPass2Done,
    kNodesDone,
    kLeavesDone,
    kDownloaded,
    kEvaluationEvents
};

struct TreeGpuEngine::Impl {
    // Room per group for the one-pass walk, by opening criterion (kind, parameter): the longest
    // lists of the last walk under it, a quarter more, in multiples of 8 (every room starts on a
    // 32-byte sector, which the walk writes whole); the totals of its last two-pass walk bound the
    // memory that room may take.
    struct ListRoom {
        int nodes = 0, leaves = 0;
        long long total = 0;
    };
    // How an evaluation walks, and what finish() needs of it.
    struct Evaluation {
        OpeningCriterion criterion;
        ForcesTo to = ForcesTo::caller_order;
        std::pair<int, double> key; // the criterion's entry in list_room
        ListRoom room;              // the room of a one-pass walk
        bool one_pass = false;
        GroupRange share;
        double first_pass_seconds = -1;
    };

    TreeParams params;
    GravityParams gravity;
    cudaStream_t stream = nullptr;
    cudaEvent_t events[kEvaluationEvents] = {};
    PhaseTimes times, upload_times;

    Octree tree;                    // compute()'s host tree, kept so that repeated builds reuse its storage
    TreeUpdater updater;            // compute(): build or refit
    const Octree* loaded = nullptr; // the tree last uploaded (statistics)
    int num_particles = 0, num_nodes = 0, num_groups = 0;
    bool uploaded = false, evaluated = false;
    bool handed_over = false;    // the last evaluation's forces are in the tree's order
    bool order_uploaded = false; // the device holds the particle order (permutation kernel)
    long long total_nodes = 0, total_leaves = 0;
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
    gpu::DeviceBuffer<int> d_longest;  // the longest node and leaf lists of the last walk
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

    // Packs and uploads a built tree; with_order: its particle order too, which forces in the
    // caller's order need (the permutation kernel).
    void upload(const Octree& t, bool with_order);
    // enqueue() then finish(), with nothing on the host between.
    void evaluate(const OpeningCriterion& criterion, Forces& out, ForcesTo to);
    // Queues an evaluation of the uploaded tree. may_walk_once = false: both walk passes whatever
    // the room (the repeat of a cut one-pass walk). The relative criterion without an estimate for
    // this N first runs a whole geometric evaluation and keeps its accelerations.
    Evaluation enqueue(const OpeningCriterion& criterion, ForcesTo to, bool may_walk_once = true);
    // Waits for it, checks its walk, redoes it with both passes if a one-pass walk overflowed its
    // room, and records its phases; out gets the forces unless they stay on the device.
    void finish(const Evaluation& e, Forces& out);
    // The last evaluation's list kernels again, now with potentials, into d_sorted (queued on the
    // stream). For a store on the device, whose steps leave the potentials out: between its steps
    // the tree, the lists and the view they were walked with stay on the device as they were.
    void evaluate_potentials();

  private:
    // The walk's plan: this share's groups, and one pass when the last walk under this criterion
    // left room enough per group (a step's lists are close to the last step's).
    Evaluation plan(const OpeningCriterion& criterion, ForcesTo to, bool may_walk_once) const;
    // The opening radii and the packed walk nodes for the criterion; the view the walk reads.
    OctreeView<float> launch_radii(const Evaluation& e);
    // The walk: one pass into the room, or count, scan, (wait for the totals), write.
    void launch_walk_once(const Evaluation& e, const OctreeView<float>& view);
    void launch_walk_twice(const Evaluation& e, const OctreeView<float>& view);
    // The node and leaf lists, then the forces to where they go.
    void launch_lists(const Evaluation& e, const OctreeView<float>& view);
    void reserve_evaluation_buffers(std::size_t groups);
};

} // namespace grove
