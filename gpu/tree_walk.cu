// The walk kernels: one thread per group running the shared walk.hpp (count, then write; or, with
// room per group known, write at once), and the per-node opening radii. See tree_walk.cuh for why this file is compiled
// without contraction.
#include "gpu/tree_walk.cuh"

#include <algorithm>

#include "gpu/cuda_check.cuh"
#include "tree/walk.hpp"

namespace grove::gpu {

namespace {

constexpr int kWalkThreads = 64;

__global__ void opening_radii_kernel(int num_nodes, const float* size, const float* com_offset, float theta,
                                     const float* softening_radius2, float* r_open2)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= num_nodes) return;
    const float r2 = opening_radius2(size[i], com_offset[i], theta);
    r_open2[i] = softening_radius2 ? fmaxf(r2, softening_radius2[i]) : r2;
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

// Four entries in registers, oldest in x: a push shifts them along (three moves, no branch on
// the position), so after four pushes they leave in order in one 16-byte store.
struct Quad {
    int4 v;
    __device__ void push(std::int32_t e) { v = make_int4(v.y, v.z, v.w, e); }
    // The same where `take`, by selects rather than a branch.
    __device__ void push_if(std::int32_t e, bool take)
    {
        v = make_int4(take ? v.y : v.x, take ? v.z : v.y, take ? v.w : v.z, take ? e : v.w);
    }
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

// A walk's sink that hands node and leaf entries to two lists of type List. The selecting one
// hands every visited node to both, taken by one or neither without a branch (List::push_if;
// tree/walk.hpp's TakesEntries).
template <class List> struct ListPass {
    List nodes, leaves;
    __device__ void node(std::int32_t i) { nodes.push(i); }
    __device__ void leaf(std::int32_t i) { leaves.push(i); }
};

template <class List> struct SelectingListPass : ListPass<List> {
    __device__ void entry(std::int32_t i, bool to_nodes, bool to_leaves)
    {
        this->nodes.push_if(i, to_nodes);
        this->leaves.push_if(i, to_leaves);
    }
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

    // Appends v where `take`, the staged entries moved by selects rather than a branch: the walk
    // hands every node to both of its lists this way, so that a warp's threads do not take the
    // node list's and the leaf list's branches one after the other.
    __device__ void push_if(std::int32_t v, bool take)
    {
        const int staged = length & 7;
        buffer.first.push_if(v, take && staged < 4);
        buffer.second.push_if(v, take && staged >= 4);
        length += take ? 1 : 0;
        if (take && length % 8 == 0 && length <= capacity) buffer.store(out + length - 8);
    }
    __device__ void flush()
    {
        const int k = length & 7, at = length - k;
        if (at + k <= capacity) buffer.store_first(out + at, k);
    }
};

// Group g's one-thread walk on the packed nodes, at most `budget` of them: the node it stopped
// before, tree.num_nodes when it walked them all (walk_group_path). Without a budget (INT32_MAX,
// the same for every thread) the walk counts no nodes.
// kGeometricOnly: the caller knows the view has no relative criterion, and its kernel holds only
// the geometric walk.
template <bool kGeometricOnly = false, class Sink>
__device__ std::int32_t walk_packed(const OctreeView<float>& tree, int g, Sink& sink, int budget)
{
    const Group<float> group = tree.groups[g];
    const auto walk = [&](const auto& open) {
        return budget != INT32_MAX ? walk_group_path<true>(tree, group, open, sink, budget)
                                   : walk_group_path<false>(tree, group, open, sink, budget);
    };
    if constexpr (!kGeometricOnly)
        if (tree.r_rel2 != nullptr) return walk(PackedOpening<float, true>{tree.walk_nodes, tree.mac_scale[g]});
    return walk(PackedOpening<float, false>{tree.walk_nodes, 0.f});
}

constexpr unsigned kAllLanes = 0xffffffffu;

__device__ int lane_index()
{
    return static_cast<int>(threadIdx.x & 31u);
}

// Where the one-thread walk's path enters the node range from lo on: lo, unless the group accepts
// one of lo's ancestors, the first of which (from the root) sends it past its subtree. The part's
// thread tests the ancestors (their loads independent of each other). `ancestors`: lo's, root
// first, or null where the table had no room for them; the path is then followed from the root.
template <class Open>
__device__ std::int32_t part_start(const Group<float>& group, const Open& open, int lo, const std::int32_t* ancestors,
                                   int count)
{
    if (ancestors == nullptr) return 0;
    std::int32_t past = -1;
#pragma unroll 4
    for (int k = 0; k < count; ++k) {
        const NodeStep step = open(group, ancestors[k]);
        if (!step.opened && past < 0) past = step.skip;
    }
    return past >= 0 ? past : lo;
}

// One part of group g's walk, from node `start` of its path on: the entries among nodes [lo, hi)
// of the one-thread walk's path, in its order; an accepted node belongs to the part that holds its
// index, so the parts of the node range one after the other are the whole walk (the walk lists
// nodes in increasing index order). Subtrees that end before lo are passed without a test.
template <class Open, class Sink>
__device__ void walk_part(const OctreeView<float>& tree, const Group<float>& group, const Open& open,
                          std::int32_t start, int lo, int hi, Sink& sink)
{
    std::int32_t i = start;
    while (i < hi) {
        const NodeStep step = open(group, i);
        if (step.skip <= lo) { // the whole subtree lies before the part
            i = step.skip;
            continue;
        }
        if (i >= lo) {
            if (step.opened && step.leaf) sink.leaf(i);
            if (!step.opened) sink.node(i);
        }
        i = step.opened ? i + 1 : step.skip;
    }
}

// The first node of part p of the node range.
__host__ __device__ int part_first_node(int num_nodes, int p)
{
    return static_cast<int>(static_cast<long long>(num_nodes) * p / kLongWalkParts);
}

// Row p of the table: the number of ancestors of part p's first node, then the ancestors, root
// first; -1 where there are more than the row holds.
__global__ void part_starts_kernel(OctreeView<float> tree, std::int32_t* table)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= kLongWalkParts) return;
    std::int32_t* row = table + p * kPartStartInts;
    const int lo = part_first_node(tree.num_nodes, p);
    int count = 0;
    std::int32_t i = 0;
    while (i < lo) {
        const std::int32_t skip = tree.walk_nodes[i].next;
        if (skip <= lo) {
            i = skip;
        } else { // i < lo < skip: an ancestor
            if (count + 1 < kPartStartInts) row[1 + count] = i;
            ++count;
            i = i + 1;
        }
    }
    row[0] = count + 1 < kPartStartInts ? count : -1;
}

