// The walk kernels: one thread per group running the shared walk.hpp (count, then write; or, with
// room per group known, write at once), and the per-node opening radii. See tree_walk.cuh for why this file is compiled
// without contraction.
#include "gpu/tree_walk.cuh"

#include "gpu/cuda_check.cuh"
#include "tree/walk.hpp"

namespace grove::gpu {

namespace {

constexpr int kWalkThreads = 64;

__global__ void opening_radii_kernel(int num_nodes, const float* size, const float* com_offset, float theta,
                                     float* r_open2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < num_nodes) r_open2[i] = opening_radius2(size[i], com_offset[i], theta);
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

// Four entries in registers, oldest in x: a push shifts them along (three moves, no branch on
// the position), so after four pushes they leave in order in one 16-byte store.
struct Quad {
    int4 v;
    __device__ void push(std::int32_t e) { v = make_int4(v.y, v.z, v.w, e); }
    // The newest k (0..3) entries, oldest first, to out[0..k), with the evict-first hint (Octet).
    __device__ void store_last(std::int32_t* out, int k) const
    {
        if (k > 2) __stcs(out + k - 3, v.y);
        if (k > 1) __stcs(out + k - 2, v.z);
        if (k > 0) __stcs(out + k - 1, v.w);
    }
};

// Eight entries in two Quads, which leave together as one 32-byte sector (two 16-byte stores in a
// row). Threads of a warp write to unrelated lists, so every store is a transaction of its own,
// and a sector written in two halves far apart in time can leave the L2 half-written once the
// lists outgrow it; whole sectors nearly halved the walk at 2^23 (bench/results/tree-kernels.md).
struct Octet {
    Quad first, second;
    // Entry number `staged` (0..7) of the eight.
    __device__ void push(std::int32_t e, int staged)
    {
        if (staged < 4)
            first.push(e);
        else
            second.push(e);
    }
    // With the evict-first hint: the lists outgrow the L2 and are read once, by the evaluation.
    __device__ void store(std::int32_t* out) const
    {
        __stcs(reinterpret_cast<int4*>(out), first.v);
        __stcs(reinterpret_cast<int4*>(out) + 1, second.v);
    }
    // The first k (0..7) entries, pushed since the last store, to out[0..k).
    __device__ void store_first(std::int32_t* out, int k) const
    {
        if (k >= 4) {
            __stcs(reinterpret_cast<int4*>(out), first.v);
            second.store_last(out + 4, k - 4);
        } else {
            first.store_last(out, k);
        }
    }
};

// A walk's sink that hands node and leaf entries to two lists of type List.
template <class List> struct ListPass {
    List nodes, leaves;
    __device__ void node(std::int32_t i) { nodes.push(i); }
    __device__ void leaf(std::int32_t i) { leaves.push(i); }
};

// One thread's list at a scanned offset: single entries until the write position is 32-byte
// aligned, then eight at a time in one sector.
struct StagedList {
    std::int32_t* out;
    int written = 0; // entries stored
    int staged = 0;  // entries held in `buffer`
    Octet buffer;

    __device__ void push(std::int32_t v)
    {
        if (staged == 0 && (reinterpret_cast<std::uintptr_t>(out + written) & 31) != 0) {
            out[written++] = v; // until the position is aligned
            return;
        }
        buffer.push(v, staged);
        if (++staged == 8) {
            buffer.store(out + written);
            written += 8;
            staged = 0;
        }
    }
    __device__ void flush()
    {
        buffer.store_first(out + written, staged);
        written += staged;
        staged = 0;
    }
};

// A list in a region of `capacity` entries (a multiple of 8, 32-byte aligned): entries leave
// eight at a time in one sector; past the capacity they are only counted.
struct BoundedList {
    std::int32_t* out;
    int capacity;
    int length = 0; // entries seen
    Octet buffer;

