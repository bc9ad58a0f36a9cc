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
// The leaf kernel asks the compiler for 6 resident blocks per SM (80 registers): more blocks
// force spills into its loops, fewer leave the SM too few warps to hide the tiles' loads. The node
// kernel keeps the registers it needs (no bound): bounded, it spills. The sweeps that chose these
// are in bench/results/tree-kernels.md.
constexpr int kLeafBlocksPerSm = 6;

// A leaf tile holds up to 32 sources in slots 0-31, and replica r takes slots r, r + replicas, ...
// while they lie below the tile's count: every replica runs ceil(count / replicas) steps, the
// same loop for the whole warp (no lane leaves it early). A replica's last step may read past the
// sources: slots 32 and up, and those past the end of a batch, hold a massless source far away,
// whose pair adds exactly zero for every target (and never 0/0: its distance is never zero).
// Lanes outside the replicas read replica 0's sources and their sums are never read.
constexpr int kLeafSlots = 2 * kWarpLanes;
// The farthest slot a lane's loop reaches, past its last step: below 2 * 32 for every layout, so
// the loop's pointers stay inside the tile's arrays.
HOST_DEVICE constexpr int leaf_slots_reached()
{
    int most = 0;
    for (int lanes = 1; lanes <= kWarpLanes; ++lanes) {
        const int replicas = kWarpLanes / lanes;
        most = std::max(most, replicas - 1 + replicas * ((kWarpLanes + replicas - 1) / replicas));
    }
    return most;
}
static_assert(leaf_slots_reached() <= kLeafSlots, "a lane's loop must stay inside the tile");
constexpr float kFarAway = 1e19f; // three of its squares still fit in a float

// A tile of cells, each with its terms made once for all targets (tree/gravity.hpp).
struct NodeTile {
    Vec4<float> com[kWarpLanes];
    CellTerms<float> terms[kWarpLanes];
};

