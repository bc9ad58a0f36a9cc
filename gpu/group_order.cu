#include "gpu/group_order.cuh"

#include <algorithm>

#include <cub/device/device_radix_sort.cuh>

#include "gpu/cuda_check.cuh"

namespace grove::gpu {

namespace {

// Costs in buckets of 1/8 octave (close enough to the exact cost for ordering the work), and
// the list in the key's top bit, so that one radix sort of 9 bits orders both lists: node-list
// keys (bit 8 set) come first in descending order, each list largest first.
constexpr int kBucketsPerOctave = 8;
constexpr int kBucketBits = 8;
constexpr int kKeyBits = kBucketBits + 1;

__device__ inline std::uint32_t cost_bucket(long long length, int targets)
{
    const double cost = static_cast<double>(length) * targets;
    const int bucket = static_cast<int>(kBucketsPerOctave * log2(cost + 1.0));
    return static_cast<std::uint32_t>(min(bucket, (1 << kBucketBits) - 1));
}

// keys[g], index[g]: group g's node list; keys[groups + g], index[groups + g]: its leaf list.
__global__ void group_costs_kernel(OctreeView<float> tree, ListIndex nodes, ListIndex leaves, std::uint32_t* keys,
                                   std::int32_t* index)
{
    const int g = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
    const int groups = tree.num_groups;
    if (g >= groups) return;
    const ParticleRange r = tree.groups[g].range;
    const int targets = r.end - r.begin;
    keys[g] = (1u << kBucketBits) | cost_bucket(nodes.length(g), targets);
    keys[groups + g] = cost_bucket(leaves.length(g), targets);
    index[g] = g;
    index[groups + g] = g;
}

} // namespace

void GroupOrder::sort(const OctreeView<float>& tree, ListIndex& nodes, ListIndex& leaves, cudaStream_t stream)
{
    const int groups = tree.num_groups;
    if (groups == 0) return;
    const auto n = static_cast<std::size_t>(groups);
    keys_in_.reserve(2 * n, "group costs");
    keys_out_.reserve(2 * n, "sorted group costs");
    index_.reserve(2 * n, "group indices");
    order_.reserve(2 * n, "group order");
    constexpr int kBlock = 256;
    group_costs_kernel<<<static_cast<unsigned>(ceil_div(n, kBlock)), kBlock, 0, stream>>>(
        tree, nodes, leaves, keys_in_.data(), index_.data());
    check_launch("group_costs_kernel", stream);
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, bytes, keys_in_.data(), keys_out_.data(),
                                                         index_.data(), order_.data(), 2 * groups, 0, kKeyBits,
                                                         stream));
    temp_.reserve(bytes, "group order workspace");
    CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp_.data(), bytes, keys_in_.data(), keys_out_.data(),
                                                         index_.data(), order_.data(), 2 * groups, 0, kKeyBits,
                                                         stream));
    nodes.order = order_.data();
    leaves.order = order_.data() + n;
}

} // namespace grove::gpu