    __device__ void push(std::int32_t v)
    {
        buffer.push(v, length & 7);
        if (++length % 8 == 0 && length <= capacity) buffer.store(out + length - 8);
    }
    __device__ void flush()
    {
        const int k = length & 7, at = length - k;
        if (at + k <= capacity) buffer.store_first(out + at, k);
    }
};

// Group g's one-thread walk on the packed nodes, at most `budget` of them: false when it ran out.
// Without a budget (INT32_MAX, the same for every thread) the walk counts no nodes.
template <class Sink> __device__ bool walk_packed(const OctreeView<float>& tree, int g, Sink& sink, int budget)
{
    const Group<float> group = tree.groups[g];
    const auto walk = [&](const auto& open) {
        if (budget != INT32_MAX) return walk_group_within(tree, group, open, sink, budget);
        walk_group_with(tree, group, open, sink);
        return true;
    };
    if (tree.r_rel2 != nullptr) return walk(PackedOpening<float, true>{tree.walk_nodes, tree.mac_scale[g]});
    return walk(PackedOpening<float, false>{tree.walk_nodes, 0.f});
}

__device__ void list_long_walk(const LongWalks& long_walks, int g)
{
    long_walks.queue[atomicAdd(long_walks.count, 1)] = g;
}

constexpr unsigned kAllLanes = 0xffffffffu;

__device__ int lane_index()
{
    return static_cast<int>(threadIdx.x & 31u);
}

// One lane's part of group g's walk: the entries among nodes [lo, hi) of the one-thread walk's
// path, in its order. The lane follows the path from the root, passing without a look the
// subtrees that end before lo, so that it makes the same decisions on the nodes that lead there;
// an accepted node belongs to the part that holds its index. The parts of the node range, one
// after the other, are the whole walk (the walk lists nodes in increasing index order).
template <class Open, class Sink>
__device__ void walk_part(const OctreeView<float>& tree, const Group<float>& group, const Open& open, int lo, int hi,
                          Sink& sink)
{
    std::int32_t i = 0;
    while (i < hi) {
        const NodeStep step = open(group, i);
        if (step.skip <= lo) { // the whole subtree lies before the part
            i = step.skip;
            continue;
        }
        if (i >= lo) {
            if (step.opened && step.leaf) sink.leaf(i);
            if (!step.opened) sink.node(i);
        }
        i = step.opened ? i + 1 : step.skip;
    }
}

// A long walk's parts: kParts equal ranges of node indices, lane k walking parts k, k + 32, ...
// A group's walk is dense where its own cells are, so that a few neighbouring ranges hold most
// of it: finer ranges dealt out in turn spread them over the lanes. Each part costs a descent from
// the root besides its own nodes.
constexpr int kParts = 256;
constexpr int kPartsPerLane = kParts / 32;
constexpr int kLongWalkThreads = 256;
constexpr int kLongWalkWarps = kLongWalkThreads / 32;

// Where each part's entries start in the group's lists (filled by warp_count), per warp.
struct PartOffsets {
    int nodes[kParts], leaves[kParts];
};

template <class Sink> __device__ void walk_lists_part(const OctreeView<float>& tree, int g, int part, Sink& sink)
{
    const auto m = static_cast<long long>(tree.num_nodes);
    const auto lo = static_cast<int>(m * part / kParts), hi = static_cast<int>(m * (part + 1) / kParts);
    const Group<float> group = tree.groups[g];
    if (tree.r_rel2 != nullptr)
        walk_part(tree, group, PackedOpening<float, true>{tree.walk_nodes, tree.mac_scale[g]}, lo, hi, sink);
    else
        walk_part(tree, group, PackedOpening<float, false>{tree.walk_nodes, 0.f}, lo, hi, sink);
}

// The lengths of group g's whole lists, after which `at` holds where each part's entries start.
struct WarpCount {
    long long nodes = 0, leaves = 0;
};

__device__ WarpCount warp_count(const OctreeView<float>& tree, int g, PartOffsets& at)
{
    const int lane = lane_index();
    for (int k = 0; k < kPartsPerLane; ++k) {
        CountPass part;
        walk_lists_part(tree, g, lane + 32 * k, part);
        at.nodes[lane + 32 * k] = part.lengths.nodes;
        at.leaves[lane + 32 * k] = part.lengths.leaves;
    }
    __syncwarp();
    // Lane k scans parts 8k .. 8k + 7, then the lanes' sums are scanned across the warp.
    long long nodes = 0, leaves = 0;
    for (int p = kPartsPerLane * lane; p < kPartsPerLane * (lane + 1); ++p) {
        nodes += at.nodes[p];
        leaves += at.leaves[p];
    }
    const long long own_nodes = nodes, own_leaves = leaves;
    for (int d = 1; d < 32; d <<= 1) {
        const long long n = __shfl_up_sync(kAllLanes, nodes, d), l = __shfl_up_sync(kAllLanes, leaves, d);
        if (lane >= d) {
            nodes += n;
            leaves += l;
        }
    }
    WarpCount c;
    c.nodes = __shfl_sync(kAllLanes, nodes, 31);
    c.leaves = __shfl_sync(kAllLanes, leaves, 31);
    auto node_at = static_cast<int>(nodes - own_nodes), leaf_at = static_cast<int>(leaves - own_leaves);
    for (int p = kPartsPerLane * lane; p < kPartsPerLane * (lane + 1); ++p) {
        const int n = at.nodes[p], l = at.leaves[p];
        at.nodes[p] = node_at;
        at.leaves[p] = leaf_at;
        node_at += n;
        leaf_at += l;
    }
    __syncwarp();
    return c;
}

// The warp's lists written from node_out and leaf_out (null: that kind is not written), each part
// where warp_count put it.
__device__ void warp_write(const OctreeView<float>& tree, int g, const PartOffsets& at, std::int32_t* node_out,
                           std::int32_t* leaf_out)
{
    if (node_out == nullptr && leaf_out == nullptr) return;
    struct Sink {
        std::int32_t* nodes;
        std::int32_t* leaves;
        __device__ void node(std::int32_t i)
        {
            if (nodes) __stcs(nodes++, i);
        }
        __device__ void leaf(std::int32_t i)
        {
            if (leaves) __stcs(leaves++, i);
        }
    };
    for (int p = lane_index(); p < kParts; p += 32) {
        Sink sink{node_out ? node_out + at.nodes[p] : nullptr, leaf_out ? leaf_out + at.leaves[p] : nullptr};
        walk_lists_part(tree, g, p, sink);
    }
    __syncwarp(); // the offsets are the next group's to overwrite
}

// Each warp of a long-walk kernel takes listed groups in turn.
struct WarpTurns {
    int first, step;
    __device__ WarpTurns()
        : first(static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32)),
          step(static_cast<int>(gridDim.x * blockDim.x / 32))
    {
    }
};

__global__ void walk_count_kernel(OctreeView<float> tree, LongWalks long_walks, long long* node_count,
                                  long long* leaf_count, int* longest)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= tree.num_groups) return;
    CountPass pass;
    if (!walk_packed(tree, g, pass, long_walks.budget)) {
        list_long_walk(long_walks, g);
        return;
    }
    node_count[g] = pass.lengths.nodes;
    leaf_count[g] = pass.lengths.leaves;
    atomicMax(&longest[0], pass.lengths.nodes);
    atomicMax(&longest[1], pass.lengths.leaves);
}

