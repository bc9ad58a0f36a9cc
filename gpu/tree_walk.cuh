// Launchers for the tree engine's walk kernels (tree_walk.cu). That file is compiled without
// floating-point contraction (--fmad=false) so that the device evaluates the opening radii and
// box distances with exactly the host's float arithmetic: the device's interaction lists are then
// identical to a host walk of the same float tree, which the [gpu] tests check.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tree/tree_arrays.hpp"

namespace grove::gpu {

void launch_opening_radii(int num_nodes, const float* size, const float* com_offset, float theta, float* r_open2,
                          cudaStream_t stream);

// r_rel2[i] = relative_radius2(size[i], com_mass[i].w, alpha) (tree/mac.hpp).
void launch_relative_radii(int num_nodes, const float* size, const Vec4<float>* com_mass, float alpha, float* r_rel2,
                           cudaStream_t stream);

// out[i] = the packed node i (tree/tree_arrays.hpp's WalkNode) from the view's arrays, after its
// radii are computed (r_rel2 only when the view has it). A view whose walk_nodes points at out
// then walks on them.
void launch_pack_walk_nodes(const OctreeView<float>& tree, WalkNode<float>* out, cudaStream_t stream);

// Pass 1: list lengths of every group into node_count[g], leaf_count[g] (g < num_groups), and the
// longest of each kind into longest[0] (nodes) and longest[1] (leaves) by atomicMax (the caller
// zeroes them first).
void launch_walk_count(const OctreeView<float>& tree, long long* node_count, long long* leaf_count, int* longest,
                       cudaStream_t stream);

// Pass 2: lists written at the exclusive-scan offsets. A group whose written lengths differ from
// its pass-1 counts sets *mismatch to its index + 1 (the caller zeroes it first).
void launch_walk_write(const OctreeView<float>& tree, const long long* node_offset, const long long* leaf_offset,
                       std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch, cudaStream_t stream);

// One pass instead of both, when the caller knows room enough per group (capacities multiples of 8):
// group g's lists at node_list + g * node_capacity and leaf_list + g * leaf_capacity, their lengths
// (cut at the capacity) in node_count[g] and leaf_count[g], the longest uncut ones in longest[] as
// for pass 1. A longest above its capacity means some list was cut: the caller walks again.
void launch_walk_bounded(const OctreeView<float>& tree, int node_capacity, int leaf_capacity, std::int32_t* node_list,
                         std::int32_t* leaf_list, long long* node_count, long long* leaf_count, int* longest,
                         cudaStream_t stream);

} // namespace grove::gpu