struct LeafTile {
    Vec4<float> source[kLeafSlots];
    int index[kLeafSlots];  // the sources' particle indices (-1 for padding)
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

// The lane's targets' h (softening by type), clamped into the chunk as Targets does.
template <int K>
__device__ void target_halves(const ListSoftening& soft, int first, const LaneLayout& layout, int slot, float* h)
{
#pragma unroll
    for (int k = 0; k < K; ++k) h[k] = soft.particle_half[first + min(slot + layout.lanes * k, layout.targets - 1)];
}

// kByType: the cell's terms carry its own h (eps2_trace = h_cell s, and s in `unused`), and each
// target adds its h: eps^2 s = (h_i + h_cell) s, as m2p with eps2 = h_i + h_cell makes it.
template <int K, bool kPot, bool kByType>
__device__ void node_chunk(const OctreeView<float>& tree, int first, const LaneLayout& layout, const std::int32_t* list,
                           long long length, NodeTile& tile, float* half_tile, WideSums& wide,
                           const ListSoftening& soft, float4* out)
{
    const WarpRole role(layout);
    const int lane = role.lane, replica = role.replica, slot = role.slot;
    const bool active = role.active;
    Targets<K> t(tree.particles, first, layout, slot, wide, lane);
    float hi[K];
    if constexpr (kByType) target_halves<K>(soft, first, layout, slot, hi);
    int tiles = 0;
    // The next tile's cells are read from the list while this one is evaluated: a tile then waits
    // for one load (the cells' data), not for two in a row.
    std::int32_t next = lane < length ? list[lane] : 0;
    for (long long base = 0; base < length; base += kWarpLanes) {
        const int count = static_cast<int>(min(static_cast<long long>(kWarpLanes), length - base));
        const std::int32_t node = next;
        if (base + kWarpLanes + lane < length) next = list[base + kWarpLanes + lane];
        if (lane < count) {
            tile.com[lane] = tree.com_mass[node];
            if constexpr (kByType) {
                const Quadrupole<float> q = tree.quad[node];
                const float h = soft.node_half[node];
                CellTerms<float> terms = cell_terms(q, h);
                terms.unused = q.trace;
                tile.terms[lane] = terms;
                half_tile[lane] = h;
            } else {
                tile.terms[lane] = cell_terms(tree.quad[node], soft.eps2);
            }
        }
        __syncwarp();
        if (active)
            for (int s = replica; s < count; s += layout.replicas) {
                const Vec4<float> c = tile.com[s];
                const CellTerms<float> q = tile.terms[s];
                if constexpr (kByType) {
                    const float h = half_tile[s];
#pragma unroll
                    for (int k = 0; k < K; ++k) {
                        CellTerms<float> qk = q;
                        qk.eps2_trace = fmaf(hi[k], q.unused, q.eps2_trace);
                        t.a[k] = m2p_terms<false, kPot>(t.a[k], c.x - t.x[k], c.y - t.y[k], c.z - t.z[k], c.w, qk,
                                                        hi[k] + h);
                    }
                } else {
#pragma unroll
                    for (int k = 0; k < K; ++k)
                        t.a[k] =
                            m2p_terms<false, kPot>(t.a[k], c.x - t.x[k], c.y - t.y[k], c.z - t.z[k], c.w, q, soft.eps2);
                }
            }
        if (++tiles % kTilesPerFlush == 0) t.flush(wide, lane);
        __syncwarp();
    }
    t.finish(layout, replica, slot, out, false, wide, lane);
}

// One staged tile of `count` leaf sources against the lane's targets: the lane's replica takes
// the slots from `first` on, `stride` apart, below first + count (kLeafSlots). kSelf: the tile
// may hold a target itself, whose pair is skipped by index (its mass counts as 0); target k's
// index is self + lanes * k (Targets). kGuard: eps is 0, so coincident particles (and the self
// pair) need the r^2 > 0 test. kByType: the pair's eps^2 is hi[k] plus the source's h, staged in
// half_tile beside the tile's sources.
template <int K, bool kSelf, bool kGuard, bool kPot, bool kByType>
__device__ void leaf_tile(Targets<K>& t, const LeafTile& tile, const float* half_tile, const float* hi, int first,
                          int stride, int count, int self, int lanes, float eps2)
{
    const Vec4<float>* const end = tile.source + first + count;
    const int* index = tile.index + first;
    const float* half = half_tile + first;
    for (const Vec4<float>* p = tile.source + first; p < end; p += stride) {
        const Vec4<float> source = *p;
        int from_self = -1;
        if constexpr (kSelf) {
            from_self = *index - self;
            index += stride;
        }
        float h = 0.f;
        if constexpr (kByType) {
            h = *half;
            half += stride;
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const float m = kSelf && from_self == lanes * k ? 0.f : source.w;
            t.a[k] = p2p<kGuard, kPot>(t.a[k], source.x - t.x[k], source.y - t.y[k], source.z - t.z[k], m,
                                       kByType ? hi[k] + h : eps2);
        }
    }
}

// A batch of up to 32 leaves of a list, lane l holding leaf l's first source in the batch.
struct LeafBatch {
    int leaves, first_source, total; // total: the batch's sources
};

// Stages the batch's sources base .. base + 31 in the tile's slots 0-31 (padding past the batch's
// end) and returns the particle index of the lane's source (-1 for padding).
template <bool kByType>
__device__ inline int stage_tile(const OctreeView<float>& tree, LeafTile& tile, float* half_tile,
                                 const ListSoftening& soft, const LeafBatch& batch, int base, int lane)
{
    const int u = base + lane;
    // Source u belongs to the last leaf that starts at or before it (leaves are never empty): the
    // leaves started before the tile plus those starting in it up to u.
    const int start = batch.first_source - base;
    const bool mine = lane < batch.leaves;
    const unsigned starts = warp_or(mine && start >= 0 && start < kWarpLanes ? 1u << start : 0u);
    const int before = __popc(__ballot_sync(kFullMask, mine && start < 0));
    const int leaf = before + __popc(starts & ((2u << lane) - 1u)) - 1;
    if (u < batch.total) {
        const int j = tile.offset[leaf] + u;
        tile.source[lane] = tree.particles[j];
        if constexpr (kByType) half_tile[lane] = soft.particle_half[j];
        return j;
    }
    tile.source[lane] = tile.source[kLeafSlots - 1]; // padding, always
    if constexpr (kByType) half_tile[lane] = 0.f;
    return -1;
}

// The tiles of one batch. kOwnBatch: the batch holds some of the chunk's own particles
// [first, own_end), so each tile is tested for them and only a tile holding one pays for the self
// test; the other batches (most of them) skip the test, in a loop of their own.
template <int K, bool kGuard, bool kPot, bool kByType, bool kOwnBatch>
__device__ void batch_tiles(const OctreeView<float>& tree, LeafTile& tile, float* half_tile, const float* hi,
                            const LeafBatch& batch, Targets<K>& t, const LaneLayout& layout, int lane, int mine,
                            int self, int first, int own_end, const ListSoftening& soft)
{
    for (int base = 0; base < batch.total; base += kWarpLanes) {
        const int j = stage_tile<kByType>(tree, tile, half_tile, soft, batch, base, lane);
        bool own = false;
        if constexpr (kOwnBatch) {
            tile.index[lane] = j;
            own = __any_sync(kFullMask, j >= first && j < own_end);
        }
        __syncwarp();
        const int count = min(kWarpLanes, batch.total - base);
        if (own)
            leaf_tile<K, true, kGuard, kPot, kByType>(t, tile, half_tile, hi, mine, layout.replicas, count, self,
                                                      layout.lanes, soft.eps2);
        else
            leaf_tile<K, false, kGuard, kPot, kByType>(t, tile, half_tile, hi, mine, layout.replicas, count, self,
                                                       layout.lanes, soft.eps2);
        __syncwarp();
    }
}

// Returns the sources it took (the leaves' particles), the same on every lane.
template <int K, bool kGuard, bool kPot, bool kByType>
__device__ long long leaf_chunk(const OctreeView<float>& tree, int first, const LaneLayout& layout,
                                const std::int32_t* list, long long length, LeafTile& tile, float* half_tile,
                                WideSums& wide, const ListSoftening& soft, float4* out, bool add)
{
    const WarpRole role(layout);
    const int lane = role.lane, slot = role.slot;
    const int mine = role.active ? role.replica : 0; // the first slot of the lane's replica (kLeafSlots)
    Targets<K> t(tree.particles, first, layout, slot, wide, lane);
    float hi[K];
    if constexpr (kByType) {
        target_halves<K>(soft, first, layout, slot, hi);
        half_tile[lane + kWarpLanes] = 0.f;
    }
    const int own_end = first + layout.targets, self = first + slot;
    tile.source[lane + kWarpLanes] = Vec4<float>{kFarAway, kFarAway, kFarAway, 0.f};
    tile.index[lane + kWarpLanes] = -1;
    long long sources = 0;
    for (long long leaf_base = 0; leaf_base < length; leaf_base += kWarpLanes) {
        LeafBatch batch;
        batch.leaves = static_cast<int>(min(static_cast<long long>(kWarpLanes), length - leaf_base));
        int begin = 0, size = 0;
        if (lane < batch.leaves) {
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
        batch.total = __shfl_sync(kFullMask, inclusive, kWarpLanes - 1);
        sources += batch.total;
        batch.first_source = inclusive - size;
        tile.offset[lane] = begin - batch.first_source;
        // A leaf is one range of particles: one test per leaf finds whether the batch holds any of
        // the chunk's own particles.
        const bool own_batch = __any_sync(kFullMask, lane < batch.leaves && begin < own_end && begin + size > first);
        __syncwarp();
        if (own_batch)
            batch_tiles<K, kGuard, kPot, kByType, true>(tree, tile, half_tile, hi, batch, t, layout, lane, mine, self,
                                                        first, own_end, soft);
        else
            batch_tiles<K, kGuard, kPot, kByType, false>(tree, tile, half_tile, hi, batch, t, layout, lane, mine, self,
                                                         first, own_end, soft);
        // Once per batch of 32 leaves (at most 32 nleaf sources): the float sums stay exact
        // enough over a batch, and a flush per tile costs the leaf loop a measurable share.
        t.flush(wide, lane);
    }
    t.finish(layout, role.replica, slot, out, add, wide, lane);
    return sources;
}

// Group g's lists, in chunks of up to kMaxTargetsPerWarp targets, by one warp: the whole lists,
// or their stretch `segment` of split.segments, whose sums go to the split's partials. Returns
// the pairs it summed (targets times cells, or times the leaves' particles), on every lane.
template <bool kNodes, bool kPot, bool kGuard, bool kByType>
__device__ long long evaluate_group(const OctreeView<float>& tree, int g, int segment, const ListIndex& index,
                                    const std::int32_t* list, const ListSplit& split, const ListSoftening& soft,
                                    float4* acc, NodeTile& node_tile, LeafTile& leaf_tile, float* half_tile,
                                    WideSums& wide)
{
    const ParticleRange range = tree.groups[g].range;
    long long begin = index.begin(g), length = index.length(g);
    float4* out = acc + range.begin;
    bool add = !kNodes; // the leaf lists add to the node lists' sums
    if (split.segments > 1) {
        const long long lo = length * segment / split.segments, hi = length * (segment + 1) / split.segments;
        begin += lo;
        length = hi - lo;
        out = split.partial + (static_cast<long long>(g) * split.segments + segment) * kSplitTargets;
        add = false;
    }
    const std::int32_t* l = list + begin;
    long long sources = length; // cells, or (below) the leaves' particles, which every chunk takes
    for (int first = range.begin; first < range.end; first += kMaxTargetsPerWarp) {
        const LaneLayout layout = choose_lane_layout(min(kMaxTargetsPerWarp, range.end - first));
        float4* o = out + (first - range.begin);
        if constexpr (kNodes) {
            if (layout.per_lane == 1)
                node_chunk<1, kPot, kByType>(tree, first, layout, l, length, node_tile, half_tile, wide, soft, o);
            else if (layout.per_lane == 2)
                node_chunk<2, kPot, kByType>(tree, first, layout, l, length, node_tile, half_tile, wide, soft, o);
            else if (layout.per_lane == 3)
                node_chunk<3, kPot, kByType>(tree, first, layout, l, length, node_tile, half_tile, wide, soft, o);
            else if (layout.per_lane == 4)
                node_chunk<4, kPot, kByType>(tree, first, layout, l, length, node_tile, half_tile, wide, soft, o);
            else
                node_chunk<5, kPot, kByType>(tree, first, layout, l, length, node_tile, half_tile, wide, soft, o);
        } else {
            if (layout.per_lane == 1)
                sources = leaf_chunk<1, kGuard, kPot, kByType>(tree, first, layout, l, length, leaf_tile, half_tile,
                                                               wide, soft, o, add);
            else if (layout.per_lane == 2)
                sources = leaf_chunk<2, kGuard, kPot, kByType>(tree, first, layout, l, length, leaf_tile, half_tile,
                                                               wide, soft, o, add);
            else if (layout.per_lane == 3)
                sources = leaf_chunk<3, kGuard, kPot, kByType>(tree, first, layout, l, length, leaf_tile, half_tile,
                                                               wide, soft, o, add);
            else if (layout.per_lane == 4)
                sources = leaf_chunk<4, kGuard, kPot, kByType>(tree, first, layout, l, length, leaf_tile, half_tile,
                                                               wide, soft, o, add);
            else
                sources = leaf_chunk<5, kGuard, kPot, kByType>(tree, first, layout, l, length, leaf_tile, half_tile,
                                                               wide, soft, o, add);
        }
    }
    return sources * (range.end - range.begin);
}

// One warp per group at a time; the chunk function is node_chunk or leaf_chunk. A warp that
// finishes its group takes the next one from *next_group: with one fixed group per warp a block
// stays resident until its longest list is done, and the SMs run below the occupancy their
// registers allow. A group's sums do not depend on which warp takes it. Each warp adds the pairs
// it summed to *pairs once, as it leaves.
template <bool kNodes, bool kPot, bool kGuard, bool kByType>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarpLanes, kNodes ? 0 : kLeafBlocksPerSm)
    evaluate_kernel(OctreeView<float> tree, ListIndex index, const std::int32_t* list, ListSplit split,
                    ListSoftening soft, float4* acc, int* next_group, unsigned long long* pairs)
{
    __shared__ NodeTile node_tiles[kNodes ? kWarpsPerBlock : 1];
    __shared__ LeafTile leaf_tiles[kNodes ? 1 : kWarpsPerBlock];
    __shared__ float half_tiles[kByType ? kWarpsPerBlock : 1][kLeafSlots]; // the sources' h, by type
    __shared__ WideSums wide_sums[kWarpsPerBlock];
    WideSums& wide = wide_sums[threadIdx.x / kWarpLanes];
    const int warp = threadIdx.x / kWarpLanes;
    const int items = tree.num_groups * split.segments;
    long long summed = 0;
    for (;;) {
        int item = 0;
        if ((threadIdx.x & (kWarpLanes - 1)) == 0) item = atomicAdd(next_group, 1);
        item = __shfl_sync(kFullMask, item, 0);
        if (item >= items) { // the whole warp leaves together
            if ((threadIdx.x & (kWarpLanes - 1)) == 0 && summed > 0)
                atomicAdd(pairs, static_cast<unsigned long long>(summed));
            return;
        }
        int g = item / split.segments; // a group's stretches one after the other, in the groups' order
        const int segment = item - g * split.segments;
        if (index.order) g = index.order[g];
        summed += evaluate_group<kNodes, kPot, kGuard, kByType>(
            tree, g, segment, index, list, split, soft, acc, node_tiles[kNodes ? warp : 0],
            leaf_tiles[kNodes ? 0 : warp], half_tiles[kByType ? warp : 0], wide);
    }
}

// Blocks that fill the device once: the warps then take groups until none is left. The device's
// capacity is asked once per device and thread, not at every launch.
template <bool kNodes, bool kPot, bool kGuard, bool kByType> int resident_capacity()
{
    thread_local int cached_device = -1, capacity = 1;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    if (device != cached_device) {
        int sms = 0, per_sm = 0;
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, evaluate_kernel<kNodes, kPot, kGuard, kByType>, kWarpsPerBlock * kWarpLanes, 0));
        capacity = std::max(sms * per_sm, 1);
        cached_device = device;
    }
    return capacity;
}