__global__ void walk_long_count_kernel(OctreeView<float> tree, LongWalks long_walks, long long* node_count,
                                       long long* leaf_count, int* longest)
{
    __shared__ PartOffsets offsets[kLongWalkWarps];
    const int listed = *long_walks.count;
    for (int q = WarpTurns().first; q < listed; q += WarpTurns().step) {
        const int g = long_walks.queue[q];
        const WarpCount c = warp_count(tree, g, offsets[threadIdx.x / 32]);
        __syncwarp();
        if (lane_index() == 0) {
            node_count[g] = c.nodes;
            leaf_count[g] = c.leaves;
            atomicMax(&longest[0], static_cast<int>(c.nodes));
            atomicMax(&longest[1], static_cast<int>(c.leaves));
        }
    }
}

__global__ void walk_bounded_kernel(OctreeView<float> tree, BoundedLists out, LongWalks long_walks)
{
    __shared__ unsigned long long block_totals[2];
    if (threadIdx.x < 2) block_totals[threadIdx.x] = 0;
    __syncthreads();
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < tree.num_groups) {
        const int nc = out.node_capacity, lc = out.leaf_capacity;
        ListPass<BoundedList> pass{{out.node_list + static_cast<std::size_t>(g) * nc, nc},
                                   {out.leaf_list + static_cast<std::size_t>(g) * lc, lc}};
        const bool whole = walk_packed(tree, g, pass, long_walks.budget);
        if (whole && pass.nodes.length <= nc && pass.leaves.length <= lc) {
            pass.nodes.flush();
            pass.leaves.flush();
            out.node_count[g] = pass.nodes.length;
            out.leaf_count[g] = pass.leaves.length;
            atomicMax(&out.longest[0], pass.nodes.length);
            atomicMax(&out.longest[1], pass.leaves.length);
            atomicAdd(&block_totals[0], static_cast<unsigned long long>(pass.nodes.length));
            atomicAdd(&block_totals[1], static_cast<unsigned long long>(pass.leaves.length));
        } else {
            list_long_walk(long_walks, g); // a warp walks it again, into its room or the pool
        }
    }
    __syncthreads();
    if (threadIdx.x < 2) atomicAdd(&out.totals[threadIdx.x], block_totals[threadIdx.x]);
}

