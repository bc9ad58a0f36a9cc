// The tree engine's list evaluation: a warp takes one group (in chunks of up to 128 targets) with
// the lane layout of tree/lane_layout.hpp: targets in registers, each tile of 32 sources loaded
// by the warp into its shared-memory slice, each replica of lanes taking every replicas-th source,
// partial sums added with shuffles at the end. Node lists use the quadrupole formula, leaf lists
// the particle-pair formula, both from tree/gravity.hpp. Leaf lists are streamed 32 leaves at a
// time: a warp scan of their sizes and a population count of the leaves starting in each tile
// map each lane of a tile to one source particle, so small leaves still fill whole tiles.
//
// A lane sums a few tiles (nodes) or one batch of leaves in float and then adds those sums into
// double accumulators in shared memory (WideSums), so a list of thousands of entries costs the
// float rounding of a stretch of it, not of the whole list: at theta = 0.1 a single float sum made errors of 1e-4 where
// double sums made 5e-6. Shared memory rather than registers, so the kernels keep their register count.
#include "gpu/evaluate.cuh"

#include <algorithm>

#include "gpu/cuda_check.cuh"
#include "tree/gravity.hpp"
#include "tree/lane_layout.hpp"

namespace grove::gpu {

namespace {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpsPerBlock = 4;
// The leaf kernel asks the compiler for 7 resident blocks per SM (72 registers, a few bytes of
// spills). With four targets per lane at most, 8 blocks (64 registers) had been 8-10 % faster
// than 7 (bench/results/group-scheduling-h100.md); with five, 8 blocks spilled 72-76 bytes and 7
// are 3-7 % faster (bench/results/leaf-lists-breakdown-h100.md, section 11). The node kernel
// keeps the registers it needs (0: no bound; 80, 6 blocks): asked for 7 it was 3-6 % slower.
constexpr int kLeafBlocksPerSm = 7;

// A tile of cells, each with its terms made once for all targets (tree/gravity.hpp).
struct NodeTile {
    Vec4<float> com[kWarpLanes];
    CellTerms<float> terms[kWarpLanes];
};

struct LeafTile {
    Vec4<float> source[kWarpLanes];
    int index[kWarpLanes];  // the sources' particle indices
    int offset[kWarpLanes]; // leaf l's source u is particle offset[l] + u
};

// The bitwise or of v over the warp.
__device__ inline unsigned warp_or(unsigned v)
{
#if __CUDA_ARCH__ >= 800
    return __reduce_or_sync(kFullMask, v);
#else
    for (int d = 1; d < kWarpLanes; d <<= 1) v |= __shfl_xor_sync(kFullMask, v, d);
    return v;
#endif
}

// Node tiles summed in float between two flushes into double: at most 128 terms per lane in
// float, and a quarter of the shared-memory traffic of a flush per tile.
constexpr int kTilesPerFlush = 4;

// One warp's double accumulators: [target k of the lane][ax, ay, az, pot][lane]. Each lane owns
// its column, so no lane reads another's and no synchronisation is needed.
struct WideSums {
    double v[kMaxPerLane][4][kWarpLanes];
};

// What this lane does in a layout: which replica of the lanes it belongs to and which target
// slot it holds; lanes beyond the replicas sit idle.
struct WarpRole {
    int lane, replica, slot;
    bool active;
    __device__ explicit WarpRole(const LaneLayout& layout)
        : lane(static_cast<int>(threadIdx.x) & (kWarpLanes - 1)), replica(lane / layout.lanes),
          slot(lane - replica * layout.lanes), active(replica < layout.replicas)
    {
    }
};

// The lane's targets: slot + lanes * k, clamped into the chunk (clamped copies are computed and
// dropped, which costs nothing extra on a SIMT machine). Target k's particle index (Morton order)
// is self + lanes * k, with self = first + slot, for the leaf kernel's self test; it is not kept
// per target, for the registers.
template <int K> struct Targets {
    float x[K], y[K], z[K];
    Accum<float> a[K];

    __device__ Targets(const Vec4<float>* particles, int first, const LaneLayout& layout, int slot, WideSums& wide,
                       int lane)
    {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            for (int c = 0; c < 4; ++c) wide.v[k][c][lane] = 0.0;
            const int idx = min(slot + layout.lanes * k, layout.targets - 1);
            const Vec4<float> p = particles[first + idx];
            x[k] = p.x;
            y[k] = p.y;
            z[k] = p.z;
        }
    }

