// Launchers for the tree engine's walk kernels (tree_walk.cu). That file is compiled without
// floating-point contraction (--fmad=false) so that the device evaluates the opening radii and
// box distances with exactly the host's float arithmetic: the device's interaction lists are then
// identical to a host walk of the same float tree, which the [gpu] tests check.
#pragma once

#include <climits>
#include <cstdint>

#include <cuda_runtime.h>

#include "tree/tree_arrays.hpp"

namespace grove::gpu {

// r_open2[i] = opening_radius2(size[i], com_offset[i], theta) (tree/mac.hpp), or with softening by
// type the larger of that and softening_radius2[i] (null: none).
void launch_opening_radii(int num_nodes, const float* size, const float* com_offset, float theta,
                          const float* softening_radius2, float* r_open2, cudaStream_t stream);

// r_rel2[i] = relative_radius2(size[i], com_mass[i].w, alpha) (tree/mac.hpp).
void launch_relative_radii(int num_nodes, const float* size, const Vec4<float>* com_mass, float alpha, float* r_rel2,
                           cudaStream_t stream);

// out[i] = the packed node i (tree/tree_arrays.hpp's WalkNode) from the view's arrays, after its
// radii are computed (r_rel2 only when the view has it). A view whose walk_nodes points at out
// then walks on them.
void launch_pack_walk_nodes(const OctreeView<float>& tree, WalkNode<float>* out, cudaStream_t stream);

// The one-pass walk's lists (walk_bounded): group g's room of `capacity` entries at g * capacity;
// a list that outgrows its room goes to the pool after the rooms, from pool_base on, where it
// takes its place by atomicAdd on pool[0] (nodes) or pool[1] (leaves) while they stay under
// pool_capacity. count[g] holds the full lengths, place[g] where a list longer than its room lies.
// longest: the longest node and leaf lists by atomicMax, then kPoolFull where a list found no room
// in the pool (it is left out, its count 0: the caller walks again); totals: the entries of all
// lists, nodes and leaves, then those of the lists longer than their room (what the pool needed),
// added up.
constexpr int kPoolFull = 1;
struct BoundedLists {
    int node_capacity = 0, leaf_capacity = 0;
    std::int32_t* node_list = nullptr;
    std::int32_t* leaf_list = nullptr;
    long long *node_count = nullptr, *leaf_count = nullptr;
    long long *node_place = nullptr, *leaf_place = nullptr;
    long long node_pool_base = 0, leaf_pool_base = 0;
    long long node_pool_capacity = 0, leaf_pool_capacity = 0;
    unsigned long long* pool = nullptr;   // [2]
    int* longest = nullptr;               // [3]
    unsigned long long* totals = nullptr; // [4]
};

// Pass 1: list lengths of every group into node_count[g], leaf_count[g] (g < num_groups), and the
// longest of each kind into longest[0] (nodes) and longest[1] (leaves) by atomicMax (the caller
// zeroes them first).
void launch_walk_count(const OctreeView<float>& tree, long long* node_count, long long* leaf_count, int* longest,
                       cudaStream_t stream);

// Pass 2: lists written at the exclusive-scan offsets. A group whose written lengths differ from
// its pass-1 counts sets *mismatch to its index + 1 (the caller zeroes it first).
void launch_walk_write(const OctreeView<float>& tree, const long long* node_offset, const long long* leaf_offset,
                       std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch, cudaStream_t stream);

// One pass instead of both, when the caller knows room enough per group: see BoundedLists.
void launch_walk_bounded(const OctreeView<float>& tree, const BoundedLists& lists, cudaStream_t stream);

} // namespace grove::gpu
