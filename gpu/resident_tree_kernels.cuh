// The kernels of the tree a particle store on the device is evaluated with (tree_resident.cu):
// the predicted positions' key box and Morton keys, the refit, and the float tree
// the walk reads. Private to tree_resident.cu.
#pragma once

#include <cstdint>

#include <cub/device/device_reduce.cuh>

#include "core/step_update.hpp"
#include "gpu/cuda_check.cuh"

#include "gpu/tree_resident.cuh"
#include "tree/cut_cells.hpp"
#include "tree/float_tree.hpp"
#include "tree/mac.hpp"
#include "tree/morton.hpp"
#include "tree/node_moments.hpp"
#include "tree/softening_moments.hpp"

namespace grove {

namespace {

constexpr int kBlock = 256;

unsigned blocks_for(std::size_t n)
{
    return static_cast<unsigned>(gpu::ceil_div(std::max<std::size_t>(n, 1), kBlock));
}

// Events of a step (kStaged and kStagingFree order the structure's copies between the streams).
enum Event {
    kStart,
    kPredicted,
    kKeysMade,
    kSorted,
    kKeysCopied,
    kRefitted,
    kStaged,
    kStagingFree,
    kKickStart,
    kKickEnd
};

__device__ inline bool finite3(double x, double y, double z)
{
    return isfinite(x) && isfinite(y) && isfinite(z);
}

// The last evaluation's sums as the accelerations they stand for (G included), as store_forces
// converts them.
__device__ Vec4<double> acceleration_of(const float4& s, double G)
{
    return {G * s.x, G * s.y, G * s.z, G * s.w};
}

// A copy on a stream; nothing for an empty range.
template <class T> void copy_async(T* to, const T* from, std::size_t count, cudaMemcpyKind kind, cudaStream_t s)
{
    if (count > 0) CUDA_CHECK(cudaMemcpyAsync(to, from, count * sizeof(T), kind, s));
}

// The predictions' key frame as build_octree_into makes it, and whether every prediction is
// finite: CUB reduces the points' boxes (min and max are exact in any order), then one block finds
// the quartiles of the frame's sample and makes the frame.
struct BoxOfPoint {
    Prediction pred;
    __device__ PointBounds operator()(int k) const
    {
        const Vec4<double> x = pred(k);
        PointBounds b;
        b.lo[0] = b.hi[0] = x.x;
        b.lo[1] = b.hi[1] = x.y;
        b.lo[2] = b.hi[2] = x.z;
        b.finite = finite3(x.x, x.y, x.z);
        return b;
    }
};

struct MergeBounds {
    __host__ __device__ PointBounds operator()(const PointBounds& a, const PointBounds& b) const
    {
        PointBounds m;
        for (int d = 0; d < 3; ++d) {
            m.lo[d] = fmin(a.lo[d], b.lo[d]);
            m.hi[d] = fmax(a.hi[d], b.hi[d]);
        }
        m.finite = a.finite && b.finite;
        return m;
    }
};

// One block of kKeyFrameSample threads, a sample each: a sample's rank along an axis is the count
// of samples before it (ties by index), so each rank is one thread's, and the quartiles are the
// values the host's sort of the same sample puts at those ranks. With `use_given`, `given` is the
// frame instead (the domains' cube); the box still says whether every point was finite.
__global__ void __launch_bounds__(kKeyFrameSample)
    key_box_kernel(Prediction pred, int n, const PointBounds* bounds, KeyFrame given, bool use_given, KeyBox* box)
{
    if (use_given) {
        if (threadIdx.x == 0) {
            box->frame = given;
            box->finite = bounds->finite;
        }
        return;
    }
    __shared__ double values[kKeyFrameSample];
    __shared__ double quartiles[3][3]; // per axis: lower, median, upper
    const int k = static_cast<int>(threadIdx.x);
    const Vec4<double> x = n > 0 ? pred(static_cast<int>(key_frame_sample(k, n))) : Vec4<double>{0, 0, 0, 0};
    const double own[3] = {x.x, x.y, x.z};
    if (k < 9) quartiles[k / 3][k % 3] = 0;
    for (int d = 0; d < 3; ++d) {
        values[k] = own[d];
        __syncthreads();
        int rank = 0;
        for (int j = 0; j < kKeyFrameSample; ++j) {
            const double v = values[j];
            rank += v < own[d] || (v == own[d] && j < k);
        }
        if (rank == kLowerQuartileRank) quartiles[d][0] = own[d];
        if (rank == kMedianRank) quartiles[d][1] = own[d];
        if (rank == kUpperQuartileRank) quartiles[d][2] = own[d];
        __syncthreads();
    }
    if (k != 0) return;
    const PointBounds b = *bounds;
    const double median[3] = {quartiles[0][1], quartiles[1][1], quartiles[2][1]};
    double range = 0;
    for (int d = 0; d < 3; ++d) range = fmax(range, quartiles[d][2] - quartiles[d][0]);
    box->frame = make_key_frame(b.lo, b.hi, median, range);
    box->finite = b.finite;
}

__global__ void keys_kernel(int n, Prediction pred, const KeyBox* box, std::uint64_t* keys, std::uint32_t* index)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const KeyFrame frame = box->frame;
    const Vec4<double> x = pred(k);
    keys[k] = frame.key(x.x, x.y, x.z);
    index[k] = static_cast<std::uint32_t>(k);
}

// The particles' IDs and types, where the device holds them (a store on domains, whose particles
// come and go): gathered with the state.
struct IdentityGather {
    const std::uint64_t* id = nullptr;
    std::uint64_t* id_out = nullptr;
    const std::uint8_t* type = nullptr;
    std::uint8_t* type_out = nullptr;
};

// The first half of a gather into a new tree's order (particle order[k] of the old order becomes
// particle k): the velocities, kicked by h with the old order's forces where `kick_sums` is given,
// the callers' indices, and where given the bins, the forces themselves (block steps keep them)
// and the identities. The positions follow (drift_kernel) with the velocities in their new order.
__global__ void gather_kernel(int n, const std::uint32_t* order, double h, double G, const float4* kick_sums,
                              const Vec4<double>* vel, Vec4<double>* vel_out, const std::uint32_t* caller,
                              std::uint32_t* caller_out, const std::uint8_t* bins, std::uint8_t* bins_out,
                              const float4* sums, float4* sums_out, IdentityGather identity, int* flags)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const std::uint32_t j = order[k];
    Vec4<double> v = vel[j];
    if (kick_sums) {
        const Vec4<double> a = acceleration_of(kick_sums[j], G);
        v = {kicked(v.x, a.x, h), kicked(v.y, a.y, h), kicked(v.z, a.z, h), 0};
        if (!finite3(v.x, v.y, v.z)) atomicAdd(flags, 1);
    }
    vel_out[k] = v;
    caller_out[k] = caller[j];
    if (bins) bins_out[k] = bins[j];
    if (sums) sums_out[k] = sums[j];
    if (identity.id) {
        identity.id_out[k] = identity.id[j];
        identity.type_out[k] = identity.type[j];
    }
}