    // Moves the float sums of the tile just done into the lane's double accumulators.
    __device__ void flush(WideSums& wide, int lane)
    {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            wide.v[k][0][lane] += a[k].ax;
            wide.v[k][1][lane] += a[k].ay;
            wide.v[k][2][lane] += a[k].az;
            wide.v[k][3][lane] += a[k].pot;
            a[k] = Accum<float>{};
        }
    }

    // Adds the replicas' partial sums into replica 0 and writes (or adds) its targets' results.
    __device__ void finish(const LaneLayout& layout, int replica, int slot, float4* out, bool add, WideSums& wide,
                           int lane)
    {
        flush(wide, lane);
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const Accum<float> lane_sum{static_cast<float>(wide.v[k][0][lane]), static_cast<float>(wide.v[k][1][lane]),
                                        static_cast<float>(wide.v[k][2][lane]), static_cast<float>(wide.v[k][3][lane])};
            a[k] = lane_sum;
            Accum<float> sum = a[k];
            for (int r = 1; r < layout.replicas; ++r) {
                const int delta = r * layout.lanes;
                sum.ax += __shfl_down_sync(kFullMask, a[k].ax, delta);
                sum.ay += __shfl_down_sync(kFullMask, a[k].ay, delta);
                sum.az += __shfl_down_sync(kFullMask, a[k].az, delta);
                sum.pot += __shfl_down_sync(kFullMask, a[k].pot, delta);
            }
            const int idx = slot + layout.lanes * k;
            if (replica == 0 && idx < layout.targets) {
                float4 v = make_float4(sum.ax, sum.ay, sum.az, sum.pot);
                if (add) {
                    const float4 old = out[idx];
                    v.x += old.x;
                    v.y += old.y;
                    v.z += old.z;
                    v.w += old.w;
                }
                out[idx] = v;
            }
        }
    }
};

template <int K, bool kPot>
__device__ void node_chunk(const OctreeView<float>& tree, int first, const LaneLayout& layout, const std::int32_t* list,
                           long long length, NodeTile& tile, WideSums& wide, float eps2, float4* acc)
{
    const WarpRole role(layout);
    const int lane = role.lane, replica = role.replica, slot = role.slot;
    const bool active = role.active;
    Targets<K> t(tree.particles, first, layout, slot, wide, lane);
    int tiles = 0;
    for (long long base = 0; base < length; base += kWarpLanes) {
        const int count = static_cast<int>(min(static_cast<long long>(kWarpLanes), length - base));
        if (lane < count) {
            const std::int32_t node = list[base + lane];
            tile.com[lane] = tree.com_mass[node];
            tile.terms[lane] = cell_terms(tree.quad[node], eps2);
        }
        __syncwarp();
        if (active)
            for (int s = replica; s < count; s += layout.replicas) {
                const Vec4<float> c = tile.com[s];
                const CellTerms<float> q = tile.terms[s];
#pragma unroll
                for (int k = 0; k < K; ++k)
                    t.a[k] = m2p_terms<false, kPot>(t.a[k], c.x - t.x[k], c.y - t.y[k], c.z - t.z[k], c.w, q, eps2);
            }
        if (++tiles % kTilesPerFlush == 0) t.flush(wide, lane);
        __syncwarp();
    }
    t.finish(layout, replica, slot, acc + first, false, wide, lane);
}

// The lane's replica of one staged tile of leaf sources against its targets. kSelf: the tile
// may hold a target itself, whose pair is skipped by index (its mass counts as 0); target k's
// index is self + lanes * k (Targets). kGuard: eps is 0, so coincident particles (and the self
// pair) need the r^2 > 0 test.
template <int K, bool kSelf, bool kGuard, bool kPot>
__device__ void leaf_tile(Targets<K>& t, const LeafTile& tile, int replica, int replicas, int count, int self,
                          int lanes, float eps2)
{
    for (int s = replica; s < count; s += replicas) {
        const Vec4<float> p = tile.source[s];
        const int from_self = kSelf ? tile.index[s] - self : -1;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const float m = kSelf && from_self == lanes * k ? 0.f : p.w;
            t.a[k] = p2p<kGuard, kPot>(t.a[k], p.x - t.x[k], p.y - t.y[k], p.z - t.z[k], m, eps2);
        }
    }
}