template <bool kNodes, bool kPot, bool kGuard, bool kByType> unsigned resident_blocks(long long items)
{
    const std::size_t wanted = ceil_div(static_cast<std::size_t>(items), kWarpsPerBlock);
    return static_cast<unsigned>(
        std::min<std::size_t>(wanted, static_cast<std::size_t>(resident_capacity<kNodes, kPot, kGuard, kByType>())));
}

template <bool kNodes, bool kPot, bool kGuard, bool kByType = false>
void launch_evaluate(const OctreeView<float>& tree, const ListIndex& index, const std::int32_t* list,
                     const ListSplit& split, const ListSoftening& soft, float4* sorted, int* next_group,
                     unsigned long long* pairs, cudaStream_t stream)
{
    const long long items = static_cast<long long>(tree.num_groups) * split.segments;
    evaluate_kernel<kNodes, kPot, kGuard, kByType>
        <<<resident_blocks<kNodes, kPot, kGuard, kByType>(items), kWarpsPerBlock * kWarpLanes, 0, stream>>>(
            tree, index, list, split, soft, sorted, next_group, pairs);
    check_launch(kNodes ? "evaluate_kernel<nodes>" : "evaluate_kernel<leaves>", stream);
}

// Thread t of group g: the target's node stretches summed in order, then its leaf stretches.
__global__ void sum_split_kernel(OctreeView<float> tree, ListSplit nodes, ListSplit leaves, float4* sorted)
{
    const long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    const int g = static_cast<int>(t / kSplitTargets), k = static_cast<int>(t % kSplitTargets);
    if (g >= tree.num_groups) return;
    const ParticleRange range = tree.groups[g].range;
    if (k >= range.end - range.begin) return;
    const auto add = [&](const ListSplit& split, float4& v) {
        const float4* p = split.partial + static_cast<long long>(g) * split.segments * kSplitTargets + k;
        for (int s = 0; s < split.segments; ++s, p += kSplitTargets) {
            v.x += p->x;
            v.y += p->y;
            v.z += p->z;
            v.w += p->w;
        }
    };
    float4 node_sum = make_float4(0.f, 0.f, 0.f, 0.f), leaf_sum = node_sum;
    add(nodes, node_sum);
    add(leaves, leaf_sum);
    sorted[range.begin + k] =
        make_float4(node_sum.x + leaf_sum.x, node_sum.y + leaf_sum.y, node_sum.z + leaf_sum.z, node_sum.w + leaf_sum.w);
}

} // namespace

