#include "gpu/device_lets.cuh"

#include <cfloat>
#include <cstring>
#include <stdexcept>

#include <cub/device/device_scan.cuh>

#include "gpu/cuda_check.cuh"
#include "tree/float_tree.hpp"
#include "tree/groups.hpp"
#include "tree/mac.hpp"

namespace grove {

namespace {

constexpr int kBlock = 256;

// Boxes a domain is described by (domain_boxes): each LET cell is tested against the tree of
// them, a few box tests a cell on the GPU.
constexpr int kDomainBoxes = 1024;

unsigned blocks_for(std::size_t n)
{
    return static_cast<unsigned>(gpu::ceil_div(std::max<std::size_t>(n, 1), kBlock));
}

// Each box's particles' smallest and largest coordinates (lo x, y, z, hi x, y, z), a block a box:
// min and max are exact in any order, so they are the host's.
__global__ void box_bounds_kernel(const ParticleRange* ranges, const Vec4<double>* p, double* bounds)
{
    __shared__ double v[6][kBlock];
    const ParticleRange r = ranges[blockIdx.x];
    double lo[3] = {DBL_MAX, DBL_MAX, DBL_MAX}, hi[3] = {-DBL_MAX, -DBL_MAX, -DBL_MAX};
    for (int i = r.begin + static_cast<int>(threadIdx.x); i < r.end; i += kBlock) {
        const Vec4<double> x = p[i];
        const double c[3] = {x.x, x.y, x.z};
        for (int d = 0; d < 3; ++d) {
            lo[d] = fmin(lo[d], c[d]);
            hi[d] = fmax(hi[d], c[d]);
        }
    }
    for (int d = 0; d < 3; ++d) {
        v[d][threadIdx.x] = lo[d];
        v[3 + d][threadIdx.x] = hi[d];
    }
    __syncthreads();
    for (int half = kBlock / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            for (int d = 0; d < 3; ++d) {
                v[d][threadIdx.x] = fmin(v[d][threadIdx.x], v[d][threadIdx.x + half]);
                v[3 + d][threadIdx.x] = fmax(v[3 + d][threadIdx.x], v[3 + d][threadIdx.x + half]);
            }
        __syncthreads();
    }
    if (threadIdx.x < 6) bounds[6 * blockIdx.x + threadIdx.x] = v[threadIdx.x][0];
}

// Whether any box opens node i; a node not opened covers its subtree (cover[] counts, after its
// scan, the unopened ancestors of each node: the LET takes the nodes that have none).
__global__ void let_open_kernel(DeviceLetSource s, const DomainBox* boxes, int count, double theta, double alpha,
                                bool relative, int* opened, int* cover)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= s.nodes) return;
    const double r_rel2 = relative ? relative_radius2(s.size[i], s.com_mass[i].w, alpha) : 0.0;
    const double r_open2 = opening_radius2(s.size[i], s.com_offset[i], theta);
    const bool open = must_open_for(boxes, count, s.com_mass[i], r_open2, r_rel2);
    opened[i] = open;
    const int end = s.next[i];
    if (!open && end > i + 1) {
        atomicAdd(&cover[i + 1], 1);
        atomicAdd(&cover[end], -1);
    }
}

// Before their scans: 1 for a node the LET takes, and the particles it takes with it.
__global__ void let_count_kernel(DeviceLetSource s, const int* opened, const int* cover, int* node_index,
                                 int* particle_first)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > s.nodes) return;
    if (i == s.nodes) { // the scans' totals
        node_index[i] = 0;
        particle_first[i] = 0;
        return;
    }
    const bool taken = cover[i] == 0;
    node_index[i] = taken;
    particle_first[i] = taken && opened[i] && s.is_leaf[i] ? s.range[i].end - s.range[i].begin : 0;
}

