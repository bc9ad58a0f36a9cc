// How a warp evaluates one group's interaction lists (the GPU tree engine, DESIGN.md section 1).
//
// Octgrav gave each group a block of ncrit threads and lost two thirds of them, because groups
// hold about a third of ncrit particles. Here a warp takes a group (up to 128 targets at a time)
// and arranges its 32 lanes as `replicas` copies of `lanes` lanes: each lane holds `per_lane`
// targets in registers, and each replica takes every replicas-th source of a tile, so a group of
// 20 targets runs as 8 replicas of 4 lanes with 5 targets each (every lane-slot useful) instead
// of 20 busy lanes out of 32. The replicas' partial sums are added with shuffles.
// The layout is chosen per group by the same function on host and device, so the host can report
// the busy fraction exactly.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"

namespace grove {

constexpr int kWarpLanes = 32;
constexpr int kMaxTargetsPerWarp = 128; // larger groups go in chunks
constexpr int kMaxPerLane = 5;          // targets a lane holds at most

struct LaneLayout {
    int targets;  // targets in this chunk (1..128)
    int per_lane; // targets per lane: 1 to kMaxPerLane
    int lanes;    // lanes per replica: ceil(targets / per_lane) <= 32
    int replicas; // 32 / lanes
};

// The layout that streams a tile of 32 sources in the fewest issued instructions: ceil(32 /
// replicas) steps, each of per_lane evaluations plus the step's own cost (the source's shared
// load, its address and the loop), which is about a third of an evaluation in the leaf kernel
// (sm_90 SASS: 14 per evaluation and 4 per step) and a quarter in the node kernel (34 and 8). The
// useful fraction of lane-slots is targets / (per_lane * steps); ties go to fewer targets per
// lane. Five targets per lane fill more of the warp for chunks of 17-20, 33-40 and 65-80 targets
// among others, which shortened the node kernel (bench/results/tree-kernels.md). Six would take
// the node kernel to 104 registers.
HOST_DEVICE inline LaneLayout choose_lane_layout(int targets)
{
    LaneLayout best{targets, 4, (targets + 3) / 4, 1};
    int best_cost = 1 << 30;
    for (int per_lane = 1; per_lane <= kMaxPerLane; ++per_lane) {
        const int lanes = (targets + per_lane - 1) / per_lane;
        if (lanes > kWarpLanes) continue;
        const int replicas = kWarpLanes / lanes;
        const int cost = (3 * per_lane + 1) * ((kWarpLanes + replicas - 1) / replicas);
        if (cost < best_cost) {
            best_cost = cost;
            best = LaneLayout{targets, per_lane, lanes, replicas};
        }
    }
    return best;
}

// Useful pair evaluations and lane-slots spent when a warp with this layout streams `sources`
// sources in tiles of 32: per tile of c sources each replica runs ceil(c / replicas) steps of
// per_lane evaluations on all 32 lanes.
struct LaneWork {
    double useful = 0, slots = 0;
};

inline LaneWork lane_work(const LaneLayout& layout, std::int64_t sources)
{
    LaneWork w;
    for (std::int64_t base = 0; base < sources; base += kWarpLanes) {
        const std::int64_t c = sources - base < kWarpLanes ? sources - base : kWarpLanes;
        w.useful += static_cast<double>(layout.targets) * static_cast<double>(c);
        w.slots += static_cast<double>(kWarpLanes * layout.per_lane) *
                   static_cast<double>((c + layout.replicas - 1) / layout.replicas);
    }
    return w;
}

} // namespace grove
