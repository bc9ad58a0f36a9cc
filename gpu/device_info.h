// What the CUDA device is, for the engines' choices and the benchmark's peak figures.
// Host-only header: no CUDA types, so .cpp callers compile with the host compiler.
#pragma once

#include <cstdint>
#include <string>

#include "gpu/kernel_costs.hpp"

namespace grove {

// Number of visible CUDA devices; 0 when there is no driver or no device (never throws).
int cuda_device_count();

struct DeviceSummary {
    std::string name;
    int sm_count = 0;
    double clock_ghz = 0;      // peak SM clock the device reports
    int fp32_lanes_per_sm = 0; // 128 for sm_90 (A100 has 64)
    int fp64_lanes_per_sm = 0; // 64 for sm_90 (A100 32; consumer parts 2)
    // The most interactions per second a kernel with these instruction counts can compute here.
    double limit(const KernelCost& cost) const
    {
        return cost.limit(sm_count, clock_ghz, fp32_lanes_per_sm, fp64_lanes_per_sm);
    }
};

DeviceSummary describe_device(int device = 0);

// Bytes free on `device` (-1: the current one) now; 0 where there is none.
std::uint64_t cuda_device_free_memory(int device);

// Makes `device` the calling thread's CUDA device (an MPI rank's GPU); throws std::runtime_error
// naming the visible count when it does not exist.
void select_cuda_device(int device);

} // namespace grove