int split_segments(int num_groups)
{
    // The node kernel without potentials, a tick's: the leaf kernel holds about as many warps.
    const long long warps = static_cast<long long>(resident_capacity<true, false, false, false>()) * kWarpsPerBlock;
    const long long groups = std::max(num_groups, 1);
    const auto wanted =
        static_cast<long long>(ceil_div(static_cast<std::size_t>(2 * warps), static_cast<std::size_t>(groups)));
    return static_cast<int>(std::clamp<long long>(wanted, 1, kMaxSplitSegments));
}

void launch_sum_split(const OctreeView<float>& tree, const ListSplit& nodes, const ListSplit& leaves, float4* sorted,
                      cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    const long long threads = static_cast<long long>(tree.num_groups) * kSplitTargets;
    sum_split_kernel<<<static_cast<unsigned>(ceil_div(static_cast<std::size_t>(threads), 256)), 256, 0, stream>>>(
        tree, nodes, leaves, sorted);
    check_launch("sum_split_kernel", stream);
}

void launch_evaluate_nodes(const OctreeView<float>& tree, const ListIndex& node_index, const std::int32_t* node_list,
                           const ListSoftening& softening, float4* sorted, int* next_group, unsigned long long* pairs,
                           bool potential, cudaStream_t stream, const ListSplit& split)
{
    if (tree.num_groups == 0) return;
    const ListSoftening& s = softening;
    if (s.by_type() && potential)
        launch_evaluate<true, true, false, true>(tree, node_index, node_list, split, s, sorted, next_group, pairs,
                                                 stream);
    else if (s.by_type())
        launch_evaluate<true, false, false, true>(tree, node_index, node_list, split, s, sorted, next_group, pairs,
                                                  stream);
    else if (potential)
        launch_evaluate<true, true, false>(tree, node_index, node_list, split, s, sorted, next_group, pairs, stream);
    else
        launch_evaluate<true, false, false>(tree, node_index, node_list, split, s, sorted, next_group, pairs, stream);
}