// A listed walk's parts: kLongWalkParts equal ranges of node indices, each walked by a thread of
// its own. Thread t takes part t / L of listed walk t % L (L walks listed), so that neighbouring
// threads walk the same part for groups listed together (neighbours, mostly): their paths and
// loads are alike, as those of a warp of one-thread walks are. `resume`: the node where the
// one-thread walk's kept prefix stopped; the parts before it have nothing left to walk, and the
// part that holds it starts there, on the path, with no ancestor to test.
template <class Sink>
__device__ void walk_lists_part(const OctreeView<float>& tree, int g, int part, const std::int32_t* part_starts,
                                std::int32_t resume, Sink& sink)
{
    int lo = part_first_node(tree.num_nodes, part);
    const int hi = part_first_node(tree.num_nodes, part + 1);
    if (hi <= resume) return;
    const Group<float> group = tree.groups[g];
    const auto walk = [&](const auto& open) {
        std::int32_t start = resume;
        if (lo > resume) {
            const std::int32_t* row = part_starts ? part_starts + part * kPartStartInts : nullptr;
            const int count = row ? row[0] : -1;
            start = part_start(group, open, lo, count >= 0 ? row + 1 : nullptr, count);
        } else {
            lo = resume;
        }
        walk_part(tree, group, open, start, lo, hi, sink);
    };
    if (tree.r_rel2 != nullptr)
        walk(PackedOpening<float, true>{tree.walk_nodes, tree.mac_scale[g]});
    else
        walk(PackedOpening<float, false>{tree.walk_nodes, 0.f});
}

// Group g's slot in the long walks' queue, -1 when the queue is full (the caller walks it whole).
__device__ int queue_long_walk(const LongWalks& long_walks, int g)
{
    const int slot = atomicAdd(long_walks.count, 1);
    if (slot >= long_walks.capacity) return -1;
    long_walks.queue[slot] = g;
    return slot;
}

__device__ int listed_walks(const LongWalks& long_walks)
{
    return min(*long_walks.count, long_walks.capacity);
}

