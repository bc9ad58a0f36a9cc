// The walk kernels: one thread per group running the shared walk.hpp (count, then write; or, with
// room per group known, write at once), and the per-node opening radii. The writing walks run the
// lanes of a warp in step, so that the warp writes their lists together (WarpList). See tree_walk.cuh for why this file
// is compiled without contraction.
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

__global__ void walk_count_kernel(OctreeView<float> tree, long long* node_count, long long* leaf_count, int* longest)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= tree.num_groups) return;
    const ListLengths n = walk_group<CountPass>(tree, g, nullptr, nullptr);
    node_count[g] = n.nodes;
    leaf_count[g] = n.leaves;
    atomicMax(&longest[0], n.nodes);
    atomicMax(&longest[1], n.leaves);
}

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kLanes = 32;
// Entries a lane stages per list before its warp writes them out, 64 bytes: 16 lanes store one
// lane's entries in one coalesced write.
constexpr int kStaged = 16;

// One list per lane of a warp, staged in shared memory and written by the whole warp. Every lane
// walks its own group and its list is a region of its own; one lane writing its entries itself,
// four to a 16-byte store, made a memory transaction per store in scattered places, and at 2^23
// the write pass took 13 ms against 4.5 for the same walk counting only (ncu). Here the warp
// writes a full lane's 16 entries as one contiguous 64-byte store, two lanes per instruction.
struct WarpList {
    int (*stage)[kStaged + 1]; // [kWalkThreads][kStaged + 1]: this block's rows (odd pitch: no bank conflicts)
    std::int32_t* out;         // this lane's list
    int capacity;              // entries that may be written; more are only counted
    int length = 0;            // entries seen
    int staged = 0;            // entries in this lane's row

    __device__ void push(std::int32_t v) { stage[threadIdx.x][staged++] = v; }

    // Warp-wide: writes the rows of the lanes whose flag is set (`rows` entries each), two rows
    // per round, 16 lanes per row.
    __device__ void write_rows(bool flag, int rows)
    {
        const int lane = static_cast<int>(threadIdx.x) & (kLanes - 1);
        const int warp_first = static_cast<int>(threadIdx.x) - lane;
        __syncwarp(); // the rows' pushes are seen by every lane
        unsigned pending = __ballot_sync(kFullMask, flag);
        while (pending != 0) {
            const int a = __ffs(pending) - 1;
            pending &= pending - 1;
            const int b = pending != 0 ? __ffs(pending) - 1 : -1;
            if (b >= 0) pending &= pending - 1;
            const int src = lane < kStaged ? a : b; // lanes 0-15 write row a, 16-31 row b
            const int e = lane & (kStaged - 1);
            const int src_lane = src >= 0 ? src : a;
            std::int32_t* dst = reinterpret_cast<std::int32_t*>(
                __shfl_sync(kFullMask, reinterpret_cast<unsigned long long>(out + length - rows), src_lane));
            const int n = __shfl_sync(kFullMask, rows, src_lane);
            const int first = __shfl_sync(kFullMask, length - rows, src_lane);
            const int cap = __shfl_sync(kFullMask, capacity, src_lane);
            if (src >= 0 && e < n && first + e < cap) dst[e] = stage[warp_first + src][e];
        }
        __syncwarp();
    }

    // Warp-wide, after every step: the full rows go out.
    __device__ void flush_full()
    {
        const bool full = staged == kStaged;
        if (full) length += kStaged;
        write_rows(full, kStaged);
        if (full) staged = 0;
    }

    // Warp-wide, at the end: what is left in every row.
    __device__ void flush_rest()
    {
        const int rows = staged;
        length += rows;
        write_rows(rows > 0, rows);
        staged = 0;
    }
};

struct WarpLists {
    WarpList nodes, leaves;
    __device__ void node(std::int32_t i) { nodes.push(i); }
    __device__ void leaf(std::int32_t i) { leaves.push(i); }
};

// The walk of one group per lane, in step across the warp so that the warp can write the lists
// (every lane takes part in every flush; a lane without a group, or done, only flushes). The same
// steps as walk_group_into, so the same lists in the same order.
__device__ void walk_warp(const OctreeView<float>& tree, int g, WarpLists& lists)
{
    const bool has_group = g < tree.num_groups;
    with_opening(tree, has_group ? g : 0, [&](const Group<float>& group, const auto& open) {
        std::int32_t i = has_group ? 0 : tree.num_nodes;
        while (__any_sync(kFullMask, i < tree.num_nodes)) {
            if (i < tree.num_nodes) i = walk_step(group, i, open, lists);
            lists.nodes.flush_full();
            lists.leaves.flush_full();
        }
    });
    lists.nodes.flush_rest();
    lists.leaves.flush_rest();
}

__global__ void walk_bounded_kernel(OctreeView<float> tree, int node_capacity, int leaf_capacity,
                                    std::int32_t* node_list, std::int32_t* leaf_list, long long* node_count,
                                    long long* leaf_count, int* longest)
{
    __shared__ int stage[2][kWalkThreads][kStaged + 1];
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    const std::size_t slot = static_cast<std::size_t>(min(g, tree.num_groups - 1));
    WarpLists lists{{stage[0], node_list + slot * node_capacity, node_capacity},
                    {stage[1], leaf_list + slot * leaf_capacity, leaf_capacity}};
    walk_warp(tree, g, lists);
    if (g >= tree.num_groups) return;
    node_count[g] = min(lists.nodes.length, node_capacity); // what the evaluation may read
    leaf_count[g] = min(lists.leaves.length, leaf_capacity);
    atomicMax(&longest[0], lists.nodes.length);
    atomicMax(&longest[1], lists.leaves.length);
}

__global__ void walk_write_kernel(OctreeView<float> tree, const long long* node_offset, const long long* leaf_offset,
                                  std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch)
{
    __shared__ int stage[2][kWalkThreads][kStaged + 1];
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    const int slot = min(g, tree.num_groups - 1);
    // Each list has exactly pass 1's room; a longer one is only counted, and reported below.
    const int node_room = static_cast<int>(node_offset[slot + 1] - node_offset[slot]);
    const int leaf_room = static_cast<int>(leaf_offset[slot + 1] - leaf_offset[slot]);
    WarpLists lists{{stage[0], node_list + node_offset[slot], node_room},
                    {stage[1], leaf_list + leaf_offset[slot], leaf_room}};
    walk_warp(tree, g, lists);
    if (g >= tree.num_groups) return;
    // The lists were sized by pass 1: a pass that wrote another length is a bug, reported.
    if (lists.nodes.length != node_room || lists.leaves.length != leaf_room) atomicCAS(mismatch, 0, g + 1);
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
                       cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_count_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, node_count, leaf_count, longest);
    check_launch("walk_count_kernel", stream);
}

void launch_walk_bounded(const OctreeView<float>& tree, int node_capacity, int leaf_capacity, std::int32_t* node_list,
                         std::int32_t* leaf_list, long long* node_count, long long* leaf_count, int* longest,
                         cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_bounded_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, node_capacity, leaf_capacity, node_list, leaf_list, node_count, leaf_count, longest);
    check_launch("walk_bounded_kernel", stream);
}

void launch_walk_write(const OctreeView<float>& tree, const long long* node_offset, const long long* leaf_offset,
                       std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_write_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, node_offset, leaf_offset, node_list, leaf_list, mismatch);
    check_launch("walk_write_kernel", stream);
}

} // namespace grove::gpu