// A node as make_let writes it: opened, as it is; else a terminal cell (a leaf of no particles, of
// size 0); its skip index the LET's index of the first node it takes after the subtree.
__global__ void let_write_nodes_kernel(DeviceLetSource s, const int* opened, const int* cover, const int* node_index,
                                       const int* particle_first, CompactLetNode* out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= s.nodes || cover[i] != 0) return;
    const bool open = opened[i];
    const Vec4<double> com = s.com_mass[i];
    const Quadrupole<double> q = s.quad[i];
    CompactLetNode c;
    c.com[0] = com.x;
    c.com[1] = com.y;
    c.com[2] = com.z;
    c.mass = static_cast<float>(com.w);
    c.quad[0] = static_cast<float>(q.xx);
    c.quad[1] = static_cast<float>(q.xy);
    c.quad[2] = static_cast<float>(q.xz);
    c.quad[3] = static_cast<float>(q.yy);
    c.quad[4] = static_cast<float>(q.yz);
    c.quad[5] = static_cast<float>(q.trace);
    c.size = open ? static_cast<float>(s.size[i]) : 0.0f;
    c.com_offset = open ? static_cast<float>(s.com_offset[i]) : 0.0f;
    c.next = node_index[s.next[i]];
    const int count = s.range[i].end - s.range[i].begin;
    const bool leaf = s.is_leaf[i];
    c.first = open && leaf && count > 0 ? particle_first[i] : 0;
    c.leaf_count = open ? (leaf ? count : -1) : 0;
    out[node_index[i]] = c;
}

// The particles of each opened leaf the LET takes, in float about the receiver's centre.
__global__ void let_write_particles_kernel(DeviceLetSource s, const int* opened, const int* cover,
                                           const int* particle_first, double ox, double oy, double oz, float* out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= s.nodes || cover[i] != 0 || !opened[i] || !s.is_leaf[i]) return;
    const ParticleRange r = s.range[i];
    for (int p = r.begin; p < r.end; ++p) {
        const Vec4<double> x = s.particles[p];
        float* to = out + 4 * static_cast<std::size_t>(particle_first[i] + p - r.begin);
        to[0] = static_cast<float>(x.x - ox);
        to[1] = static_cast<float>(x.y - oy);
        to[2] = static_cast<float>(x.z - oz);
        to[3] = static_cast<float>(x.w);
    }
}

// A received LET's nodes into the float tree, as append_let and pack_float_node make them.
// Each node checked as the host checks a received LET (let_node_fault), the worst fault kept.
__global__ void let_append_nodes_kernel(int count, int particles_in_let, const CompactLetNode* in, int node_base,
                                        int particle_base, const Vec4<double>* root_com, TreeArrays<float, Pointer> t,
                                        int* fault)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const CompactLetNode c = in[k];
    const int bad = let_node_fault(k, count, particles_in_let, c.next, c.leaf_count >= 0, c.first,
                                   c.leaf_count > 0 ? c.leaf_count : 0);
    if (bad != kLetSound) atomicMax(fault, bad);
    const int i = node_base + k;
    t.next[i] = node_base + c.next;
    t.is_leaf[i] = c.leaf_count >= 0;
    const int particles = c.leaf_count > 0 ? c.leaf_count : 0;
    t.range[i] = {particle_base + c.first, particle_base + c.first + particles};
    const Vec4<double> com{c.com[0], c.com[1], c.com[2], c.mass};
    const Quadrupole<double> q{c.quad[0], c.quad[1], c.quad[2], c.quad[3], c.quad[4], c.quad[5]};
    pack_float_node(float_origin(*root_com), com, q, c.size, c.com_offset, t.com_mass[i], t.quad[i], t.size[i],
                    t.com_offset[i]);
}

// Its particles: their double positions (the LET's origin plus their float offsets), about the
// tree's origin in float.
__global__ void let_append_particles_kernel(int count, const float* in, double ox, double oy, double oz,
                                            int particle_base, const Vec4<double>* root_com, Vec4<float>* out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const float* p = in + 4 * static_cast<std::size_t>(k);
    const Vec4<double> x{ox + p[0], oy + p[1], oz + p[2], p[3]};
    out[particle_base + k] = float_origin(*root_com).shifted(x);
}

template <class T>
void scan_in_place(T* data, int count, bool inclusive, gpu::DeviceBuffer<unsigned char>& temp, cudaStream_t stream)
{
    std::size_t bytes = 0;
    if (inclusive)
        CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, data, data, count, stream));
    else
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, data, data, count, stream));
    temp.reserve(bytes, "LET scan workspace");
    if (inclusive)
        CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data(), bytes, data, data, count, stream));
    else
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, data, data, count, stream));
}

} // namespace

