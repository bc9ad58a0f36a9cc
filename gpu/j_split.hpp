// How a direct-summation launch splits the j-particles over blocks (kirin's and Sapporo's answer
// to few active i-particles): enough splits that the grid fills every SM, in chunks of whole
// tiles, at most 65535 (the grid's y limit). One planner for every direct kernel; each kernel
// says how many of its blocks fit on one SM. Plain C++: the tests check it on the CPU.
#pragma once

#include <algorithm>
#include <cstddef>

namespace grove::gpu {

struct JSplit {
    int splits = 1;   // blocks along y
    int chunk = 0;    // j-particles per split, a multiple of the tile
    int i_blocks = 0; // blocks along x
};

// num_targets i-particles, targets_per_block per block; num_sources j-particles in tiles of
// `tile`; forced > 0 asks for that many splits (tests), else the device's sm_count *
// blocks_per_sm resident blocks are filled.
inline JSplit plan_j_split(std::size_t num_targets, std::size_t targets_per_block, std::size_t num_sources,
                           std::size_t tile, int sm_count, int blocks_per_sm, int forced)
{
    auto ceil_div = [](std::size_t a, std::size_t b) { return (a + b - 1) / b; };
    JSplit p;
    const std::size_t i_blocks = std::max<std::size_t>(1, ceil_div(num_targets, targets_per_block));
    const std::size_t max_splits = std::max<std::size_t>(1, ceil_div(num_sources, tile));
    std::size_t want = forced > 0 ? static_cast<std::size_t>(forced)
                                  : ceil_div(static_cast<std::size_t>(sm_count) * blocks_per_sm, i_blocks);
    want = std::clamp<std::size_t>(want, 1, std::min<std::size_t>(max_splits, 65535));
    const std::size_t chunk = std::max<std::size_t>(1, ceil_div(ceil_div(num_sources, want), tile)) * tile;
    p.splits = static_cast<int>(std::max<std::size_t>(1, ceil_div(num_sources, chunk)));
    p.chunk = static_cast<int>(chunk);
    p.i_blocks = static_cast<int>(i_blocks);
    return p;
}

} // namespace grove::gpu