// Where a long walk's list of `length` entries goes: its room, or a place in the pool taken by
// lane 0; -1 where neither has it.
__device__ long long place_list(long long length, int capacity, long long room_at, long long pool_base,
                                long long pool_capacity, unsigned long long* cursor, unsigned long long* needed)
{
    if (length <= capacity) return room_at;
    long long at = 0;
    if (lane_index() == 0) {
        at = static_cast<long long>(atomicAdd(cursor, static_cast<unsigned long long>(length)));
        atomicAdd(needed, static_cast<unsigned long long>(length));
    }
    at = __shfl_sync(kAllLanes, at, 0);
    return at + length <= pool_capacity ? pool_base + at : -1;
}

__global__ void walk_long_bounded_kernel(OctreeView<float> tree, BoundedLists out, LongWalks long_walks)
{
    __shared__ PartOffsets offsets[kLongWalkWarps];
    const int listed = *long_walks.count;
    for (int q = WarpTurns().first; q < listed; q += WarpTurns().step) {
        const int g = long_walks.queue[q];
        PartOffsets& at = offsets[threadIdx.x / 32];
        const WarpCount count = warp_count(tree, g, at);
        const long long node_at =
            place_list(count.nodes, out.node_capacity, static_cast<long long>(g) * out.node_capacity,
                       out.node_pool_base, out.node_pool_capacity, &out.pool[0], &out.totals[2]);
        const long long leaf_at =
            place_list(count.leaves, out.leaf_capacity, static_cast<long long>(g) * out.leaf_capacity,
                       out.leaf_pool_base, out.leaf_pool_capacity, &out.pool[1], &out.totals[3]);
        warp_write(tree, g, at, node_at >= 0 ? out.node_list + node_at : nullptr,
                   leaf_at >= 0 ? out.leaf_list + leaf_at : nullptr);
        if (lane_index() == 0) {
            out.node_count[g] = node_at >= 0 ? count.nodes : 0;
            out.leaf_count[g] = leaf_at >= 0 ? count.leaves : 0;
            out.node_place[g] = node_at;
            out.leaf_place[g] = leaf_at;
            atomicMax(&out.longest[0], static_cast<int>(count.nodes));
            atomicMax(&out.longest[1], static_cast<int>(count.leaves));
            if (node_at < 0 || leaf_at < 0) atomicExch(&out.longest[2], 1);
            atomicAdd(&out.totals[0], static_cast<unsigned long long>(count.nodes));
            atomicAdd(&out.totals[1], static_cast<unsigned long long>(count.leaves));
        }
    }
}