std::vector<DomainBox> DeviceLets::boxes(const Octree& structure, const Vec4<double>* particles, cudaStream_t stream)
{
    std::vector<ParticleRange> ranges;
    std::vector<DomainBox> boxes = domain_box_cells(structure, kDomainBoxes, ranges);
    if (boxes.empty()) return boxes;
    const std::size_t count = boxes.size();
    ranges_.reserve(count, "domain box ranges");
    bounds_.reserve(6 * count, "domain box bounds");
    CUDA_CHECK(
        cudaMemcpyAsync(ranges_.data(), ranges.data(), count * sizeof(ParticleRange), cudaMemcpyHostToDevice, stream));
    box_bounds_kernel<<<static_cast<unsigned>(count), kBlock, 0, stream>>>(ranges_.data(), particles, bounds_.data());
    gpu::check_launch("box_bounds_kernel", stream);
    std::vector<double> bounds(6 * count);
    CUDA_CHECK(
        cudaMemcpyAsync(bounds.data(), bounds_.data(), bounds.size() * sizeof(double), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t k = 0; k < count; ++k)
        if (boxes[k].bounds_particles) boxes[k].box = box_of_bounds(&bounds[6 * k], &bounds[6 * k + 3], ranges[k]);
    finish_domain_boxes(boxes);
    return boxes;
}

std::size_t DeviceLets::make(const DeviceLetSource& source, const std::vector<DomainBox>& boxes,
                             const OpeningCriterion& criterion, const Vec4<double>& origin,
                             gpu::PinnedBuffer<char>& out, cudaStream_t stream)
{
    LetHeader header;
    return make(
        source, boxes, criterion, origin,
        [&](std::size_t bytes) {
            out.reserve(bytes, "LETs made");
            return out.data();
        },
        header, stream);
}

std::size_t DeviceLets::make(const DeviceLetSource& source, const std::vector<DomainBox>& boxes,
                             const OpeningCriterion& criterion, const Vec4<double>& origin, const Room& room,
                             LetHeader& header, cudaStream_t stream)
{
    const bool relative = criterion.kind == MacKind::relative;
    if (!relative && !(criterion.theta > 0)) throw std::invalid_argument("make_let: theta must be > 0");
    if (relative && !(criterion.alpha > 0)) throw std::invalid_argument("make_let: alpha must be > 0");
    // The header from pinned memory, so that its copy may go anywhere and wait on the stream.
    h_header_.reserve(1, "LET header");
    const auto write_header = [&](char* out) {
        h_header_[0] = header;
        CUDA_CHECK(cudaMemcpyAsync(out, h_header_.data(), sizeof header, cudaMemcpyDefault, stream));
    };
    if (boxes.empty() || source.nodes == 0) { // an empty LET, as make_let writes one
        header = {0, 0, 1, 0, {origin.x, origin.y, origin.z}};
        write_header(room(sizeof header));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return sizeof header;
    }
    const auto m = static_cast<std::size_t>(source.nodes);
    boxes_.reserve(boxes.size(), "domain boxes");
    opened_.reserve(m, "LET opened cells");
    cover_.reserve(m + 1, "LET covered cells");
    node_index_.reserve(m + 1, "LET node indices");
    particle_first_.reserve(m + 1, "LET particle indices");
    h_totals_.reserve(2, "LET totals");
    CUDA_CHECK(
        cudaMemcpyAsync(boxes_.data(), boxes.data(), boxes.size() * sizeof(DomainBox), cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemsetAsync(cover_.data(), 0, (m + 1) * sizeof(int), stream));
    let_open_kernel<<<blocks_for(m), kBlock, 0, stream>>>(source, boxes_.data(), static_cast<int>(boxes.size()),
                                                          criterion.geometric_theta(), criterion.alpha, relative,
                                                          opened_.data(), cover_.data());
    gpu::check_launch("let_open_kernel", stream);
    scan_in_place(cover_.data(), source.nodes + 1, true, scan_temp_, stream);
    let_count_kernel<<<blocks_for(m + 1), kBlock, 0, stream>>>(source, opened_.data(), cover_.data(),
                                                               node_index_.data(), particle_first_.data());
    gpu::check_launch("let_count_kernel", stream);
    scan_in_place(node_index_.data(), source.nodes + 1, false, scan_temp_, stream);
    scan_in_place(particle_first_.data(), source.nodes + 1, false, scan_temp_, stream);
    CUDA_CHECK(cudaMemcpyAsync(h_totals_.data(), node_index_.data() + m, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(
        cudaMemcpyAsync(h_totals_.data() + 1, particle_first_.data() + m, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto nodes = static_cast<std::size_t>(h_totals_[0]), particles = static_cast<std::size_t>(h_totals_[1]);
    nodes_.reserve(nodes, "LET nodes");
    particles_.reserve(4 * std::max<std::size_t>(particles, 1), "LET particles");
    let_write_nodes_kernel<<<blocks_for(m), kBlock, 0, stream>>>(
        source, opened_.data(), cover_.data(), node_index_.data(), particle_first_.data(), nodes_.data());
    gpu::check_launch("let_write_nodes_kernel", stream);
    let_write_particles_kernel<<<blocks_for(m), kBlock, 0, stream>>>(
        source, opened_.data(), cover_.data(), particle_first_.data(), origin.x, origin.y, origin.z, particles_.data());
    gpu::check_launch("let_write_particles_kernel", stream);
    const LetLayout layout = let_layout(nodes, particles, true, false);
    header = {nodes, particles, 1, 0, {origin.x, origin.y, origin.z}};
    char* out = room(layout.end);
    write_header(out);
    CUDA_CHECK(
        cudaMemcpyAsync(out + layout.nodes, nodes_.data(), nodes * sizeof(CompactLetNode), cudaMemcpyDefault, stream));
    CUDA_CHECK(cudaMemcpyAsync(out + layout.particles, particles_.data(), 4 * particles * sizeof(float),
                               cudaMemcpyDefault, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return layout.end;
}

void DeviceLets::append(const std::vector<LetBytes>& lets, const TreeArrays<float, Pointer>& tree, int nodes,
                        int particles, const Vec4<double>* root_com, cudaStream_t stream)
{
    std::size_t bytes = 0;
    for (const LetBytes& let : lets) {
        if (!let.format.compact || let.by_type)
            throw std::logic_error("tree-gpu: the device appends compact LETs without softening by type");
        bytes += let_layout(let.nodes, let.particles, true, false).end;
    }
    if (bytes == 0) return;
    CUDA_CHECK(cudaStreamSynchronize(stream)); // the last append's kernels have read the staging
    staged_.reserve(bytes, "received LETs");
    fault_.reserve(1, "LET fault");
    h_totals_.reserve(2, "LET totals");
    CUDA_CHECK(cudaMemsetAsync(fault_.data(), 0, sizeof(int), stream));
    std::size_t at = 0;
    for (const LetBytes& let : lets) { // from pinned memory or from a peer's device, as UVA says
        const std::size_t size = let_layout(let.nodes, let.particles, true, false).end;
        CUDA_CHECK(cudaMemcpyAsync(staged_.data() + at, let.data, size, cudaMemcpyDefault, stream));
        at += size;
    }
    at = 0;
    for (const LetBytes& let : lets) {
        const LetLayout layout = let_layout(let.nodes, let.particles, true, false);
        const char* base = staged_.data() + at;
        let_append_nodes_kernel<<<blocks_for(let.nodes), kBlock, 0, stream>>>(
            static_cast<int>(let.nodes), static_cast<int>(let.particles),
            reinterpret_cast<const CompactLetNode*>(base + layout.nodes), nodes, particles, root_com, tree,
            fault_.data());
        gpu::check_launch("let_append_nodes_kernel", stream);
        let_append_particles_kernel<<<blocks_for(let.particles), kBlock, 0, stream>>>(
            static_cast<int>(let.particles), reinterpret_cast<const float*>(base + layout.particles),
            let.format.origin.x, let.format.origin.y, let.format.origin.z, particles, root_com, tree.particles);
        gpu::check_launch("let_append_particles_kernel", stream);
        nodes += static_cast<int>(let.nodes);
        particles += static_cast<int>(let.particles);
        at += layout.end;
    }
    CUDA_CHECK(cudaMemcpyAsync(h_totals_.data(), fault_.data(), sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (h_totals_[0] != kLetSound)
        throw std::runtime_error(std::string("received LET is malformed: ") + let_fault_text(h_totals_[0]));
}

} // namespace grove
