// The walk kernels: a warp per group walking in rounds as tree/walk.hpp's walk_group_in_rounds
// does (count, then write; or, with room per group known, write at once), and the per-node opening
// radii. See tree_walk.cuh for why this file is compiled without contraction.
#include "gpu/tree_walk.cuh"

#include <algorithm>

#include "gpu/cuda_check.cuh"
#include "tree/walk.hpp"

namespace grove::gpu {

namespace {

__global__ void opening_radii_kernel(int num_nodes, const float* size, const float* com_offset, float theta,
                                     const float* softening_radius2, float* r_open2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= num_nodes) return;
    const float r2 = opening_radius2(size[i], com_offset[i], theta);
    r_open2[i] = softening_radius2 ? fmaxf(r2, softening_radius2[i]) : r2;
}

__global__ void relative_radii_kernel(int num_nodes, const float* size, const Vec4<float>* com_mass, float alpha,
                                      float* r_rel2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < num_nodes) r_rel2[i] = relative_radius2(size[i], com_mass[i].w, alpha);
}

__global__ void pack_walk_nodes_kernel(int num_nodes, const Vec4<float>* com_mass, const float* r_open2,
                                       const float* r_rel2, const std::int32_t* next, const std::uint8_t* is_leaf,
                                       WalkNode<float>* out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < num_nodes) out[i] = make_walk_node(com_mass[i], r_open2[i], r_rel2 ? r_rel2[i] : 0.f, next[i], is_leaf[i]);
}

constexpr unsigned kAllLanes = 0xffffffffu;

__device__ int lane_index()
{
    return static_cast<int>(threadIdx.x & 31u);
}

// The longest lists and the entries of a block's walks, gathered in shared memory and added to
// the device's words once per block, rather than by each of thousands of walks to the same few
// words.
struct BlockListTotals {
    int longest[2];
    unsigned long long entries[2];

    // Every thread of the block calls these two, before and after its walks.
    __device__ void clear()
    {
        if (threadIdx.x == 0) *this = {};
        __syncthreads();
    }
    __device__ void add_to(int* device_longest, unsigned long long* device_entries)
    {
        __syncthreads();
        if (threadIdx.x != 0) return;
        atomicMax(&device_longest[0], longest[0]);
        atomicMax(&device_longest[1], longest[1]);
        if (device_entries == nullptr) return;
        atomicAdd(&device_entries[0], entries[0]);
        atomicAdd(&device_entries[1], entries[1]);
    }
    // add: lists that were written (their entries count); add_longest: lists only measured, such
    // as one left out for want of room (their entries do not).
    __device__ void add(ListLengths n)
    {
        add_longest(n);
        atomicAdd(&entries[0], static_cast<unsigned long long>(n.nodes));
        atomicAdd(&entries[1], static_cast<unsigned long long>(n.leaves));
    }
    __device__ void add_longest(ListLengths n)
    {
        atomicMax(&longest[0], n.nodes);
        atomicMax(&longest[1], n.leaves);
    }
};

// Where a list of `length` entries goes: its room, or a place in the pool taken by atomicAdd;
// -1 where neither has it.
__device__ long long place_list(long long length, int capacity, long long room_at, long long pool_base,
                                long long pool_capacity, unsigned long long* cursor, unsigned long long* needed)
{
    if (length <= capacity) return room_at;
    const auto at = static_cast<long long>(atomicAdd(cursor, static_cast<unsigned long long>(length)));
    atomicAdd(needed, static_cast<unsigned long long>(length));
    return at + length <= pool_capacity ? pool_base + at : -1;
}

// Group g's two lists placed: where each starts in its list array, -1 where it found no place.
struct ListPlaces {
    long long nodes, leaves;
    __device__ bool found() const { return nodes >= 0 && leaves >= 0; }
};

__device__ ListPlaces place_lists(const BoundedLists& out, int g, ListLengths n)
{
    return {place_list(n.nodes, out.node_capacity, static_cast<long long>(g) * out.node_capacity, out.node_pool_base,
                       out.node_pool_capacity, &out.pool[0], &out.totals[2]),
            place_list(n.leaves, out.leaf_capacity, static_cast<long long>(g) * out.leaf_capacity, out.leaf_pool_base,
                       out.leaf_pool_capacity, &out.pool[1], &out.totals[3])};
}

// The warp walk (tree/walk.hpp: walk_group_in_rounds, which gives its order): a round takes up to
// 32 runs of siblings from the top of the warp's stack in shared memory, a lane each (under the
// relative criterion 64, two a lane, where the stack holds them). Every lane of every round loads
// a node of its own, so the device holds thousands of walks' loads in flight; a
// thread per group, walking its path one dependent load at a time, filled a quarter of one wave
// and waited on each load. The lists hold the path walk's entries in the rounds' order, which is
// fixed: a walk repeats to the bit.
constexpr int kWarpWalkWarps = 4; // a block's

