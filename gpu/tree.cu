// The GPU tree engine: upload, walk driver and the warp-per-group evaluation kernels.
//
// Evaluation: a warp takes one group (in chunks of up to 128 targets) with the lane layout of
// tree/lane_layout.hpp: targets in registers, each tile of 32 sources loaded by the warp into its
// shared-memory slice, each replica of lanes taking every replicas-th source, partial sums added
// with shuffles at the end. Node lists use the quadrupole formula, leaf lists the particle-pair
// formula, both from tree/gravity.hpp. Leaf lists are streamed 32 leaves at a time: a warp scan
// of their sizes maps each lane of a tile to one source particle, so small leaves still fill
// whole tiles. A particle's own pair contributes no force; with eps > 0 its -m/eps potential
// term is removed when the results are scattered back to caller order.
#include "gpu/tree_gpu.h"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include <cub/device/device_scan.cuh>

#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/device_info.h"
#include "gpu/tree_walk.cuh"
#include "tree/float_tree.hpp"
#include "tree/gravity.hpp"
#include "tree/lane_layout.hpp"

namespace grove {

namespace {

using gpu::ceil_div;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpsPerBlock = 4;

struct NodeTile {
    Vec4<float> com[kWarpLanes];
    Quadrupole<float> quad[kWarpLanes];
};

struct LeafTile {
    Vec4<float> source[kWarpLanes];
    int begin[kWarpLanes]; // first particle of each of the batch's leaves
    int first[kWarpLanes]; // exclusive scan of the leaves' sizes
};

// The lane's targets: slot + lanes * k, clamped into the chunk (clamped copies are computed and
// dropped, which costs nothing extra on a SIMT machine).
template <int K> struct Targets {
    float x[K], y[K], z[K];
    Accum<float> a[K];

    __device__ Targets(const Vec4<float>* particles, int first, const LaneLayout& layout, int slot)
    {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int idx = min(slot + layout.lanes * k, layout.targets - 1);
            const Vec4<float> p = particles[first + idx];
            x[k] = p.x;
            y[k] = p.y;
            z[k] = p.z;
        }
    }

    // Adds the replicas' partial sums into replica 0 and writes (or adds) its targets' results.
    __device__ void finish(const LaneLayout& layout, int replica, int slot, float4* out, bool add)
    {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            Accum<float> sum = a[k];
            for (int r = 1; r < layout.replicas; ++r) {
                const int delta = r * layout.lanes;
                sum.ax += __shfl_down_sync(kFullMask, a[k].ax, delta);
                sum.ay += __shfl_down_sync(kFullMask, a[k].ay, delta);
                sum.az += __shfl_down_sync(kFullMask, a[k].az, delta);
                sum.pot += __shfl_down_sync(kFullMask, a[k].pot, delta);
            }
            const int idx = slot + layout.lanes * k;
            if (replica == 0 && idx < layout.targets) {
                float4 v = make_float4(sum.ax, sum.ay, sum.az, sum.pot);
                if (add) {
                    const float4 old = out[idx];
                    v.x += old.x;
                    v.y += old.y;
                    v.z += old.z;
                    v.w += old.w;
                }
                out[idx] = v;
            }
        }
    }
};

template <int K>
__device__ void node_chunk(const OctreeView<float>& tree, int first, const LaneLayout& layout, const std::int32_t* list,
                           long long length, NodeTile& tile, float eps2, float4* acc)
{
    const int lane = threadIdx.x & (kWarpLanes - 1);
    const int replica = lane / layout.lanes, slot = lane - replica * layout.lanes;
    const bool active = replica < layout.replicas;
    Targets<K> t(tree.particles, first, layout, slot);
    for (long long base = 0; base < length; base += kWarpLanes) {
        const int count = static_cast<int>(min(static_cast<long long>(kWarpLanes), length - base));
        if (lane < count) {
            const std::int32_t node = list[base + lane];
            tile.com[lane] = tree.com_mass[node];
            tile.quad[lane] = tree.quad[node];
        }
        __syncwarp();
        if (active)
            for (int s = replica; s < count; s += layout.replicas) {
                const Vec4<float> c = tile.com[s];
                const Quadrupole<float> q = tile.quad[s];
#pragma unroll
                for (int k = 0; k < K; ++k)
                    t.a[k] = m2p(t.a[k], c.x - t.x[k], c.y - t.y[k], c.z - t.z[k], c.w, q, eps2);
            }
        __syncwarp();
    }
    t.finish(layout, replica, slot, acc + first, false);
}

