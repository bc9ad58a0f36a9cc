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

// The calling thread's current device (0 where none can be told).
int current_cuda_device();

// `device` current while the scope lives (select_cuda_device: it must exist), then the device
// that was current before; -1 changes nothing. Engines that name their device (direct-gpu, which
// several GPUs or a rank's error sample make beside a tree) thus hand the thread back as they
// found it to engines that work on the current device (tree-gpu, hermite-gpu): their streams
// and buffers live there, and their next call would otherwise run on the other device.
class DeviceScope {
  public:
    explicit DeviceScope(int device);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

  private:
    int previous_ = -1; // -1: nothing to put back
};

// A device to make current again when this is destroyed (-1: none): the first member of an
// engine whose destructor makes its own device current, so that its buffers are freed there
// and the caller's device is current again after them.
struct DeviceToRestore {
    int device = -1;
    DeviceToRestore() = default;
    DeviceToRestore(const DeviceToRestore&) = delete;
    DeviceToRestore& operator=(const DeviceToRestore&) = delete;
    ~DeviceToRestore();
};

} // namespace grove
