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

__global__ void walk_bounded_kernel(OctreeView<float> tree, int node_capacity, int leaf_capacity,
                                    std::int32_t* node_list, std::int32_t* leaf_list, long long* node_count,
                                    long long* leaf_count, int* longest)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= tree.num_groups) return;
    ListPass<BoundedList> pass{{node_list + static_cast<std::size_t>(g) * node_capacity, node_capacity},
                               {leaf_list + static_cast<std::size_t>(g) * leaf_capacity, leaf_capacity}};
    walk_group_into(tree, g, pass);
    pass.nodes.flush();
    pass.leaves.flush();
    node_count[g] = min(pass.nodes.length, node_capacity); // what the evaluation may read
    leaf_count[g] = min(pass.leaves.length, leaf_capacity);
    atomicMax(&longest[0], pass.nodes.length);
    atomicMax(&longest[1], pass.leaves.length);
}

__global__ void walk_write_kernel(OctreeView<float> tree, const long long* node_offset, const long long* leaf_offset,
                                  std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= tree.num_groups) return;
    ListPass<StagedList> pass{{node_list + node_offset[g]}, {leaf_list + leaf_offset[g]}};
    walk_group_into(tree, g, pass);
    pass.nodes.flush();
    pass.leaves.flush();
    // The lists were sized by pass 1: a pass that wrote another length is a bug, reported.
    if (pass.nodes.written != node_offset[g + 1] - node_offset[g] ||
        pass.leaves.written != leaf_offset[g + 1] - leaf_offset[g])
        atomicCAS(mismatch, 0, g + 1);
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