template <int K>
__device__ void leaf_chunk(const OctreeView<float>& tree, int first, const LaneLayout& layout, const std::int32_t* list,
                           long long length, LeafTile& tile, float eps2, float4* acc)
{
    const int lane = threadIdx.x & (kWarpLanes - 1);
    const int replica = lane / layout.lanes, slot = lane - replica * layout.lanes;
    const bool active = replica < layout.replicas;
    Targets<K> t(tree.particles, first, layout, slot);
    for (long long leaf_base = 0; leaf_base < length; leaf_base += kWarpLanes) {
        const int leaves = static_cast<int>(min(static_cast<long long>(kWarpLanes), length - leaf_base));
        int begin = 0, size = 0;
        if (lane < leaves) {
            const ParticleRange r = tree.range[list[leaf_base + lane]];
            begin = r.begin;
            size = r.end - r.begin;
        }
        int inclusive = size;
#pragma unroll
        for (int d = 1; d < kWarpLanes; d <<= 1) {
            const int v = __shfl_up_sync(kFullMask, inclusive, d);
            if (lane >= d) inclusive += v;
        }
        const int total = __shfl_sync(kFullMask, inclusive, kWarpLanes - 1);
        tile.begin[lane] = begin;
        tile.first[lane] = inclusive - size;
        __syncwarp();
        for (int base = 0; base < total; base += kWarpLanes) {
            const int u = base + lane;
            if (u < total) {
                // The last leaf whose first source is <= u (leaves are never empty).
                int lo = 0, hi = leaves - 1;
                while (lo < hi) {
                    const int mid = (lo + hi + 1) >> 1;
                    if (tile.first[mid] <= u)
                        lo = mid;
                    else
                        hi = mid - 1;
                }
                tile.source[lane] = tree.particles[tile.begin[lo] + (u - tile.first[lo])];
            }
            __syncwarp();
            const int count = min(kWarpLanes, total - base);
            if (active)
                for (int s = replica; s < count; s += layout.replicas) {
                    const Vec4<float> p = tile.source[s];
#pragma unroll
                    for (int k = 0; k < K; ++k)
                        t.a[k] = p2p<true>(t.a[k], p.x - t.x[k], p.y - t.y[k], p.z - t.z[k], p.w, eps2);
                }
            __syncwarp();
        }
    }
    t.finish(layout, replica, slot, acc + first, true);
}

// One warp per group; the chunk function is node_chunk or leaf_chunk.
template <bool kNodes>
__global__ void __launch_bounds__(kWarpsPerBlock* kWarpLanes)
    evaluate_kernel(OctreeView<float> tree, const long long* offset, const std::int32_t* list, float eps2, float4* acc)
{
    __shared__ NodeTile node_tiles[kNodes ? kWarpsPerBlock : 1];
    __shared__ LeafTile leaf_tiles[kNodes ? 1 : kWarpsPerBlock];
    const int warp = threadIdx.x / kWarpLanes;
    const int g = blockIdx.x * kWarpsPerBlock + warp;
    if (g >= tree.num_groups) return; // the whole warp leaves together
    const ParticleRange range = tree.groups[g].range;
    const long long begin = offset[g], length = offset[g + 1] - begin;
    for (int first = range.begin; first < range.end; first += kMaxTargetsPerWarp) {
        const LaneLayout layout = choose_lane_layout(min(kMaxTargetsPerWarp, range.end - first));
        if constexpr (kNodes) {
            NodeTile& tile = node_tiles[warp];
            if (layout.per_lane == 1)
                node_chunk<1>(tree, first, layout, list + begin, length, tile, eps2, acc);
            else if (layout.per_lane == 2)
                node_chunk<2>(tree, first, layout, list + begin, length, tile, eps2, acc);
            else if (layout.per_lane == 3)
                node_chunk<3>(tree, first, layout, list + begin, length, tile, eps2, acc);
            else
                node_chunk<4>(tree, first, layout, list + begin, length, tile, eps2, acc);
        } else {
            LeafTile& tile = leaf_tiles[warp];
            if (layout.per_lane == 1)
                leaf_chunk<1>(tree, first, layout, list + begin, length, tile, eps2, acc);
            else if (layout.per_lane == 2)
                leaf_chunk<2>(tree, first, layout, list + begin, length, tile, eps2, acc);
            else if (layout.per_lane == 3)
                leaf_chunk<3>(tree, first, layout, list + begin, length, tile, eps2, acc);
            else
                leaf_chunk<4>(tree, first, layout, list + begin, length, tile, eps2, acc);
        }
    }
}