__device__ unsigned lanes_below()
{
    return (1u << lane_index()) - 1u;
}

// A list written by a warp: the entries of a round's lanes one after the other from `length` on;
// past `capacity` they are only counted (INT_MAX: a place known to hold the whole list).
struct WarpList {
    std::int32_t* out = nullptr;
    int capacity = 0;
    int length = 0;
    __device__ void take(bool mine, std::int32_t i)
    {
        const unsigned lanes = __ballot_sync(kAllLanes, mine);
        if (mine) {
            const int at = length + __popc(lanes & lanes_below());
            if (at < capacity) __stcs(out + at, i);
        }
        length += __popc(lanes);
    }
};

struct WarpLists {
    WarpList nodes, leaves;
    __device__ void take(bool to_nodes, bool to_leaves, std::int32_t i)
    {
        nodes.take(to_nodes, i);
        leaves.take(to_leaves, i);
    }
    __device__ ListLengths lengths() const { return {nodes.length, leaves.length}; }
};

// One round of the warp's walk over the top `take` runs of its stack, kRuns a lane (lane l takes
// runs l, l + 32, ...): their tests, their entries handed to lists.take (a call of the whole warp)
// and their pushes. Returns the stack's new size.
template <int kRuns, class Open>
__device__ int walk_round(const Group<float>& group, const Open& open, int2* stack, int size, int take,
                          WarpLists& lists)
{
    const int lane = lane_index();
    int2 run[kRuns];
    bool valid[kRuns];
    NodeStep step[kRuns];
#pragma unroll
    for (int k = 0; k < kRuns; ++k) {
        valid[k] = k * kWalkLanes + lane < take;
        run[k] = valid[k] ? stack[size - take + k * kWalkLanes + lane] : make_int2(0, 0);
    }
    size -= take;
    __syncwarp(); // every run read before the pushes overwrite them
#pragma unroll
    for (int k = 0; k < kRuns; ++k) step[k] = valid[k] ? open(group, run[k].x) : NodeStep{false, false, 0};
#pragma unroll
    for (int k = 0; k < kRuns; ++k)
        lists.take(valid[k] && !step[k].opened, valid[k] && step[k].opened && step[k].leaf, run[k].x);
#pragma unroll
    for (int k = 0; k < kRuns; ++k) { // the rests, then the children
        const bool rest = valid[k] && step[k].skip < run[k].y;
        const unsigned rests = __ballot_sync(kAllLanes, rest);
        if (rest) stack[size + __popc(rests & lanes_below())] = make_int2(step[k].skip, run[k].y);
        size += __popc(rests);
    }
#pragma unroll
    for (int k = 0; k < kRuns; ++k) {
        const bool children = valid[k] && step[k].opened && !step[k].leaf;
        const unsigned parents = __ballot_sync(kAllLanes, children);
        if (children) stack[size + __popc(parents & lanes_below())] = make_int2(run[k].x + 1, step[k].skip);
        size += __popc(parents);
    }
    __syncwarp();
    return size;
}

// Group g's walk by the warp under `kRounds` (tree/walk.hpp), every entry handed to lists.take.
template <const WalkRounds& kRounds, class Open>
__device__ void warp_walk(const Group<float>& group, const Open& open, int num_nodes, int2* stack, WarpLists& lists)
{
    constexpr int kMost = kRounds.most_runs();
    const int lane = lane_index();
    int size = 1;
    if (lane == 0) stack[0] = make_int2(0, num_nodes);
    __syncwarp();
    while (size > 0) {
        if (size > kRounds.capacity - kMost) {
            // No room for a full round's pushes: the top run is walked along its path, one node a
            // round (every lane loads the same node).
            const int2 run = stack[size - 1];
            --size;
            __syncwarp();
            walk_path(group, open, run.x, run.y, [&](std::int32_t i, const NodeStep& step) {
                lists.take(lane == 0 && !step.opened, lane == 0 && step.opened && step.leaf, i);
            });
            continue;
        }
        if constexpr (kRounds.runs_per_lane > 1)
            if (size >= kMost) {
                size = walk_round<kRounds.runs_per_lane>(group, open, stack, size, kMost, lists);
                continue;
            }
        size = walk_round<1>(group, open, stack, size, min(size, kWalkLanes), lists);
    }
}

