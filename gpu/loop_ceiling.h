// What the direct kernels' inner loops reach on this GPU when nothing else runs: no tiles to load
// from global memory, no barriers, no sums to flush, no j-split. `grove bench direct|hermite`
// print these next to the kernels' rates, so a kernel's distance from its instruction-count
// limit splits into what the loop itself cannot issue and what the kernel adds around it.
// Host-only header: includes no CUDA.
#pragma once

#include <string>
#include <vector>

namespace grove {

struct LoopCeiling {
    std::string label;
    double rate = 0; // interactions/s (FP32 multiply-adds/s for the reference stream)
};

// The float acc+pot loop with its sources in registers and with a shared-memory tile of 128 as in
// gpu/direct.cu, and a stream of independent FFMAs (what the FP32 pipes issue at best).
std::vector<LoopCeiling> measure_direct_loop_ceilings();
// The mixed acc+jerk+pot loop over a shared-memory tile of 128, as in gpu/hermite.cu.
std::vector<LoopCeiling> measure_hermite_loop_ceilings();

} // namespace grove