// Sorted results to caller order, removing each particle's own -m/eps potential term.
__global__ void scatter_kernel(int n, const std::uint32_t* order, const Vec4<float>* particles, float inv_eps,
                               const float4* sorted, float4* out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    float4 a = sorted[k];
    a.w += particles[k].w * inv_eps;
    out[order[k]] = a;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

struct TreeGpuEngine::Impl {
    TreeParams params;
    GravityParams gravity;
    cudaStream_t stream = nullptr;
    static constexpr int kEvents = 9;
    cudaEvent_t events[kEvents] = {};
    PhaseTimes times, upload_times;

    Octree tree; // compute()'s host tree, kept so that repeated builds reuse its storage
    int num_particles = 0, num_nodes = 0, num_groups = 0;
    bool uploaded = false, evaluated = false;
    long long total_nodes = 0, total_leaves = 0;

    gpu::PinnedBuffer<Vec4<float>> h_particles, h_com;
    gpu::PinnedBuffer<Quadrupole<float>> h_quad;
    gpu::PinnedBuffer<std::int32_t> h_next;
    gpu::PinnedBuffer<std::uint8_t> h_leaf;
    gpu::PinnedBuffer<ParticleRange> h_range;
    gpu::PinnedBuffer<float> h_size, h_delta;
    gpu::PinnedBuffer<Group<float>> h_groups;
    gpu::PinnedBuffer<std::uint32_t> h_order;
    gpu::PinnedBuffer<long long> h_totals;
    gpu::PinnedBuffer<float4> h_out;

    gpu::DeviceBuffer<Vec4<float>> d_particles, d_com;
    gpu::DeviceBuffer<Quadrupole<float>> d_quad;
    gpu::DeviceBuffer<std::int32_t> d_next;
    gpu::DeviceBuffer<std::uint8_t> d_leaf;
    gpu::DeviceBuffer<ParticleRange> d_range;
    gpu::DeviceBuffer<float> d_size, d_delta, d_r_open2;
    gpu::DeviceBuffer<Group<float>> d_groups;
    gpu::DeviceBuffer<std::uint32_t> d_order;
    gpu::DeviceBuffer<long long> d_node_count, d_leaf_count, d_node_offset, d_leaf_offset;
    gpu::DeviceBuffer<unsigned char> d_scan_temp;
    gpu::DeviceBuffer<std::int32_t> d_node_list, d_leaf_list;
    gpu::DeviceBuffer<float4> d_sorted, d_out;

    Impl(TreeParams p, GravityParams g) : params(p), gravity(g)
    {
        if (cuda_device_count() == 0) throw std::runtime_error("tree-gpu: no CUDA device is visible");
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        for (cudaEvent_t& e : events) CUDA_CHECK(cudaEventCreate(&e));
    }
    ~Impl()
    {
        for (cudaEvent_t e : events) cudaEventDestroy(e);
        cudaStreamDestroy(stream);
    }

    OctreeView<float> device_view() const
    {
        OctreeView<float> v;
        v.num_nodes = num_nodes;
        v.num_particles = num_particles;
        v.num_groups = num_groups;
        v.next = d_next.data();
        v.is_leaf = d_leaf.data();
        v.range = d_range.data();
        v.com_mass = d_com.data();
        v.quad = d_quad.data();
        v.r_open2 = d_r_open2.data();
        v.particles = d_particles.data();
        v.groups = d_groups.data();
        return v;
    }

    template <class T> void put(gpu::DeviceBuffer<T>& d, const gpu::PinnedBuffer<T>& h, std::size_t n)
    {
        if (n) CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), n * sizeof(T), cudaMemcpyHostToDevice, stream));
    }

    void upload(const Octree& tree)
    {
        if (tree.particles.size() > static_cast<std::size_t>(INT32_MAX / 2))
            throw std::runtime_error("tree-gpu: at most 2^30 particles");
        const auto start = Clock::now();
        num_particles = static_cast<int>(tree.particles.size());
        num_nodes = tree.num_nodes();
        num_groups = static_cast<int>(tree.groups.size());
        const auto n = static_cast<std::size_t>(num_particles), m = static_cast<std::size_t>(num_nodes),
                   g = static_cast<std::size_t>(num_groups);
        h_particles.reserve(n, "tree particles");
        h_com.reserve(m, "tree nodes");
        h_quad.reserve(m, "tree quadrupoles");
        h_next.reserve(m, "tree next indices");
        h_leaf.reserve(m, "tree leaf flags");
        h_range.reserve(m, "tree node ranges");
        h_size.reserve(m, "tree cell sizes");
        h_delta.reserve(m, "tree centre-of-mass offsets");
        h_groups.reserve(g, "tree groups");
        h_order.reserve(n, "tree order");
        pack_float_tree(tree, FloatTreeArrays{h_particles.data(), h_com.data(), h_quad.data(), h_next.data(),
                                              h_leaf.data(), h_range.data(), h_size.data(), h_delta.data(),
                                              h_groups.data(), h_order.data()});
        const double pack_seconds = seconds_since(start);

        d_particles.reserve(n, "tree particles");
        d_com.reserve(m, "tree nodes");
        d_quad.reserve(m, "tree quadrupoles");
        d_next.reserve(m, "tree next indices");
        d_leaf.reserve(m, "tree leaf flags");
        d_range.reserve(m, "tree node ranges");
        d_size.reserve(m, "tree cell sizes");
        d_delta.reserve(m, "tree centre-of-mass offsets");
        d_r_open2.reserve(m, "tree opening radii");
        d_groups.reserve(g, "tree groups");
        d_order.reserve(n, "tree order");
        CUDA_CHECK(cudaEventRecord(events[0], stream));
        put(d_particles, h_particles, n);
        put(d_com, h_com, m);
        put(d_quad, h_quad, m);
        put(d_next, h_next, m);
        put(d_leaf, h_leaf, m);
        put(d_range, h_range, m);
        put(d_size, h_size, m);
        put(d_delta, h_delta, m);
        put(d_groups, h_groups, g);
        put(d_order, h_order, n);
        CUDA_CHECK(cudaEventRecord(events[1], stream));
        CUDA_CHECK(cudaEventSynchronize(events[1]));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, events[0], events[1]));
        upload_times = {{"pack", pack_seconds}, {"upload", ms * 1e-3}};
        uploaded = true;
        evaluated = false;
    }

    void evaluate(double theta, Forces& out)
    {
        if (!uploaded) throw std::logic_error("tree-gpu: evaluate before upload");
        if (!(theta > 0)) throw std::invalid_argument("tree-gpu: theta must be > 0");
        const auto n = static_cast<std::size_t>(num_particles);
        out.acc.resize(3, static_cast<Eigen::Index>(n));
        out.pot.resize(static_cast<Eigen::Index>(n));
        times.clear();
        if (n == 0) return;
        const auto g = static_cast<std::size_t>(num_groups);
        d_node_count.reserve(g + 1, "node-list counts");
        d_leaf_count.reserve(g + 1, "leaf-list counts");
        d_node_offset.reserve(g + 1, "node-list offsets");
        d_leaf_offset.reserve(g + 1, "leaf-list offsets");
        d_sorted.reserve(n, "sorted accelerations");
        d_out.reserve(n, "accelerations");
        h_out.reserve(n, "accelerations");
        h_totals.reserve(2, "list totals");
        std::size_t scan_bytes = 0;
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, d_node_count.data(), d_node_offset.data(),
                                                 static_cast<int>(g + 1), stream));
        d_scan_temp.reserve(scan_bytes, "scan workspace");

        const OctreeView<float> view = device_view();
        CUDA_CHECK(cudaEventRecord(events[0], stream));
        gpu::launch_opening_radii(num_nodes, d_size.data(), d_delta.data(), static_cast<float>(theta), d_r_open2.data(),
                                  stream);
        CUDA_CHECK(cudaEventRecord(events[1], stream));
        gpu::launch_walk_count(view, d_node_count.data(), d_leaf_count.data(), stream);
        CUDA_CHECK(cudaEventRecord(events[2], stream));
        // The counts' extra last entry is 0, so offset[g] is the total.
        CUDA_CHECK(cudaMemsetAsync(d_node_count.data() + g, 0, sizeof(long long), stream));
        CUDA_CHECK(cudaMemsetAsync(d_leaf_count.data() + g, 0, sizeof(long long), stream));
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_scan_temp.data(), scan_bytes, d_node_count.data(),
                                                 d_node_offset.data(), static_cast<int>(g + 1), stream));
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_scan_temp.data(), scan_bytes, d_leaf_count.data(),
                                                 d_leaf_offset.data(), static_cast<int>(g + 1), stream));
        CUDA_CHECK(cudaMemcpyAsync(h_totals.data(), d_node_offset.data() + g, sizeof(long long), cudaMemcpyDeviceToHost,
                                   stream));
        CUDA_CHECK(cudaMemcpyAsync(h_totals.data() + 1, d_leaf_offset.data() + g, sizeof(long long),
                                   cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaEventRecord(events[3], stream));
        CUDA_CHECK(cudaStreamSynchronize(stream)); // list sizes decide the allocations
        total_nodes = h_totals[0];
        total_leaves = h_totals[1];
        d_node_list.reserve(static_cast<std::size_t>(std::max(total_nodes, 1LL)), "node lists");
        d_leaf_list.reserve(static_cast<std::size_t>(std::max(total_leaves, 1LL)), "leaf lists");

        CUDA_CHECK(cudaEventRecord(events[4], stream));
        gpu::launch_walk_write(view, d_node_offset.data(), d_leaf_offset.data(), d_node_list.data(), d_leaf_list.data(),
                               stream);
        CUDA_CHECK(cudaEventRecord(events[5], stream));
        const float eps2 = static_cast<float>(gravity.eps * gravity.eps);
        const auto blocks = static_cast<unsigned>(ceil_div(g, kWarpsPerBlock));
        evaluate_kernel<true><<<blocks, kWarpsPerBlock * kWarpLanes, 0, stream>>>(
            view, d_node_offset.data(), d_node_list.data(), eps2, d_sorted.data());
        gpu::check_launch("evaluate_kernel<nodes>", stream);
        CUDA_CHECK(cudaEventRecord(events[6], stream));
        evaluate_kernel<false><<<blocks, kWarpsPerBlock * kWarpLanes, 0, stream>>>(
            view, d_leaf_offset.data(), d_leaf_list.data(), eps2, d_sorted.data());
        gpu::check_launch("evaluate_kernel<leaves>", stream);
        CUDA_CHECK(cudaEventRecord(events[7], stream));
        const float inv_eps = gravity.eps > 0 ? static_cast<float>(1 / gravity.eps) : 0.f;
        scatter_kernel<<<static_cast<unsigned>(ceil_div(n, 256)), 256, 0, stream>>>(
            num_particles, d_order.data(), d_particles.data(), inv_eps, d_sorted.data(), d_out.data());
        gpu::check_launch("scatter_kernel", stream);
        CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.data(), n * sizeof(float4), cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaEventRecord(events[8], stream));
        CUDA_CHECK(cudaEventSynchronize(events[8]));

        const char* names[] = {"opening radii", "pass 1", "scan", "", "pass 2", "nodes", "leaves", "download"};
        for (int e = 0; e + 1 < kEvents; ++e) {
            if (e == 3) continue; // the host wait between the scan and pass 2
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, events[e], events[e + 1]));
            times.emplace_back(names[e], ms * 1e-3);
        }
        const auto convert_start = Clock::now();
        const double G = gravity.G;
        const auto count = static_cast<Eigen::Index>(n);
