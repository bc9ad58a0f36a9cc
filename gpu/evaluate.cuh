// Launchers for the tree engine's list evaluation (evaluate.cu). They allocate nothing: the
// caller owns the lists, their offsets and the output. Sums go to sorted[k] for particle k in
// Morton order, without G (the engine's epilogue applies G and the caller's order). next_group:
// a device counter, 0 at launch, from which the warps take their groups.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

#include "tree/tree_arrays.hpp"

namespace grove::gpu {

// Where group g's list lies: offset[g] .. offset[g + 1] after the two-pass walk (lists packed),
// or count[g] entries from g * stride after the one-pass walk (launch_walk_bounded), from place[g]
// for a list longer than the stride. order: the groups in the order the warps take them
// (gpu/group_order.cuh), or null for Morton order.
struct ListIndex {
    const long long* offset = nullptr;
    const long long* count = nullptr;
    long long stride = 0;
    const std::int32_t* order = nullptr;
    const long long* place = nullptr;
    __host__ __device__ long long begin(int g) const
    {
        return stride == 0 ? offset[g] : count[g] > stride ? place[g] : g * stride;
    }
    __host__ __device__ long long length(int g) const { return stride > 0 ? count[g] : offset[g + 1] - offset[g]; }
};

// The softening the list kernels apply: one eps2, or by type (core/softening.hpp) each pair's
// h_target + h_source, from the sorted particles' h and the nodes' mass-weighted means of it
// (tree/softening_moments.hpp). The guard (r^2 > 0 test) is needed where some pair may be
// unsoftened: eps2 = 0, or by type a type of length 0.
struct ListSoftening {
    float eps2 = 0;
    const float* particle_half = nullptr; // [N] Morton order; null for one softening
    const float* node_half = nullptr;     // [M]
    bool guard = false;
    bool by_type() const { return particle_half != nullptr; }
};

// Few groups leave most of the device idle while each warp works through one group's long lists
// (a block tick's pieces, from the densest, most often due groups): their lists may then be cut
// into `segments` equal stretches, each a warp's item of its own. Stretch s of group g sums into
// partial[(g * segments + s) * kSplitTargets + t] for the group's target t (groups of at most
// kSplitTargets targets), node and leaf lists into partials of their own, and launch_sum_split
// adds them up in a fixed order: no atomics, so the sums do not depend on which warp took which
// stretch, and a run repeats to the bit. One segment: the lists are evaluated whole.
struct ListSplit {
    int segments = 1;
    float4* partial = nullptr;
};
constexpr int kSplitTargets = 32;

// The segments that give the list kernels about two items for each warp the device holds at
// once, for num_groups groups (1 where they fill it without; at most kMaxSplitSegments).
constexpr int kMaxSplitSegments = 16;
int split_segments(int num_groups);

// sorted[k] = the node stretches' sums + the leaf stretches' sums, each in stretch order, for
// every target of the groups (both splits of the same segments).
void launch_sum_split(const OctreeView<float>& tree, const ListSplit& nodes, const ListSplit& leaves, float4* sorted,
                      cudaStream_t stream);

// Node lists (particle-quadrupole): writes sorted[] for every particle. potential = false leaves
// the w components 0 and saves the potential's instructions (gpu/kernel_costs.hpp counts them),
// for a leapfrog step's kick, which needs none.
// With a split (ListSplit) the sums go to its partials instead. Both kernels add the pairs they
// summed (targets times cells, targets times the leaves' particles) to *pairs.
void launch_evaluate_nodes(const OctreeView<float>& tree, const ListIndex& node_index, const std::int32_t* node_list,
                           const ListSoftening& softening, float4* sorted, int* next_group, unsigned long long* pairs,
                           bool potential, cudaStream_t stream, const ListSplit& split = {});

// Leaf lists (particle-particle): adds to sorted[]. A particle's own pair is excluded by index,
// as in every other engine, so the potential carries no self term for any eps.
void launch_evaluate_leaves(const OctreeView<float>& tree, const ListIndex& leaf_index, const std::int32_t* leaf_list,
                            const ListSoftening& softening, float4* sorted, int* next_group, unsigned long long* pairs,
                            bool potential, cudaStream_t stream, const ListSplit& split = {});

} // namespace grove::gpu