// Listed walk q's prefix in the part table (kPrefixInts).
__device__ int* prefix_entry(const LongWalks& long_walks, int q)
{
    return long_walks.parts + static_cast<long long>(q) * kPartTableInts;
}

// Lists group g with the one-thread walk's prefix: `lengths` entries, kept where `kept` (the
// parts then walk from `stop` on), else walked again by the parts from the root. False when the
// queue is full.
__device__ bool list_long_walk(const LongWalks& long_walks, int g, ListLengths lengths, std::int32_t stop, bool kept)
{
    const int q = queue_long_walk(long_walks, g);
    if (q < 0) return false;
    int* prefix = prefix_entry(long_walks, q);
    prefix[0] = kept ? lengths.nodes : 0;
    prefix[1] = kept ? lengths.leaves : 0;
    prefix[2] = kept ? stop : 0;
    return true;
}

// Listed walk q's part p in the part table: its node and leaf list lengths, then their offsets.
__device__ int* part_entry(const LongWalks& long_walks, int q, int p)
{
    return prefix_entry(long_walks, q) + kPrefixInts + 2 * p;
}

__device__ std::int32_t resume_node(const LongWalks& long_walks, int q)
{
    return prefix_entry(long_walks, q)[2];
}

// Each thread of the parts kernels takes (walk, part) items in turn.
template <class Item> __device__ void for_each_part(const LongWalks& long_walks, Item&& item)
{
    const int listed = listed_walks(long_walks);
    const long long items = static_cast<long long>(listed) * kLongWalkParts;
    for (long long t = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; t < items;
         t += static_cast<long long>(gridDim.x) * blockDim.x)
        item(static_cast<int>(t % listed), static_cast<int>(t / listed));
}

__global__ void count_parts_kernel(OctreeView<float> tree, LongWalks long_walks)
{
    for_each_part(long_walks, [&](int q, int p) {
        CountPass pass;
        walk_lists_part(tree, long_walks.queue[q], p, long_walks.part_starts, resume_node(long_walks, q), pass);
        int* entry = part_entry(long_walks, q, p);
        entry[0] = pass.lengths.nodes;
        entry[1] = pass.lengths.leaves;
    });
}

// A warp per listed walk: the parts' lengths become their offsets, after the prefix; returns the
// whole lists' lengths (on every lane).
__device__ ListLengths scan_parts(const LongWalks& long_walks, int q)
{
    const int lane = lane_index();
    const int* prefix = prefix_entry(long_walks, q);
    const int prefix_nodes = prefix[0], prefix_leaves = prefix[1];
    constexpr int kPerLane = kLongWalkParts / 32;
    int* first = part_entry(long_walks, q, kPerLane * lane);
    int nodes = 0, leaves = 0;
    for (int k = 0; k < kPerLane; ++k) {
        nodes += first[2 * k];
        leaves += first[2 * k + 1];
    }
    const int own_nodes = nodes, own_leaves = leaves;
    for (int d = 1; d < 32; d <<= 1) {
        const int n = __shfl_up_sync(kAllLanes, nodes, d), l = __shfl_up_sync(kAllLanes, leaves, d);
        if (lane >= d) {
            nodes += n;
            leaves += l;
        }
    }
    int node_at = prefix_nodes + nodes - own_nodes, leaf_at = prefix_leaves + leaves - own_leaves;
    for (int k = 0; k < kPerLane; ++k) {
        const int n = first[2 * k], l = first[2 * k + 1];
        first[2 * k] = node_at;
        first[2 * k + 1] = leaf_at;
        node_at += n;
        leaf_at += l;
    }
    return {prefix_nodes + __shfl_sync(kAllLanes, nodes, 31), prefix_leaves + __shfl_sync(kAllLanes, leaves, 31)};
}

template <class Walk> __device__ void for_each_listed_walk(const LongWalks& long_walks, Walk&& walk)
{
    const int listed = listed_walks(long_walks);
    const int warps = static_cast<int>(gridDim.x * blockDim.x / 32);
    for (int q = static_cast<int>((blockIdx.x * blockDim.x + threadIdx.x) / 32); q < listed; q += warps) walk(q);
}

// The longest lists and the entries of a block's listed walks, gathered in shared memory and
// added to the device's words once per block, rather than by each of thousands of walks to the
// same few words.
struct BlockListTotals {
    int longest[2];
    unsigned long long entries[2];