#pragma omp parallel for schedule(static)
        for (Eigen::Index i = 0; i < count; ++i) {
            const float4 a = h_out[static_cast<std::size_t>(i)];
            out.acc(0, i) = G * a.x;
            out.acc(1, i) = G * a.y;
            out.acc(2, i) = G * a.z;
            out.pot[i] = G * a.w;
        }
        times.emplace_back("convert", seconds_since(convert_start));
        evaluated = true;
    }
};

TreeGpuEngine::TreeGpuEngine(TreeParams tree, GravityParams gravity) : impl_(std::make_unique<Impl>(tree, gravity)) {}
TreeGpuEngine::~TreeGpuEngine() = default;

void TreeGpuEngine::compute(const Eigen::Matrix3Xd& pos, const Eigen::VectorXd& mass, Forces& out)
{
    const auto start = Clock::now();
    BuildTimes build;
    build_octree_into(impl_->tree, pos, mass, impl_->params, &build);
    upload(impl_->tree);
    evaluate(impl_->params.theta, out);
    PhaseTimes all = {{"keys", build.keys},
                      {"sort", build.sort},
                      {"build", build.build},
                      {"moments", build.moments},
                      {"groups", build.groups}};
    all.insert(all.end(), impl_->upload_times.begin(), impl_->upload_times.end());
    all.insert(all.end(), impl_->times.begin(), impl_->times.end());
    // Whatever the phases leave out of the call's wall time (launches, waits, opening radii on
    // the host), so that a run's timing line adds up.
    double phases = 0;
    for (const auto& [name, seconds] : all) phases += seconds;
    all.emplace_back("other", std::max(0.0, seconds_since(start) - phases));
    impl_->times = all;
}

