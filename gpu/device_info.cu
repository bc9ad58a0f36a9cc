#include "gpu/device_info.h"

#include <stdexcept>
#include <string>

#include "gpu/cuda_check.cuh"

namespace grove {

int cuda_device_count()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return count;
}

std::uint64_t cuda_device_free_memory(int device)
{
    if (cuda_device_count() == 0) return 0;
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    if (device >= 0 && device != current && cudaSetDevice(device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        cudaGetLastError();
        free_bytes = 0;
    }
    if (device >= 0 && device != current) cudaSetDevice(current);
    return free_bytes;
}

void select_cuda_device(int device)
{
    const int count = cuda_device_count();
    if (device < 0 || device >= count)
        throw std::runtime_error("CUDA device " + std::to_string(device) + " asked for, " + std::to_string(count) +
                                 " visible");
    CUDA_CHECK(cudaSetDevice(device));
}

int current_cuda_device()
{
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return device;
}

DeviceScope::DeviceScope(int device)
{
    if (device < 0) return;
    const int current = current_cuda_device();
    if (current == device) return;
    select_cuda_device(device);
    previous_ = current;
}

DeviceScope::~DeviceScope()
{
    if (previous_ >= 0) cudaSetDevice(previous_);
}

DeviceToRestore::~DeviceToRestore()
{
    if (device >= 0) cudaSetDevice(device);
}

DeviceSummary describe_device(int device)
{
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    int clock_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    DeviceSummary s;
    s.name = prop.name;
    s.sm_count = prop.multiProcessorCount;
    s.clock_ghz = clock_khz * 1e-6;
    // FP32 lanes per SM by architecture (CUDA C++ Programming Guide, arithmetic throughput table).
    s.fp32_lanes_per_sm = (prop.major == 8 && prop.minor == 0) ? 64 : 128;
    const bool datacentre = (prop.major == 9 && prop.minor == 0) || (prop.major == 8 && prop.minor == 0) ||
                            (prop.major == 7 && prop.minor == 0);
    s.fp64_lanes_per_sm = datacentre ? s.fp32_lanes_per_sm / 2 : 2;
    return s;
}

} // namespace grove