    // Every thread of the block calls these two, before and after its walks.
    __device__ void clear()
    {
        if (threadIdx.x == 0) *this = {};
        __syncthreads();
    }
    __device__ void add_to(int* device_longest, unsigned long long* device_entries)
    {
        __syncthreads();
        if (threadIdx.x != 0) return;
        atomicMax(&device_longest[0], longest[0]);
        atomicMax(&device_longest[1], longest[1]);
        if (device_entries == nullptr) return;
        atomicAdd(&device_entries[0], entries[0]);
        atomicAdd(&device_entries[1], entries[1]);
    }
    // add: lists that were written (their entries count); add_longest: lists only measured, such
    // as one left out for want of room (their entries do not).
    __device__ void add(ListLengths n)
    {
        add_longest(n);
        atomicAdd(&entries[0], static_cast<unsigned long long>(n.nodes));
        atomicAdd(&entries[1], static_cast<unsigned long long>(n.leaves));
    }
    __device__ void add_longest(ListLengths n)
    {
        atomicMax(&longest[0], n.nodes);
        atomicMax(&longest[1], n.leaves);
    }
};

// Pass 1: the listed walks' lengths.
__global__ void scan_parts_counted_kernel(LongWalks long_walks, long long* node_count, long long* leaf_count,
                                          int* longest)
{
    __shared__ BlockListTotals block;
    block.clear();
    for_each_listed_walk(long_walks, [&](int q) {
        const ListLengths n = scan_parts(long_walks, q);
        if (lane_index() != 0) return;
        const int g = long_walks.queue[q];
        node_count[g] = n.nodes;
        leaf_count[g] = n.leaves;
        block.add(n);
    });
    block.add_to(longest, nullptr);
}

// Where a list of `length` entries goes: its room, or a place in the pool taken by atomicAdd;
// -1 where neither has it.
__device__ long long place_list(long long length, int capacity, long long room_at, long long pool_base,
                                long long pool_capacity, unsigned long long* cursor, unsigned long long* needed)
{
    if (length <= capacity) return room_at;
    const auto at = static_cast<long long>(atomicAdd(cursor, static_cast<unsigned long long>(length)));
    atomicAdd(needed, static_cast<unsigned long long>(length));
    return at + length <= pool_capacity ? pool_base + at : -1;
}

// Group g's two lists placed: where each starts in its list array, -1 where it found no place.
struct ListPlaces {
    long long nodes, leaves;
    __device__ bool found() const { return nodes >= 0 && leaves >= 0; }
};

__device__ ListPlaces place_lists(const BoundedLists& out, int g, ListLengths n)
{
    return {place_list(n.nodes, out.node_capacity, static_cast<long long>(g) * out.node_capacity, out.node_pool_base,
                       out.node_pool_capacity, &out.pool[0], &out.totals[2]),
            place_list(n.leaves, out.leaf_capacity, static_cast<long long>(g) * out.leaf_capacity, out.leaf_pool_base,
                       out.leaf_pool_capacity, &out.pool[1], &out.totals[3])};
}

// A warp copies a kept prefix of `length` entries from its group's room to the list's place in
// the pool (where the whole list did not fit the room). Eight loads a lane before their stores:
// the compiler may not move a load past a store to the same array, and one entry at a time the
// copy waited on a round trip to memory for every 32 entries.
__device__ void move_prefix(std::int32_t* list, long long room_at, long long at, int length)
{
    if (at < 0 || at == room_at) return;
    constexpr int kInFlight = 8;
    for (int first = lane_index(); first < length; first += 32 * kInFlight) {
        std::int32_t v[kInFlight];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u)
            if (first + 32 * u < length) v[u] = list[room_at + first + 32 * u];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u)
            if (first + 32 * u < length) list[at + first + 32 * u] = v[u];
    }
}