PhaseTimes TreeGpuEngine::last_phase_times() const
{
    return impl_->times;
}

void TreeGpuEngine::upload(const Octree& tree)
{
    impl_->upload(tree);
    impl_->times = impl_->upload_times; // until the next evaluate(), the last phases are pack and upload
}

void TreeGpuEngine::evaluate(double theta, Forces& out)
{
    impl_->evaluate(theta, out);
}

InteractionLists TreeGpuEngine::download_lists() const
{
    const Impl& d = *impl_;
    if (!d.evaluated) throw std::logic_error("tree-gpu: no evaluation to report");
    InteractionLists lists;
    const auto g = static_cast<std::size_t>(d.num_groups);
    lists.node_offset.resize(g + 1);
    lists.leaf_offset.resize(g + 1);
    lists.node_list.resize(static_cast<std::size_t>(d.total_nodes));
    lists.leaf_list.resize(static_cast<std::size_t>(d.total_leaves));
    static_assert(sizeof(long long) == sizeof(std::int64_t), "offsets are 64-bit");
    CUDA_CHECK(cudaMemcpy(lists.node_offset.data(), d.d_node_offset.data(), (g + 1) * 8, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(lists.leaf_offset.data(), d.d_leaf_offset.data(), (g + 1) * 8, cudaMemcpyDeviceToHost));
    if (d.total_nodes)
        CUDA_CHECK(cudaMemcpy(lists.node_list.data(), d.d_node_list.data(), lists.node_list.size() * 4,
                              cudaMemcpyDeviceToHost));
    if (d.total_leaves)
        CUDA_CHECK(cudaMemcpy(lists.leaf_list.data(), d.d_leaf_list.data(), lists.leaf_list.size() * 4,
                              cudaMemcpyDeviceToHost));
    return lists;
}

TreeGpuStats TreeGpuEngine::statistics(const Octree& tree) const
{
    const InteractionLists lists = download_lists();
    TreeGpuStats s;
    s.lists = list_statistics(tree, lists);
    LaneWork nodes, leaves;
    for (std::size_t g = 0; g < tree.groups.size(); ++g) {
        const ParticleRange r = tree.groups[g].range;
        std::int64_t leaf_sources = 0;
        for (std::int64_t k = lists.leaf_offset[g]; k < lists.leaf_offset[g + 1]; ++k) {
            const ParticleRange lr = tree.range[static_cast<std::size_t>(lists.leaf_list[static_cast<std::size_t>(k)])];
            leaf_sources += lr.end - lr.begin;
        }
        for (int first = r.begin; first < r.end; first += kMaxTargetsPerWarp) {
            const LaneLayout layout = choose_lane_layout(std::min(kMaxTargetsPerWarp, r.end - first));
            const LaneWork wn = lane_work(layout, lists.node_offset[g + 1] - lists.node_offset[g]);
            const LaneWork wl = lane_work(layout, leaf_sources);
            nodes.useful += wn.useful;
            nodes.slots += wn.slots;
            leaves.useful += wl.useful;
            leaves.slots += wl.slots;
        }
    }
    s.busy_nodes = nodes.slots > 0 ? nodes.useful / nodes.slots : 0;
    s.busy_leaves = leaves.slots > 0 ? leaves.useful / leaves.slots : 0;
    s.busy = (nodes.slots + leaves.slots) > 0 ? (nodes.useful + leaves.useful) / (nodes.slots + leaves.slots) : 0;
    s.interactions = nodes.useful + leaves.useful;
    return s;
}

} // namespace grove