template <int K, bool kPot>
__device__ void leaf_chunk(const OctreeView<float>& tree, int first, const LaneLayout& layout, const std::int32_t* list,
                           long long length, LeafTile& tile, WideSums& wide, float eps2, float4* acc)
{
    const WarpRole role(layout);
    const int lane = role.lane, replica = role.replica, slot = role.slot;
    const bool active = role.active;
    Targets<K> t(tree.particles, first, layout, slot, wide, lane);
    for (long long leaf_base = 0; leaf_base < length; leaf_base += kWarpLanes) {
        const int leaves = static_cast<int>(min(static_cast<long long>(kWarpLanes), length - leaf_base));
        int begin = 0, size = 0;
        if (lane < leaves) {
            const ParticleRange r = tree.range[list[leaf_base + lane]];
            begin = r.begin;
            size = r.end - r.begin;
        }
        int inclusive = size;
#pragma unroll
        for (int d = 1; d < kWarpLanes; d <<= 1) {
            const int v = __shfl_up_sync(kFullMask, inclusive, d);
            if (lane >= d) inclusive += v;
        }
        const int total = __shfl_sync(kFullMask, inclusive, kWarpLanes - 1);
        const int first_source = inclusive - size; // of leaf `lane` in the batch
        tile.offset[lane] = begin - first_source;
        __syncwarp();
        for (int base = 0; base < total; base += kWarpLanes) {
            const int u = base + lane;
            // Source u belongs to the last leaf that starts at or before it (leaves are never
            // empty): the leaves started before the tile plus those starting in it up to u.
            const int start = first_source - base;
            const unsigned starts = warp_or(lane < leaves && start >= 0 && start < kWarpLanes ? 1u << start : 0u);
            const int before = __popc(__ballot_sync(kFullMask, lane < leaves && start < 0));
            const int leaf = before + __popc(starts & ((2u << lane) - 1u)) - 1;
            if (u < total) {
                const int j = tile.offset[leaf] + u;
                tile.index[lane] = j;
                tile.source[lane] = tree.particles[j];
            }
            __syncwarp();
            const int count = min(kWarpLanes, total - base);
            // Only a tile holding some of the chunk's own particles pays for the self test.
            const bool own = __any_sync(kFullMask, u < total && tile.index[lane] >= first &&
                                                       tile.index[lane] < first + layout.targets);
            if (active) {
                if (eps2 > 0.f) {
                    if (own)
                        leaf_tile<K, true, false, kPot>(t, tile, replica, layout.replicas, count, first + slot,
                                                        layout.lanes, eps2);
                    else
                        leaf_tile<K, false, false, kPot>(t, tile, replica, layout.replicas, count, first + slot,
                                                         layout.lanes, eps2);
                } else {
                    if (own)
                        leaf_tile<K, true, true, kPot>(t, tile, replica, layout.replicas, count, first + slot,
                                                       layout.lanes, eps2);
                    else
                        leaf_tile<K, false, true, kPot>(t, tile, replica, layout.replicas, count, first + slot,
                                                        layout.lanes, eps2);
                }
            }
            __syncwarp();
        }
        // Once per batch of 32 leaves (at most 32 nleaf sources): a flush per tile slowed the
        // leaf kernel by 8 % (bench/results/opening-criteria-h100.md).
        t.flush(wide, lane);
    }
    t.finish(layout, replica, slot, acc + first, true, wide, lane);
}

// Group g's lists, in chunks of up to kMaxTargetsPerWarp targets, by one warp.
template <bool kNodes, bool kPot>
__device__ void evaluate_group(const OctreeView<float>& tree, int g, const ListIndex& index, const std::int32_t* list,
                               float eps2, float4* acc, NodeTile& node_tile, LeafTile& leaf_tile, WideSums& wide)
{
    const ParticleRange range = tree.groups[g].range;
    const long long begin = index.begin(g), length = index.length(g);
    for (int first = range.begin; first < range.end; first += kMaxTargetsPerWarp) {
        const LaneLayout layout = choose_lane_layout(min(kMaxTargetsPerWarp, range.end - first));
        if constexpr (kNodes) {
            if (layout.per_lane == 1)
                node_chunk<1, kPot>(tree, first, layout, list + begin, length, node_tile, wide, eps2, acc);
            else if (layout.per_lane == 2)
                node_chunk<2, kPot>(tree, first, layout, list + begin, length, node_tile, wide, eps2, acc);
            else if (layout.per_lane == 3)
                node_chunk<3, kPot>(tree, first, layout, list + begin, length, node_tile, wide, eps2, acc);
            else if (layout.per_lane == 4)
                node_chunk<4, kPot>(tree, first, layout, list + begin, length, node_tile, wide, eps2, acc);
            else
                node_chunk<5, kPot>(tree, first, layout, list + begin, length, node_tile, wide, eps2, acc);
        } else {
            if (layout.per_lane == 1)
                leaf_chunk<1, kPot>(tree, first, layout, list + begin, length, leaf_tile, wide, eps2, acc);
            else if (layout.per_lane == 2)
                leaf_chunk<2, kPot>(tree, first, layout, list + begin, length, leaf_tile, wide, eps2, acc);
            else if (layout.per_lane == 3)
                leaf_chunk<3, kPot>(tree, first, layout, list + begin, length, leaf_tile, wide, eps2, acc);
            else if (layout.per_lane == 4)
                leaf_chunk<4, kPot>(tree, first, layout, list + begin, length, leaf_tile, wide, eps2, acc);
            else
                leaf_chunk<5, kPot>(tree, first, layout, list + begin, length, leaf_tile, wide, eps2, acc);
        }
    }
}