// The one pass: the listed walks' lengths, and their places.
__global__ void place_parts_kernel(BoundedLists out, LongWalks long_walks)
{
    __shared__ BlockListTotals block;
    block.clear();
    for_each_listed_walk(long_walks, [&](int q) {
        const ListLengths n = scan_parts(long_walks, q);
        const int g = long_walks.queue[q];
        const long long node_room = static_cast<long long>(g) * out.node_capacity,
                        leaf_room = static_cast<long long>(g) * out.leaf_capacity;
        ListPlaces at{0, 0};
        if (lane_index() == 0) {
            at = place_lists(out, g, n);
            out.node_count[g] = at.nodes >= 0 ? n.nodes : 0; // a list left out is evaluated as empty, and walked again
            out.leaf_count[g] = at.leaves >= 0 ? n.leaves : 0;
            out.node_place[g] = at.nodes;
            out.leaf_place[g] = at.leaves;
            block.add(n);
            if (!at.found()) atomicOr(&out.longest[2], kPoolFull);
        }
        const long long node_at = __shfl_sync(kAllLanes, at.nodes, 0);
        const long long leaf_at = __shfl_sync(kAllLanes, at.leaves, 0);
        const int* prefix = prefix_entry(long_walks, q);
        move_prefix(out.node_list, node_room, node_at, prefix[0]);
        move_prefix(out.leaf_list, leaf_room, leaf_at, prefix[1]);
    });
    block.add_to(out.longest, out.totals);
}

// A part's entries from out + its offset; a null list is not written.
struct PartWrite {
    std::int32_t* nodes;
    std::int32_t* leaves;
    __device__ void node(std::int32_t i)
    {
        if (nodes) __stcs(nodes++, i);
    }
    __device__ void leaf(std::int32_t i)
    {
        if (leaves) __stcs(leaves++, i);
    }
};

__global__ void write_parts_placed_kernel(OctreeView<float> tree, BoundedLists out, LongWalks long_walks)
{
    for_each_part(long_walks, [&](int q, int p) {
        const int g = long_walks.queue[q];
        const long long node_at = out.node_place[g], leaf_at = out.leaf_place[g];
        const int* at = part_entry(long_walks, q, p);
        PartWrite sink{node_at >= 0 ? out.node_list + node_at + at[0] : nullptr,
                       leaf_at >= 0 ? out.leaf_list + leaf_at + at[1] : nullptr};
        if (sink.nodes || sink.leaves)
            walk_lists_part(tree, g, p, long_walks.part_starts, resume_node(long_walks, q), sink);
    });
}

// Pass 2: the listed walks of this batch (groups first .. first + num_groups of the share) at
// their scanned offsets.
__global__ void write_parts_kernel(OctreeView<float> tree, const long long* node_offset, const long long* leaf_offset,
                                   std::int32_t* node_list, std::int32_t* leaf_list, LongWalks long_walks, int first)
{
    for_each_part(long_walks, [&](int q, int p) {
        const int g = long_walks.queue[q] - first;
        if (g < 0 || g >= tree.num_groups) return; // another batch's
        const int* at = part_entry(long_walks, q, p);
        PartWrite sink{node_list + node_offset[g] + at[0], leaf_list + leaf_offset[g] + at[1]};
        walk_lists_part(tree, g, p, long_walks.part_starts, resume_node(long_walks, q), sink);
    });
}

// Group g's count, or its listing as a long walk.
__device__ void walk_count_group(const OctreeView<float>& tree, const LongWalks& long_walks, int g,
                                 long long* node_count, long long* leaf_count, BlockListTotals& block)
{
    CountPass pass;
    const std::int32_t stop = walk_packed(tree, g, pass, long_walks.budget);
    if (stop < tree.num_nodes) {
        if (list_long_walk(long_walks, g, pass.lengths, stop, true)) { // pass 2 writes the prefix again
            long_walks.listed[g] = 1;
            return;
        }
        pass = CountPass{}; // the queue is full: this thread walks it all
        walk_packed(tree, g, pass, INT32_MAX);
    }
    node_count[g] = pass.lengths.nodes;
    leaf_count[g] = pass.lengths.leaves;
    block.add_longest(pass.lengths);
}

__global__ void walk_count_kernel(OctreeView<float> tree, LongWalks long_walks, long long* node_count,
                                  long long* leaf_count, int* longest)
{
    __shared__ BlockListTotals block;
    block.clear();
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < tree.num_groups) walk_count_group(tree, long_walks, g, node_count, leaf_count, block);
    block.add_to(longest, nullptr);
}