// Group g's walk under the criterion the kernel was built for: kRelative, the view's r_rel2 is set.
template <bool kRelative>
__device__ void warp_walk_packed(const OctreeView<float>& tree, int g, int2* stack, WarpLists& lists)
{
    const Group<float> group = tree.groups[g];
    if constexpr (kRelative)
        warp_walk<kRelativeRounds>(group, PackedOpening<float, true>{tree.walk_nodes, tree.mac_scale[g]},
                                   tree.num_nodes, stack, lists);
    else
        warp_walk<kGeometricRounds>(group, PackedOpening<float, false>{tree.walk_nodes, 0.f}, tree.num_nodes, stack,
                                    lists);
}

// The warp walk kernels: warp w of block b walks group b * kWarpWalkWarps + w, so that the warps
// of a block, and the blocks that start together, walk neighbouring groups, which read the same
// nodes. (Under the relative criterion the longest walks, of the groups of smallest |a|, end the
// kernel alone; with doubled rounds, starting the largest scales first made the walks longer.)
struct WarpWalkSlot {
    int g;
    int2* stack;
};

// The runs a warp's stack holds, as the criterion's rounds need: the stacks are shared memory taken
// from the L1 cache that holds the nodes, so the geometric walk keeps the smaller one.
template <bool kRelative> constexpr int kStackRuns = (kRelative ? kRelativeRounds : kGeometricRounds).capacity;

template <int kRuns, class Body> __device__ void for_warp_group(int num_groups, int2 (*stacks)[kRuns], Body&& body)
{
    const int w = static_cast<int>(threadIdx.x / 32);
    const int g = static_cast<int>(blockIdx.x) * kWarpWalkWarps + w;
    if (g < num_groups) body(WarpWalkSlot{g, stacks[w]});
}

// Pass 1 by warps: the lists' lengths.
template <bool kRelative>
__global__ void __launch_bounds__(kWarpWalkWarps * 32)
    warp_walk_count_kernel(OctreeView<float> tree, long long* node_count, long long* leaf_count, int* longest)
{
    __shared__ BlockListTotals block;
    __shared__ int2 stacks[kWarpWalkWarps][kStackRuns<kRelative>];
    block.clear();
    for_warp_group(tree.num_groups, stacks, [&](WarpWalkSlot slot) {
        WarpLists lists{{nullptr, 0}, {nullptr, 0}};
        warp_walk_packed<kRelative>(tree, slot.g, slot.stack, lists);
        if (lane_index() != 0) return;
        node_count[slot.g] = lists.nodes.length;
        leaf_count[slot.g] = lists.leaves.length;
        block.add_longest(lists.lengths());
    });
    block.add_to(longest, nullptr);
}

// Pass 2 by warps: the lists at their scanned offsets.
template <bool kRelative>
__global__ void __launch_bounds__(kWarpWalkWarps * 32)
    warp_walk_write_kernel(OctreeView<float> tree, const long long* node_offset, const long long* leaf_offset,
                           std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch)
{
    __shared__ int2 stacks[kWarpWalkWarps][kStackRuns<kRelative>];
    for_warp_group(tree.num_groups, stacks, [&](WarpWalkSlot slot) {
        const int g = slot.g;
        WarpLists lists{{node_list + node_offset[g], INT_MAX}, {leaf_list + leaf_offset[g], INT_MAX}};
        warp_walk_packed<kRelative>(tree, g, slot.stack, lists);
        // The lists were sized by pass 1: a pass that wrote another length is a bug, reported.
        if (lane_index() == 0 && (lists.nodes.length != node_offset[g + 1] - node_offset[g] ||
                                  lists.leaves.length != leaf_offset[g + 1] - leaf_offset[g]))
            atomicCAS(mismatch, 0, g + 1);
    });
}