__global__ void walk_write_kernel(OctreeView<float> tree, const long long* node_offset, const long long* leaf_offset,
                                  std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch, LongWalks long_walks)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= tree.num_groups) return;
    ListPass<StagedList> pass{{node_list + node_offset[g]}, {leaf_list + leaf_offset[g]}};
    // A long walk stops where pass 1's did, and a warp writes its lists whole.
    if (!walk_packed(tree, g, pass, long_walks.budget)) return;
    pass.nodes.flush();
    pass.leaves.flush();
    // The lists were sized by pass 1: a pass that wrote another length is a bug, reported.
    if (pass.nodes.written != node_offset[g + 1] - node_offset[g] ||
        pass.leaves.written != leaf_offset[g + 1] - leaf_offset[g])
        atomicCAS(mismatch, 0, g + 1);
}

__global__ void walk_long_write_kernel(OctreeView<float> tree, const long long* node_offset,
                                       const long long* leaf_offset, std::int32_t* node_list, std::int32_t* leaf_list,
                                       int* mismatch, LongWalks long_walks, int first)
{
    __shared__ PartOffsets offsets[kLongWalkWarps];
    const int listed = *long_walks.count;
    for (int q = WarpTurns().first; q < listed; q += WarpTurns().step) {
        const int g = long_walks.queue[q] - first;
        if (g < 0 || g >= tree.num_groups) continue; // another batch's
        PartOffsets& at = offsets[threadIdx.x / 32];
        const WarpCount c = warp_count(tree, g, at);
        warp_write(tree, g, at, node_list + node_offset[g], leaf_list + leaf_offset[g]);
        if (lane_index() == 0 &&
            (c.nodes != node_offset[g + 1] - node_offset[g] || c.leaves != leaf_offset[g + 1] - leaf_offset[g]))
            atomicCAS(mismatch, 0, g + 1);
    }
}

// Blocks of the long-walk kernels: enough warps to fill the device, each taking listed groups in
// turn (how many were listed is known only on the device).
unsigned long_walk_blocks()
{
    thread_local int cached_device = -1, sms = 1;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    if (device != cached_device) {
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        cached_device = device;
    }
    return static_cast<unsigned>(sms * 8);
}

} // namespace

void launch_opening_radii(int num_nodes, const float* size, const float* com_offset, float theta, float* r_open2,
                          cudaStream_t stream)
{
    if (num_nodes == 0) return;
    opening_radii_kernel<<<static_cast<unsigned>(ceil_div(num_nodes, 256)), 256, 0, stream>>>(
        num_nodes, size, com_offset, theta, r_open2);
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
                       const LongWalks& long_walks, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_count_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, long_walks, node_count, leaf_count, longest);
    check_launch("walk_count_kernel", stream);
    if (long_walks.budget == INT32_MAX) return;
    walk_long_count_kernel<<<long_walk_blocks(), kLongWalkThreads, 0, stream>>>(tree, long_walks, node_count,
                                                                                leaf_count, longest);
    check_launch("walk_long_count_kernel", stream);
}

void launch_walk_bounded(const OctreeView<float>& tree, const BoundedLists& lists, const LongWalks& long_walks,
                         cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_bounded_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, lists, long_walks);
    check_launch("walk_bounded_kernel", stream);
    walk_long_bounded_kernel<<<long_walk_blocks(), kLongWalkThreads, 0, stream>>>(tree, lists, long_walks);
    check_launch("walk_long_bounded_kernel", stream);
}

void launch_walk_write(const OctreeView<float>& tree, const long long* node_offset, const long long* leaf_offset,
                       std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch, const LongWalks& long_walks,
                       int first, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_write_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, node_offset, leaf_offset, node_list, leaf_list, mismatch, long_walks);
    check_launch("walk_write_kernel", stream);
    if (long_walks.budget == INT32_MAX) return;
    walk_long_write_kernel<<<long_walk_blocks(), kLongWalkThreads, 0, stream>>>(
        tree, node_offset, leaf_offset, node_list, leaf_list, mismatch, long_walks, first);
    check_launch("walk_long_write_kernel", stream);
}

} // namespace grove::gpu
