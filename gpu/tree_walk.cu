// The walk kernels: one thread per group running the shared walk.hpp (count, then write), and the
// per-node opening radii. See tree_walk.cuh for why this file is compiled without contraction.
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

__global__ void walk_count_kernel(OctreeView<float> tree, long long* node_count, long long* leaf_count)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= tree.num_groups) return;
    const ListLengths n = walk_group<CountPass>(tree, tree.groups[g], nullptr, nullptr);
    node_count[g] = n.nodes;
    leaf_count[g] = n.leaves;
}

__global__ void walk_write_kernel(OctreeView<float> tree, const long long* node_offset, const long long* leaf_offset,
                                  std::int32_t* node_list, std::int32_t* leaf_list)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= tree.num_groups) return;
    walk_group<WritePass>(tree, tree.groups[g], node_list + node_offset[g], leaf_list + leaf_offset[g]);
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

void launch_walk_count(const OctreeView<float>& tree, long long* node_count, long long* leaf_count, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_count_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, node_count, leaf_count);
    check_launch("walk_count_kernel", stream);
}

void launch_walk_write(const OctreeView<float>& tree, const long long* node_offset, const long long* leaf_offset,
                       std::int32_t* node_list, std::int32_t* leaf_list, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_write_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, node_offset, leaf_offset, node_list, leaf_list);
    check_launch("walk_write_kernel", stream);
}

} // namespace grove::gpu