// Every particle drifts by dt with its velocity: particle order[k] of `body` becomes particle k of
// body_out (`vel` already in the new order: gather_kernel), or in place without an order.
__global__ void drift_kernel(int n, double dt, const std::uint32_t* order, const Vec4<double>* body,
                             const Vec4<double>* vel, Vec4<double>* body_out, int* flags)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const Vec4<double> b = body[order ? order[k] : static_cast<std::uint32_t>(k)], v = vel[k];
    const Vec4<double> x{drifted(b.x, v.x, dt), drifted(b.y, v.y, dt), drifted(b.z, v.z, dt), b.w};
    body_out[k] = x;
    if (!finite3(x.x, x.y, x.z)) atomicAdd(flags, 1);
}

// The refit's order, once per structure: each node's parent (the root's -1) and each node's count
// of children, from the `next` links (the count also as an int, to be scanned into first_child).
__global__ void parents_kernel(int m, const std::int32_t* next, const std::uint8_t* is_leaf, std::int32_t* parent,
                               std::uint8_t* child_count, std::int32_t* first_child)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    if (i == 0) parent[0] = -1;
    int count = 0;
    if (!is_leaf[i])
        for (std::int32_t c = i + 1; c < next[i]; c = next[c], ++count) parent[c] = i;
    child_count[i] = static_cast<std::uint8_t>(count);
    first_child[i] = count;
}

// Then, with first_child scanned, each node's children listed in order.
__global__ void child_list_kernel(int m, const std::int32_t* next, const std::uint8_t* is_leaf,
                                  const std::int32_t* first_child, std::int32_t* child_list)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m || is_leaf[i]) return;
    std::int32_t* listed = child_list + first_child[i];
    for (std::int32_t c = i + 1; c < next[i]; c = next[c]) *listed++ = c;
}

// A node's level byte: its level (at most kMaxTreeLevel) in the low bits, and a flag for a cell
// of a domain's tree that the domains' cut passes through, whose size the refit enlarges
// (tree/cut_cells.hpp).
constexpr std::uint8_t kLevelBits = 0x7f, kCutCellLevelFlag = 0x80;
static_assert(kMaxTreeLevel <= kLevelBits, "a level fits below the cut flag");