// A list longer than its room whose walk found the long walks' queue full: this thread takes its
// places (the room where a list fits it, else the pool) and walks again to write both lists there.
// Only where the pool is full too is the list left out (its count 0), for the caller to walk again.
template <bool kGeometricOnly>
__device__ void write_own_lists(const OctreeView<float>& tree, const BoundedLists& out, int g, ListLengths n,
                                BlockListTotals& block)
{
    const ListPlaces at = place_lists(out, g, n);
    if (!at.found()) {
        out.node_count[g] = out.leaf_count[g] = 0;
        block.add_longest(n);
        atomicOr(&out.longest[2], kQueueFull | kPoolFull);
        return;
    }
    ListPass<StagedList> pass{{out.node_list + at.nodes}, {out.leaf_list + at.leaves}};
    walk_packed<kGeometricOnly>(tree, g, pass, INT32_MAX);
    pass.nodes.flush();
    pass.leaves.flush();
    out.node_count[g] = n.nodes;
    out.leaf_count[g] = n.leaves;
    out.node_place[g] = at.nodes;
    out.leaf_place[g] = at.leaves;
    block.add(n);
}

// Group g's one-pass walk into its room (or its listing as a long walk), every visited node handed
// to both lists (kGeometricOnly as for walk_packed).
template <bool kGeometricOnly>
__device__ void walk_bounded_group(const OctreeView<float>& tree, const BoundedLists& out, const LongWalks& long_walks,
                                   int g, BlockListTotals& block)
{
    using Pass = SelectingListPass<BoundedList>;
    const int nc = out.node_capacity, lc = out.leaf_capacity;
    const auto walk = [&](int budget, Pass& pass) {
        pass = Pass{};
        pass.nodes = {out.node_list + static_cast<std::size_t>(g) * nc, nc};
        pass.leaves = {out.leaf_list + static_cast<std::size_t>(g) * lc, lc};
        return walk_packed<kGeometricOnly>(tree, g, pass, budget);
    };
    Pass pass;
    const std::int32_t stop = walk(long_walks.budget, pass);
    bool whole = stop >= tree.num_nodes;
    if (!whole) {
        // The prefix stays in the room where it fits it (place_parts moves it to the pool where
        // the whole list does not).
        const bool kept = pass.nodes.length <= nc && pass.leaves.length <= lc;
        if (kept) {
            pass.nodes.flush();
            pass.leaves.flush();
        }
        if (!list_long_walk(long_walks, g, {pass.nodes.length, pass.leaves.length}, stop, kept))
            whole = walk(INT32_MAX, pass) >= tree.num_nodes; // the queue is full: this thread walks it all
    }
    if (whole && pass.nodes.length <= nc && pass.leaves.length <= lc) {
        pass.nodes.flush();
        pass.leaves.flush();
        out.node_count[g] = pass.nodes.length;
        out.leaf_count[g] = pass.leaves.length;
        block.add({pass.nodes.length, pass.leaves.length});
    } else if (whole && !list_long_walk(long_walks, g, {}, 0, false)) { // longer than its room, no walk for the pool
        write_own_lists<kGeometricOnly>(tree, out, g, {pass.nodes.length, pass.leaves.length}, block);
    }
}

// A kernel for each criterion: the geometric one's holds no relative walk, which the compiler
// would schedule with it as one whole (it then walked longer).
template <bool kGeometricOnly>
__global__ void walk_bounded_kernel(OctreeView<float> tree, BoundedLists out, LongWalks long_walks)
{
    __shared__ BlockListTotals block;
    block.clear();
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g < tree.num_groups) walk_bounded_group<kGeometricOnly>(tree, out, long_walks, g, block);
    block.add_to(out.longest, out.totals);
}

// Pass 2's one-thread walks; a listed walk writes the prefix that pass 1 counted (the same budget
// stops it at the same node), its parts the rest.
__global__ void walk_write_kernel(OctreeView<float> tree, const long long* node_offset, const long long* leaf_offset,
                                  std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch,
                                  const std::uint8_t* listed, std::int32_t budget)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= tree.num_groups) return;
    ListPass<StagedList> pass{{node_list + node_offset[g]}, {leaf_list + leaf_offset[g]}};
    const bool prefix = listed[g] != 0;
    walk_packed(tree, g, pass, prefix ? budget : INT32_MAX);
    pass.nodes.flush();
    pass.leaves.flush();
    // The lists were sized by pass 1: a pass that wrote another length is a bug, reported.
    if (!prefix && (pass.nodes.written != node_offset[g + 1] - node_offset[g] ||
                    pass.leaves.written != leaf_offset[g + 1] - leaf_offset[g]))
        atomicCAS(mismatch, 0, g + 1);
}

constexpr int kPartsThreads = 256;

// Threads of the parts kernels: enough to fill the device, each taking items in turn (how many
// walks were listed is known only on the device).
unsigned parts_blocks()
{
    thread_local int cached_device = -1, sms = 1;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    if (device != cached_device) {
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        cached_device = device;
    }
    return static_cast<unsigned>(sms * 8);
}

