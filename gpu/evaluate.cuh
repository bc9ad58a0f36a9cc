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

// Node lists (particle-quadrupole): writes sorted[] for every particle. potential = false leaves
// the w components 0 and saves the potential's instructions (gpu/kernel_costs.hpp counts them),
// for a leapfrog step's kick, which needs none.
void launch_evaluate_nodes(const OctreeView<float>& tree, const ListIndex& node_index, const std::int32_t* node_list,
                           const ListSoftening& softening, float4* sorted, int* next_group, bool potential,
                           cudaStream_t stream);

// Leaf lists (particle-particle): adds to sorted[]. A particle's own pair is excluded by index,
// as in every other engine, so the potential carries no self term for any eps.
void launch_evaluate_leaves(const OctreeView<float>& tree, const ListIndex& leaf_index, const std::int32_t* leaf_list,
                            const ListSoftening& softening, float4* sorted, int* next_group, bool potential,
                            cudaStream_t stream);

} // namespace grove::gpu
