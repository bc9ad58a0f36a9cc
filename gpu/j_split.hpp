// How a direct-summation launch splits the j-particles over blocks (kirin's and Sapporo's answer
// to few active i-particles): enough splits that the grid fills every SM in whole waves, in
// chunks of whole tiles, at most 65535 (the grid's y limit). One planner for every direct kernel;
// each kernel says how many of its blocks fit on one SM. Plain C++: the tests check it on the CPU.
#pragma once

#include <algorithm>
#include <cstddef>

namespace grove::gpu {

struct JSplit {
    int splits = 1;   // blocks along y
    int chunk = 0;    // j-particles per split, a multiple of the tile
    int i_blocks = 0; // blocks along x
};

// Splits beyond which a plan may not go for the sake of its waves: splits * num_targets partial
// sums are stored (32 to 56 bytes each), so 2^23 of them cost at most 470 MB.
constexpr std::size_t kMaxSplitPartials = std::size_t(1) << 23;

// num_targets i-particles, targets_per_block per block; num_sources j-particles in tiles of
// `tile`; forced > 0 asks for that many splits (tests). Otherwise the plan that ends soonest: a
// launch runs in waves of sm_count * blocks_per_sm blocks (the kernel's real occupancy), each
// block taking a time proportional to its chunk of sources plus a fixed part (its targets, its
// partial sums: about two tiles), so a plan costs waves * (chunk + 2 tiles). Few targets need
// many splits to fill the device at all; many targets need a few, because whole waves matter:
// with one split, 2^20 float targets made 2048 blocks for 924 places, three waves for 2.2 waves
// of work. Near ties go to fewer splits.
inline JSplit plan_j_split(std::size_t num_targets, std::size_t targets_per_block, std::size_t num_sources,
                           std::size_t tile, int sm_count, int blocks_per_sm, int forced,
                           std::size_t max_partials = kMaxSplitPartials)
{
    auto ceil_div = [](std::size_t a, std::size_t b) { return (a + b - 1) / b; };
    const std::size_t i_blocks = std::max<std::size_t>(1, ceil_div(num_targets, targets_per_block));
    const std::size_t tiles = std::max<std::size_t>(1, ceil_div(num_sources, tile));
    const std::size_t most = std::min<std::size_t>(tiles, 65535);
    const auto plan = [&](std::size_t want) {
        want = std::clamp<std::size_t>(want, 1, most);
        const std::size_t chunk = std::max<std::size_t>(1, ceil_div(ceil_div(num_sources, want), tile)) * tile;
        JSplit p;
        p.splits = static_cast<int>(std::max<std::size_t>(1, ceil_div(num_sources, chunk)));
        p.chunk = static_cast<int>(chunk);
        p.i_blocks = static_cast<int>(i_blocks);
        return p;
    };
    if (forced > 0) return plan(static_cast<std::size_t>(forced));
    const std::size_t places =
        std::max<std::size_t>(1, static_cast<std::size_t>(std::max(sm_count, 1)) * std::max(blocks_per_sm, 1));
    const std::size_t fill = ceil_div(places, i_blocks); // splits that fill every place once
    // At most twice the filling count (or 16), within the partial-sum budget, but never below
    // the filling count.
    const std::size_t budget = std::max<std::size_t>(1, max_partials / std::max<std::size_t>(num_targets, 1));
    const std::size_t last = std::min(most, std::max(fill, std::min(budget, std::max<std::size_t>(2 * fill, 16))));
    // For each number of waves the most splits that still fit in it, from the fewest waves on.
    const std::size_t fewest_waves = ceil_div(i_blocks, places);
    JSplit best = plan(1);
    double best_cost = -1;
    int last_splits = 0;
    for (std::size_t waves = fewest_waves; waves <= fewest_waves + 16; ++waves) {
        const std::size_t want = std::min(last, std::max<std::size_t>(1, waves * places / i_blocks));
        const JSplit p = plan(want);
        if (p.splits != last_splits) {
            last_splits = p.splits;
            const double used_waves =
                static_cast<double>(ceil_div(i_blocks * static_cast<std::size_t>(p.splits), places));
            const double cost = used_waves * (static_cast<double>(p.chunk) + 2.0 * static_cast<double>(tile));
            if (best_cost < 0 || cost < 0.99 * best_cost) {
                best = p;
                best_cost = cost;
            }
        }
        if (want == last) break;
    }
    return best;
}

} // namespace grove::gpu