// The one pass by warps: each list into its room; where one outgrows it, the warp takes places
// (the room where a list fits it, else the pool) and walks again to write both there. Only where
// the pool is full too is the list left out (its count 0), for the caller to walk again.
template <bool kRelative>
__global__ void __launch_bounds__(kWarpWalkWarps * 32)
    warp_walk_bounded_kernel(OctreeView<float> tree, BoundedLists out)
{
    __shared__ BlockListTotals block;
    __shared__ int2 stacks[kWarpWalkWarps][kStackRuns<kRelative>];
    block.clear();
    for_warp_group(tree.num_groups, stacks, [&](WarpWalkSlot slot) {
        const int g = slot.g;
        const bool leader = lane_index() == 0;
        WarpLists lists{{out.node_list + static_cast<long long>(g) * out.node_capacity, out.node_capacity},
                        {out.leaf_list + static_cast<long long>(g) * out.leaf_capacity, out.leaf_capacity}};
        warp_walk_packed<kRelative>(tree, g, slot.stack, lists);
        const ListLengths n = lists.lengths();
        if (n.nodes <= out.node_capacity && n.leaves <= out.leaf_capacity) {
            if (!leader) return;
            out.node_count[g] = n.nodes;
            out.leaf_count[g] = n.leaves;
            block.add(n);
            return;
        }
        ListPlaces at{0, 0};
        if (leader) at = place_lists(out, g, n);
        at = {__shfl_sync(kAllLanes, at.nodes, 0), __shfl_sync(kAllLanes, at.leaves, 0)};
        if (at.found()) {
            lists = {{out.node_list + at.nodes, INT_MAX}, {out.leaf_list + at.leaves, INT_MAX}};
            warp_walk_packed<kRelative>(tree, g, slot.stack, lists);
        }
        if (!leader) return;
        if (!at.found()) {
            out.node_count[g] = out.leaf_count[g] = 0;
            block.add_longest(n);
            atomicOr(&out.longest[2], kPoolFull);
            return;
        }
        out.node_count[g] = n.nodes;
        out.leaf_count[g] = n.leaves;
        out.node_place[g] = at.nodes;
        out.leaf_place[g] = at.leaves;
        block.add(n);
    });
    block.add_to(out.longest, out.totals);
}

unsigned warp_walk_blocks(int num_groups)
{
    return static_cast<unsigned>(ceil_div(num_groups, kWarpWalkWarps));
}

} // namespace

void launch_opening_radii(int num_nodes, const float* size, const float* com_offset, float theta,
                          const float* softening_radius2, float* r_open2, cudaStream_t stream)
{
    if (num_nodes == 0) return;
    opening_radii_kernel<<<static_cast<unsigned>(ceil_div(num_nodes, 256)), 256, 0, stream>>>(
        num_nodes, size, com_offset, theta, softening_radius2, r_open2);
    check_launch("opening_radii_kernel", stream);
}

void launch_relative_radii(int num_nodes, const float* size, const Vec4<float>* com_mass, float alpha, float* r_rel2,
                           cudaStream_t stream)
{
    if (num_nodes == 0) return;
    relative_radii_kernel<<<static_cast<unsigned>(ceil_div(num_nodes, 256)), 256, 0, stream>>>(num_nodes, size,
                                                                                               com_mass, alpha, r_rel2);
    check_launch("relative_radii_kernel", stream);
}

void launch_pack_walk_nodes(const OctreeView<float>& tree, WalkNode<float>* out, cudaStream_t stream)
{
    if (tree.num_nodes == 0) return;
    pack_walk_nodes_kernel<<<static_cast<unsigned>(ceil_div(tree.num_nodes, 256)), 256, 0, stream>>>(
        tree.num_nodes, tree.com_mass, tree.r_open2, tree.r_rel2, tree.next, tree.is_leaf, out);
    check_launch("pack_walk_nodes_kernel", stream);
}

void launch_walk_count(const OctreeView<float>& tree, long long* node_count, long long* leaf_count, int* longest,
                       cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    const unsigned blocks = warp_walk_blocks(tree.num_groups);
    if (tree.r_rel2 != nullptr)
        warp_walk_count_kernel<true><<<blocks, kWarpWalkWarps * 32, 0, stream>>>(tree, node_count, leaf_count, longest);
    else
        warp_walk_count_kernel<false>
            <<<blocks, kWarpWalkWarps * 32, 0, stream>>>(tree, node_count, leaf_count, longest);
    check_launch("warp_walk_count_kernel", stream);
}

void launch_walk_bounded(const OctreeView<float>& tree, const BoundedLists& lists, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    const unsigned blocks = warp_walk_blocks(tree.num_groups);
    if (tree.r_rel2 != nullptr)
        warp_walk_bounded_kernel<true><<<blocks, kWarpWalkWarps * 32, 0, stream>>>(tree, lists);
    else
        warp_walk_bounded_kernel<false><<<blocks, kWarpWalkWarps * 32, 0, stream>>>(tree, lists);
    check_launch("warp_walk_bounded_kernel", stream);
}

void launch_walk_write(const OctreeView<float>& tree, const long long* node_offset, const long long* leaf_offset,
                       std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    const unsigned blocks = warp_walk_blocks(tree.num_groups);
    if (tree.r_rel2 != nullptr)
        warp_walk_write_kernel<true><<<blocks, kWarpWalkWarps * 32, 0, stream>>>(tree, node_offset, leaf_offset,
                                                                                 node_list, leaf_list, mismatch);
    else
        warp_walk_write_kernel<false><<<blocks, kWarpWalkWarps * 32, 0, stream>>>(tree, node_offset, leaf_offset,
                                                                                  node_list, leaf_list, mismatch);
    check_launch("warp_walk_write_kernel", stream);
}

} // namespace grove::gpu