// One warp per group at a time; the chunk function is node_chunk or leaf_chunk. A warp that
// finishes its group takes the next one from *next_group: with one fixed group per warp a block
// stayed resident until its longest list was done, and the SMs ran at 32 % occupancy where their
// registers allow 44 % (ncu, galaxy 2^20). A group's sums do not depend on which warp takes it.
template <bool kNodes, bool kPot>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarpLanes, kNodes ? 0 : kLeafBlocksPerSm)
    evaluate_kernel(OctreeView<float> tree, ListIndex index, const std::int32_t* list, float eps2, float4* acc,
                    int* next_group)
{
    __shared__ NodeTile node_tiles[kNodes ? kWarpsPerBlock : 1];
    __shared__ LeafTile leaf_tiles[kNodes ? 1 : kWarpsPerBlock];
    __shared__ WideSums wide_sums[kWarpsPerBlock];
    WideSums& wide = wide_sums[threadIdx.x / kWarpLanes];
    const int warp = threadIdx.x / kWarpLanes;
    for (;;) {
        int g = 0;
        if ((threadIdx.x & (kWarpLanes - 1)) == 0) g = atomicAdd(next_group, 1);
        g = __shfl_sync(kFullMask, g, 0);
        if (g >= tree.num_groups) return; // the whole warp leaves together
        if (index.order) g = index.order[g];
        evaluate_group<kNodes, kPot>(tree, g, index, list, eps2, acc, node_tiles[kNodes ? warp : 0],
                                     leaf_tiles[kNodes ? 0 : warp], wide);
    }
}

// Blocks that fill the device once: the warps then take groups until none is left. The device's
// capacity is asked once per device and thread, not at every launch.
template <bool kNodes, bool kPot> unsigned resident_blocks(std::int32_t num_groups)
{
    thread_local int cached_device = -1, capacity = 1;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    if (device != cached_device) {
        int sms = 0, per_sm = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, evaluate_kernel<kNodes, kPot>,
                                                                 kWarpsPerBlock * kWarpLanes, 0));
        capacity = std::max(sms * per_sm, 1);
        cached_device = device;
    }
    const std::size_t wanted = ceil_div(static_cast<std::size_t>(num_groups), kWarpsPerBlock);
    return static_cast<unsigned>(std::min<std::size_t>(wanted, static_cast<std::size_t>(capacity)));
}

template <bool kNodes, bool kPot>
void launch_evaluate(const OctreeView<float>& tree, const ListIndex& index, const std::int32_t* list, float eps2,
                     float4* sorted, int* next_group, cudaStream_t stream)
{
    evaluate_kernel<kNodes, kPot>
        <<<resident_blocks<kNodes, kPot>(tree.num_groups), kWarpsPerBlock * kWarpLanes, 0, stream>>>(
            tree, index, list, eps2, sorted, next_group);
    check_launch(kNodes ? "evaluate_kernel<nodes>" : "evaluate_kernel<leaves>", stream);
}

} // namespace

void launch_evaluate_nodes(const OctreeView<float>& tree, const ListIndex& node_index, const std::int32_t* node_list,
                           float eps2, float4* sorted, int* next_group, bool potential, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    if (potential)
        launch_evaluate<true, true>(tree, node_index, node_list, eps2, sorted, next_group, stream);
    else
        launch_evaluate<true, false>(tree, node_index, node_list, eps2, sorted, next_group, stream);
}

void launch_evaluate_leaves(const OctreeView<float>& tree, const ListIndex& leaf_index, const std::int32_t* leaf_list,
                            float eps2, float4* sorted, int* next_group, bool potential, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    if (potential)
        launch_evaluate<false, true>(tree, leaf_index, leaf_list, eps2, sorted, next_group, stream);
    else
        launch_evaluate<false, false>(tree, leaf_index, leaf_list, eps2, sorted, next_group, stream);
}

} // namespace grove::gpu
