// The state that a particle takes from one domain to another (tree_resident.cuh: CrosserRecord),
// gathered from a store's arrays and placed into them: each step's crossers
// (tree_resident_crossers.cu) and the domains cut anew (tree_resident_recut.cu). Private to gpu/.
#pragma once

#include <cstdint>
#include <vector>

#include "core/rank_exchange.hpp"
#include "gpu/tree_resident.cuh"

namespace grove {

namespace {

__global__ void gather_crossers_kernel(int count, const std::uint32_t* slot, StateArrays s, CrosserRecord* out)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    const std::uint32_t k = slot[j];
    CrosserRecord r{};
    r.body = s.body[k];
    r.vel = s.vel[k];
    r.sums = s.sums[k];
    r.id = s.id[k];
    r.type = s.type[k];
    r.cost = s.cost ? s.cost[k] : 0.0f;
    out[j] = r;
}

// After the step: the stayers moved down (slot[moves + t] from slot[t]), then the arrivals into
// their slots.
__global__ void move_stayers_kernel(int moves, const std::uint32_t* slot, StateArrays s)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= moves) return;
    const std::uint32_t from = slot[t], to = slot[moves + t];
    s.body[to] = s.body[from];
    s.vel[to] = s.vel[from];
    s.sums[to] = s.sums[from];
    s.caller[to] = s.caller[from];
    s.id[to] = s.id[from];
    s.type[to] = s.type[from];
    if (s.cost) s.cost[to] = s.cost[from];
}

// Record r into slot k. An arrival's caller index is its slot: the store writes the device's order
// once any particle crossed (TreeGpuResident::store).
__device__ inline void place_record(const StateArrays& s, std::uint32_t k, const CrosserRecord& r)
{
    s.body[k] = r.body;
    s.vel[k] = r.vel;
    s.sums[k] = r.sums;
    s.caller[k] = k;
    s.id[k] = r.id;
    s.type[k] = r.type;
    if (s.cost) s.cost[k] = r.cost;
}

// The arrivals into their slots.
__global__ void place_arrivals_kernel(int arrivals, const std::uint32_t* slot, const CrosserRecord* in, StateArrays s)
{
    const int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a < arrivals) place_record(s, slot[a], in[a]);
}

// The records in[0, count) placed at slots first, first + 1, ... (the domains cut anew: every
// particle's slot is its place in the order of the ranks it came from).
__global__ void place_records_kernel(int count, int first, const CrosserRecord* in, StateArrays s)
{
    const int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a < count) place_record(s, static_cast<std::uint32_t>(first + a), in[a]);
}

// What every rank sent this one, by rank.
inline std::vector<std::vector<char>> all_to_all(RankExchange& ranks, const std::vector<ByteSpan>& send)
{
    std::vector<std::vector<char>> received(send.size());
    ranks.all_to_all(send, [&](int r, std::size_t bytes) {
        received[static_cast<std::size_t>(r)].resize(bytes);
        return received[static_cast<std::size_t>(r)].data();
    });
    return received;
}

} // namespace

} // namespace grove
