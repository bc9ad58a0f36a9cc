// The order in which the list kernels' warps take the groups: largest first. The warps take
// groups from a shared counter, so the kernel ends when the last group taken ends; in Morton
// order a long list taken near the end kept a few warps busy while the rest of the SM idled.
// Largest first (Graham's longest-processing-time rule) leaves the short groups for the end.
// The order moves no sum: a group's results do not depend on which warp takes it or when.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "gpu/device_buffer.cuh"
#include "gpu/evaluate.cuh"
#include "tree/tree_arrays.hpp"

namespace grove::gpu {

class GroupOrder {
  public:
    // Sets nodes.order and leaves.order for the lists of tree's groups (queued on stream; the
    // orders live here until the next call). A group's cost: its list's length times its targets.
    void sort(const OctreeView<float>& tree, ListIndex& nodes, ListIndex& leaves, cudaStream_t stream);

  private:
    DeviceBuffer<std::uint32_t> keys_in_, keys_out_;
    DeviceBuffer<std::int32_t> index_, order_; // order_: the node lists' order, then the leaf lists'
    DeviceBuffer<unsigned char> temp_;
};

} // namespace grove::gpu