// For the kernels of a thread per part: one for every part of the walks the last such walk listed
// and a quarter more, so that the hardware deals out the parts, whose lengths differ widely, as
// threads come free (a thread that takes several in turn lasts as long as their sum).
unsigned part_item_blocks(const LongWalks& long_walks)
{
    const long long walks =
        std::min<long long>(long_walks.capacity, long_walks.expected + long_walks.expected / 4 + 32);
    const auto blocks = static_cast<unsigned>(ceil_div(walks * kLongWalkParts, kPartsThreads));
    return std::max(parts_blocks(), long_walks.expected > 0 ? blocks : 0u);
}

} // namespace

void launch_opening_radii(int num_nodes, const float* size, const float* com_offset, float theta,
                          const float* softening_radius2, float* r_open2, cudaStream_t stream)
{
    if (num_nodes == 0) return;
    opening_radii_kernel<<<static_cast<unsigned>(ceil_div(num_nodes, 256)), 256, 0, stream>>>(
        num_nodes, size, com_offset, theta, softening_radius2, r_open2);
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

void launch_part_starts(const OctreeView<float>& tree, std::int32_t* table, cudaStream_t stream)
{
    part_starts_kernel<<<1, kLongWalkParts, 0, stream>>>(tree, table);
    check_launch("part_starts_kernel", stream);
}

void launch_walk_count(const OctreeView<float>& tree, long long* node_count, long long* leaf_count, int* longest,
                       const LongWalks& long_walks, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    CUDA_CHECK(cudaMemsetAsync(long_walks.listed, 0, static_cast<std::size_t>(tree.num_groups), stream));
    walk_count_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, long_walks, node_count, leaf_count, longest);
    check_launch("walk_count_kernel", stream);
    if (long_walks.budget == INT32_MAX) return;
    count_parts_kernel<<<part_item_blocks(long_walks), kPartsThreads, 0, stream>>>(tree, long_walks);
    check_launch("count_parts_kernel", stream);
    scan_parts_counted_kernel<<<parts_blocks(), kPartsThreads, 0, stream>>>(long_walks, node_count, leaf_count,
                                                                            longest);
    check_launch("scan_parts_counted_kernel", stream);
}

void launch_walk_bounded(const OctreeView<float>& tree, const BoundedLists& lists, const LongWalks& long_walks,
                         cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    const unsigned blocks = static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads));
    if (tree.r_rel2 != nullptr)
        walk_bounded_kernel<false><<<blocks, kWalkThreads, 0, stream>>>(tree, lists, long_walks);
    else
        walk_bounded_kernel<true><<<blocks, kWalkThreads, 0, stream>>>(tree, lists, long_walks);
    check_launch("walk_bounded_kernel", stream);
    count_parts_kernel<<<part_item_blocks(long_walks), kPartsThreads, 0, stream>>>(tree, long_walks);
    check_launch("count_parts_kernel", stream);
    place_parts_kernel<<<parts_blocks(), kPartsThreads, 0, stream>>>(lists, long_walks);
    check_launch("place_parts_kernel", stream);
    write_parts_placed_kernel<<<part_item_blocks(long_walks), kPartsThreads, 0, stream>>>(tree, lists, long_walks);
    check_launch("write_parts_placed_kernel", stream);
}

void launch_walk_write(const OctreeView<float>& tree, const long long* node_offset, const long long* leaf_offset,
                       std::int32_t* node_list, std::int32_t* leaf_list, int* mismatch, const LongWalks& long_walks,
                       int first, cudaStream_t stream)
{
    if (tree.num_groups == 0) return;
    walk_write_kernel<<<static_cast<unsigned>(ceil_div(tree.num_groups, kWalkThreads)), kWalkThreads, 0, stream>>>(
        tree, node_offset, leaf_offset, node_list, leaf_list, mismatch, long_walks.listed + first, long_walks.budget);
    check_launch("walk_write_kernel", stream);
    if (long_walks.budget == INT32_MAX) return;
    write_parts_kernel<<<part_item_blocks(long_walks), kPartsThreads, 0, stream>>>(
        tree, node_offset, leaf_offset, node_list, leaf_list, long_walks, first);
    check_launch("write_parts_kernel", stream);
}

} // namespace grove::gpu