void launch_evaluate_leaves(const OctreeView<float>& tree, const ListIndex& leaf_index, const std::int32_t* leaf_list,
                            const ListSoftening& softening, float4* sorted, int* next_group, unsigned long long* pairs,
                            bool potential, cudaStream_t stream, const ListSplit& split)
{
    if (tree.num_groups == 0) return;
    // Unsoftened pairs need the r^2 > 0 test in every pair, softened ones never: a kernel each, so
    // neither carries the other's loops.
    const bool guard = softening.by_type() ? softening.guard : !(softening.eps2 > 0.f);
    const ListSoftening& s = softening;
    const ListIndex& i = leaf_index;
    if (s.by_type()) {
        if (potential && guard)
            launch_evaluate<false, true, true, true>(tree, i, leaf_list, split, s, sorted, next_group, pairs, stream);
        else if (potential)
            launch_evaluate<false, true, false, true>(tree, i, leaf_list, split, s, sorted, next_group, pairs, stream);
        else if (guard)
            launch_evaluate<false, false, true, true>(tree, i, leaf_list, split, s, sorted, next_group, pairs, stream);
        else
            launch_evaluate<false, false, false, true>(tree, i, leaf_list, split, s, sorted, next_group, pairs, stream);
    } else if (potential && guard) {
        launch_evaluate<false, true, true>(tree, i, leaf_list, split, s, sorted, next_group, pairs, stream);
    } else if (potential) {
        launch_evaluate<false, true, false>(tree, i, leaf_list, split, s, sorted, next_group, pairs, stream);
    } else if (guard) {
        launch_evaluate<false, false, true>(tree, i, leaf_list, split, s, sorted, next_group, pairs, stream);
    } else {
        launch_evaluate<false, false, false>(tree, i, leaf_list, split, s, sorted, next_group, pairs, stream);
    }
}

} // namespace grove::gpu
