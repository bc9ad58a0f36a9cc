// Owning device and pinned host buffers that grow only when a call needs more, so that repeated
// force evaluations allocate nothing. They grow with 1/8 headroom: in a run the tree's node count
// and list lengths drift up and down by a little every step, and an exact fit reallocated (a
// device-wide cudaFree and a slow cudaMallocHost) on every step that grew. An allocation failure
// becomes an error that names what the memory was for and how much was asked, never a crash.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>
#include <utility>

#include "gpu/cuda_check.cuh"

namespace grove::gpu {

// Allocates n elements plus 1/8 through alloc (cudaMalloc or cudaMallocHost), or exactly n when
// the headroom does not fit (the largest problems may still); returns the capacity obtained, 0 if
// neither fits (with CUDA's error state cleared).
template <class T, class Alloc> std::size_t allocate_with_headroom(T*& data, std::size_t n, Alloc alloc)
{
    for (const std::size_t want : {n + n / 8, n}) {
        if (alloc(reinterpret_cast<void**>(&data), want * sizeof(T)) == cudaSuccess) return want;
        cudaGetLastError();
        data = nullptr;
    }
    return 0;
}

// Bytes that every DeviceBuffer of this process holds: the engines' device footprint, which the
// runs report per particle and the tree engine's list budget counts against its limit.
inline std::atomic<std::size_t>& device_bytes_held()
{
    static std::atomic<std::size_t> bytes{0};
    return bytes;
}

template <class T> class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer() { release(); }

    // Ensures room for n elements; old contents are not kept. `what` names the buffer in errors.
    void reserve(std::size_t n, const char* what)
    {
        if (n <= capacity_) return;
        release();
        capacity_ = allocate_with_headroom(data_, n, [](void** p, std::size_t bytes) { return cudaMalloc(p, bytes); });
        device_bytes_held() += capacity_ * sizeof(T);
        if (capacity_ == 0) {
            std::size_t free_bytes = 0, total_bytes = 0;
            cudaMemGetInfo(&free_bytes, &total_bytes);
            throw std::runtime_error(std::string("out of GPU memory: ") + what + " needs " +
                                     std::to_string(n * sizeof(T) >> 20) + " MiB (" + std::to_string(n) +
                                     " elements); the device has " + std::to_string(free_bytes >> 20) +
                                     " MiB free of " + std::to_string(total_bytes >> 20) + " MiB");
        }
    }
    // Ensures room for n elements and keeps the first `keep` of them (a device-to-device copy when
    // it grows). The caller has finished the work in flight on this buffer.
    void reserve_keeping(std::size_t n, std::size_t keep, const char* what)
    {
        if (n <= capacity_) return;
        DeviceBuffer grown;
        grown.reserve(n, what);
        if (keep > 0) CUDA_CHECK(cudaMemcpy(grown.data_, data_, keep * sizeof(T), cudaMemcpyDeviceToDevice));
        std::swap(data_, grown.data_);
        std::swap(capacity_, grown.capacity_);
    }
    // Exchanges the memory of two buffers (a double buffer's halves).
    void swap(DeviceBuffer& other) noexcept
    {
        std::swap(data_, other.data_);
        std::swap(capacity_, other.capacity_);
    }
    // Gives the memory back (a buffer too large for what follows).
    void release()
    {
        cudaFree(data_);
        device_bytes_held() -= capacity_ * sizeof(T);
        data_ = nullptr;
        capacity_ = 0;
    }
    T* data() const { return data_; }
    std::size_t capacity() const { return capacity_; }
    std::size_t bytes() const { return capacity_ * sizeof(T); }

  private:
    T* data_ = nullptr;
    std::size_t capacity_ = 0;
};

template <class T> class PinnedBuffer {
  public:
    PinnedBuffer() = default;
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    ~PinnedBuffer() { cudaFreeHost(data_); }

    void reserve(std::size_t n, const char* what)
    {
        if (n <= capacity_) return;
        cudaFreeHost(data_);
        data_ = nullptr;
        capacity_ =
            allocate_with_headroom(data_, n, [](void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); });
        if (capacity_ == 0)
            throw std::runtime_error(std::string("cannot allocate ") + std::to_string(n * sizeof(T) >> 20) +
                                     " MiB of pinned host memory for " + what);
    }
    T* data() const { return data_; }
    T& operator[](std::size_t i) const { return data_[i]; }
    void release()
    {
        cudaFreeHost(data_);
        data_ = nullptr;
        capacity_ = 0;
    }

  private:
    T* data_ = nullptr;
    std::size_t capacity_ = 0;
};

} // namespace grove::gpu