// The refit in one launch: a thread per leaf finishes it, and the thread whose node is the last of
// its parent's children to arrive goes on to finish the parent, up to the root. A launch per level
// of the tree waited, at each level, for its nodes' chains of dependent loads and for the launch
// itself; here a node's chain starts as soon as its children are done. The fences order each
// node's moments before the count that releases its parent, and that count before the parent
// reads them. finish_node reads the children in their fixed order, so the result does not depend
// on which child arrived last.
__global__ void refit_kernel(int m, MomentArrays t, const std::uint8_t* level, double root_side,
                             const std::int32_t* parent, const std::uint8_t* child_count, int* arrived)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m || !t.is_leaf[i]) return;
    for (;;) {
        const std::uint8_t l = level[i];
        t.cell_centre[i] = Vec4<double>{0, 0, 0, ldexp(root_side, -static_cast<int>(l & kLevelBits))};
        finish_node(t, i);
        if (l & kCutCellLevelFlag) t.size[i] *= kCutCellSizeFactor; // no parent reads its children's sizes
        const std::int32_t p = parent[i];
        if (p < 0) return;
        __threadfence();
        if (atomicAdd(arrived + p, 1) + 1 < child_count[p]) return;
        __threadfence();
        i = p;
    }
}

// The float tree's origin: the root's centre of mass (com[0]).
__global__ void pack_particles_kernel(int n, const Vec4<double>* body, const Vec4<double>* com, Vec4<float>* out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) out[k] = float_origin(com[0]).shifted(body[k]);
}

__global__ void pack_nodes_kernel(int m, const Vec4<double>* com, const Quadrupole<double>* quad, const double* size,
                                  const double* offset, TreeArrays<float, Pointer> out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    pack_float_node(float_origin(com[0]), com[i], quad[i], size[i], offset[i], out.com_mass[i], out.quad[i],
                    out.size[i], out.com_offset[i]);
}

// The walk's groups: the particles of ranges[k] (the tree's groups, or a block tick's pieces).
__global__ void pack_groups_kernel(int g, const ParticleRange* ranges, TreeArrays<float, Pointer> out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < g) out.groups[k] = float_group(ranges[k], out.particles);
}

// The relative criterion's scale (tree/mac.hpp) of the particles i of r from the smallest |a| / G
// of the sums sum_of(i) points to (null: particle i does not count).
template <class SumOf> __device__ float range_mac_scale(ParticleRange r, SumOf sum_of)
{
    double smallest = INFINITY;
    for (int i = r.begin; i < r.end && smallest > kSmallestAcceleration; ++i) {
        const float4* s = sum_of(i);
        if (!s) continue;
        const double x = s->x, y = s->y, z = s->z;
        smallest = smaller_acceleration(smallest, ::sqrt(x * x + y * y + z * z));
    }
    return static_cast<float>(group_mac_scale(smallest));
}

// The relative criterion's group scales from the last step's sums (|a| / G), which are still in
// the last tree's order: particle k of this tree's group was particle order[k] there (without an
// order, the sums are this tree's).
__global__ void group_scales_kernel(int g, const ParticleRange* ranges, const std::uint32_t* order,
                                    const float4* last_sums, float* mac_scale)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < g) mac_scale[k] = range_mac_scale(ranges[k], [&](int i) { return last_sums + (order ? order[i] : i); });
}

// Softening by type: particle k of the tree's order has h = loaded[caller[k]].
__global__ void particle_half_kernel(int n, const float* loaded, const std::uint32_t* caller, float* half)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) half[k] = loaded[caller[k]];
}

// m h^power of particle k of the tree's order, read by the prefix sums (no array of its own).
struct MassHalfPower {
    const float* half;
    const Vec4<double>* body;
    int power;
    __device__ double operator()(int k) const
    {
        const double h = half[k];
        return body[k].w * (power == 1 ? h : h * h);
    }
};

// Each node's mean h and opening radius for its spread (tree/softening_moments.hpp), from the
// inclusive prefix sums of m h and m h^2 over the tree's order.
__global__ void node_half_kernel(int m, const ParticleRange* range, const Vec4<double>* com_mass, const double* sums1,
                                 const double* sums2, float* node_half, float* node_radius2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const ParticleRange r = range[i];
    const auto range_sum = [&](const double* s) { return s[r.end - 1] - (r.begin > 0 ? s[r.begin - 1] : 0.0); };
    const NodeSoftening s =
        r.end > r.begin ? node_softening(com_mass[i].w, range_sum(sums1), range_sum(sums2)) : NodeSoftening{0, 0};
    node_half[i] = static_cast<float>(s.half);
    node_radius2[i] = static_cast<float>(s.radius2);
}

} // namespace

} // namespace grove
