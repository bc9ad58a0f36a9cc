// What the CUDA device is, for the engines' choices and the benchmark's peak figures.
// Host-only header: no CUDA types, so .cpp callers compile with the host compiler.
#pragma once

#include <string>

namespace grove {

// Number of visible CUDA devices; 0 when there is no driver or no device (never throws).
int cuda_device_count();

struct DeviceSummary {
    std::string name;
    int sm_count = 0;
    double clock_ghz = 0;      // peak SM clock the device reports
    int fp32_lanes_per_sm = 0; // 128 for sm_80 (A100 has 64) and sm_90
    // FP32 instruction limit in interactions/s for `instructions` FP32 instructions per interaction:
    // sm_count * lanes * clock / instructions (DESIGN.md section 4 uses 13).
    double interaction_limit(double instructions) const
    {
        return sm_count * fp32_lanes_per_sm * clock_ghz * 1e9 / instructions;
    }
};

DeviceSummary describe_device(int device = 0);

// Makes `device` the calling thread's CUDA device (an MPI rank's GPU); throws std::runtime_error
// naming the visible count when it does not exist.
void select_cuda_device(int device);

} // namespace grove
