// The j-split planner every direct kernel launches with (plain C++, so CI checks it).
#include <cmath>

#include <catch2/catch.hpp>

#include "gpu/j_split.hpp"
#include "gpu/kernel_costs.hpp"

using grove::kDirectDoubleCost;
using grove::kDirectFloatCost;
using grove::kDirectMixedCost;
using grove::KernelCost;
using grove::gpu::plan_j_split;

TEST_CASE("j-splits fill the device, cover every source in whole tiles, and obey forced values", "[gpu-plan]")
{
    SECTION("many targets: one split")
    {
        const auto p = plan_j_split(1 << 20, 256, 1 << 20, 128, 132, 8, 0);
        CHECK(p.splits == 1);
        CHECK(p.i_blocks == 4096);
        CHECK(p.chunk >= (1 << 20));
    }
    SECTION("few targets: enough splits for sm_count x blocks_per_sm blocks")
    {
        const auto p = plan_j_split(64, 256, 1 << 20, 128, 132, 8, 0);
        CHECK(p.i_blocks == 1);
        // The chunk is rounded up to whole tiles, which may cost a few splits.
        CHECK(p.splits * p.i_blocks > 132 * 8 * 3 / 4);
        CHECK(p.chunk % 128 == 0);
        CHECK(static_cast<long long>(p.splits) * p.chunk >= (1 << 20));
        CHECK(static_cast<long long>(p.splits - 1) * p.chunk < (1 << 20)); // no empty split
    }
    SECTION("the kernel's blocks per SM decide the split count")
    {
        const auto eight = plan_j_split(64, 256, 1 << 20, 128, 132, 8, 0);
        const auto four = plan_j_split(64, 256, 1 << 20, 128, 132, 4, 0);
        CHECK(four.splits < eight.splits);
    }
    SECTION("never more splits than tiles, never fewer than one")
    {
        CHECK(plan_j_split(1, 256, 100, 128, 132, 8, 0).splits == 1);
        CHECK(plan_j_split(1, 256, 1000, 128, 132, 8, 0).splits == 8);
        CHECK(plan_j_split(1, 256, 0, 128, 132, 8, 0).splits == 1);
    }
    SECTION("many targets: splits that fill whole waves")
    {
        // 2^20 float targets, 512 per block, on 7 blocks per SM: one split is 2048 blocks for
        // 924 places, three waves for 2.2 waves of work.
        const auto p = plan_j_split(1 << 20, 512, 1 << 20, 128, 132, 7, 0);
        const double blocks = static_cast<double>(p.i_blocks) * p.splits;
        const double waves = std::ceil(blocks / 924);
        INFO("splits " << p.splits << ", " << blocks / 924 << " waves of work in " << waves);
        CHECK(p.splits > 1);
        CHECK(blocks / 924 / waves > 0.95);
        CHECK(static_cast<long long>(p.splits) * p.chunk >= (1 << 20));
        // Where whole waves come with one split (8 blocks per SM: 1.94 waves), one it stays.
        CHECK(plan_j_split(1 << 20, 512, 1 << 20, 128, 132, 8, 0).splits == 1);
        // The partial sums' budget caps the splits.
        CHECK(plan_j_split(1 << 20, 512, 1 << 20, 128, 132, 7, 0, std::size_t(1) << 20).splits == 1);
    }
    SECTION("few targets: never a second wave of a few blocks")
    {
        for (int places_per_sm : {4, 7, 8})
            for (std::size_t targets : {64, 300, 1000, 1024, 2500}) {
                const auto p = plan_j_split(targets, 256, 1 << 20, 128, 132, places_per_sm, 0);
                const double blocks = static_cast<double>(p.i_blocks) * p.splits;
                const double places = 132.0 * places_per_sm;
                INFO(targets << " targets, " << places_per_sm << " blocks per SM: " << blocks << " blocks");
                CHECK(blocks / places / std::ceil(blocks / places) > 0.9);
                CHECK(static_cast<long long>(p.splits) * p.chunk >= (1 << 20));
            }
    }
    SECTION("forced splits are taken as far as the tiles allow")
    {
        CHECK(plan_j_split(1 << 20, 256, 1 << 20, 128, 132, 8, 7).splits == 7);
        CHECK(plan_j_split(1 << 20, 256, 256, 128, 132, 8, 7).splits == 2);
    }
}

TEST_CASE("a kernel's rate limit is its tightest pipe or issue bound", "[gpu-plan]")
{
    // An H100 SXM: 132 SMs at 1.98 GHz, 128 FP32 and 64 FP64 lanes per SM.
    const double per_sm_clock = 132 * 1.98e9;
    // The float kernel issues 14.4 instructions per interaction, 13 of them FP32: issue-bound.
    CHECK(kDirectFloatCost.limit(132, 1.98, 128, 64) == Approx(per_sm_clock * 128 / 14.4));
    // The double kernel's 18 FP64 instructions on 64 lanes bind before its 20.4 issued ones.
    CHECK(kDirectDoubleCost.limit(132, 1.98, 128, 64) == Approx(per_sm_clock * 64 / 18.0));
    // The mixed kernel (float pairs) issues 20.7 instructions: issue-bound too.
    CHECK(kDirectMixedCost.limit(132, 1.98, 128, 64) == Approx(per_sm_clock * 128 / 20.7));
    // Three conversions of double differences to float bind at 16 per clock (the mixed kernel's
    // earlier form); on a part with 2 FP64 lanes per SM its FP64 instructions bind instead.
    const KernelCost converting{"double differences", "", 10.2, 3.8, 1.0, 3.0, 0.2};
    CHECK(converting.limit(132, 1.98, 128, 64) == Approx(per_sm_clock * 16 / 3.0));
    CHECK(converting.limit(132, 1.98, 128, 2) == Approx(per_sm_clock * 2 / 3.8));
    // A kernel of nothing but reciprocal roots runs at the special-function units' 16 per clock.
    const KernelCost roots{"rsqrt", "", 0, 0, 1, 0, 0};
    CHECK(roots.limit(132, 1.98, 128, 64) == Approx(per_sm_clock * 16));
}
