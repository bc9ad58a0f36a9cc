// The kernels of hierarchical time steps on a particle store on the device (tree_resident_bins.cu,
// docs/block-timesteps.md): the kicks and new bins of the due particles with the particles per
// bin, and the groups that hold a due particle (the drift is resident_tree_kernels.cuh's). The
// arithmetic is integrators/block_leapfrog.cpp's, operation for operation. Private to gpu/.
#pragma once

#include <cstdint>

#include "core/time_bins.hpp"
#include "gpu/resident_tree_kernels.cuh"

namespace grove {

namespace {

// What a bin kernel reads of the rule (core/device_time_bins.hpp), by value.
struct DeviceBinRule {
    double eta, dt_max, G;
    double eps_of_type[kNumParticleTypes];
    double eps;     // where the particles have no types
    double eta_dyn; // > 0: the dynamical time caps the step, by `profile`
    EnclosedMassProfile profile;
};

// |a| as the host's Eigen norm computes it: products and sums rounded one by one (no fused
// multiply-add), so that a bin's boundary falls where the host's does.
__device__ inline double magnitude(const Vec4<double>& a)
{
    return ::sqrt(add_rn(add_rn(mul_rn(a.x, a.x), mul_rn(a.y, a.y)), mul_rn(a.z, a.z)));
}

// The particles due at `tick`: with `close`, the closing half-kick of their step; with `open`,
// their new bins (every bin free at tick 0 when not closing: the start of a dt_max) and the
// opening half-kick of the new step. Then every particle's bin is counted into count[kMaxBin + 1].
__global__ void bins_kernel(int n, Tick tick, bool close, bool open, DeviceBinRule rule, const float4* sums,
                            const std::uint8_t* types, const std::uint32_t* caller, const Vec4<double>* body,
                            std::uint8_t* bins, Vec4<double>* vel, int* flags, unsigned long long* count)
{
    __shared__ unsigned int local[kMaxBin + 1];
    for (int b = threadIdx.x; b <= kMaxBin; b += blockDim.x) local[b] = 0;
    __syncthreads();
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) {
        int bin = close ? bins[k] : kMaxBin;
        if (bin_due(bin, tick)) {
            const Vec4<double> a = acceleration_of(sums[k], rule.G);
            Vec4<double> v = vel[k];
            if (close) {
                const double h = ldexp(rule.dt_max, -bin - 1);
                v = {kicked(v.x, a.x, h), kicked(v.y, a.y, h), kicked(v.z, a.z, h), 0};
            }
            if (open) {
                const double eps = types ? rule.eps_of_type[types[caller[k]]] : rule.eps;
                double wanted = gadget_time_step(rule.eta, eps, magnitude(a));
                if (rule.eta_dyn > 0) {
                    const Vec4<double> x = body[k];
                    wanted = capped_step(wanted,
                                         dynamical_time_step(rule.eta_dyn, rule.G, rule.profile, x.x, x.y, x.z, eps));
                }
                bin = next_bin(bin, bin_for_step(wanted, rule.dt_max), tick);
                bins[k] = static_cast<std::uint8_t>(bin);
                const double h = ldexp(rule.dt_max, -bin - 1);
                v = {kicked(v.x, a.x, h), kicked(v.y, a.y, h), kicked(v.z, a.z, h), 0};
            }
            vel[k] = v;
            if (!finite3(v.x, v.y, v.z)) atomicAdd(flags, 1);
        }
        atomicAdd(&local[bin], 1u);
    }
    __syncthreads();
    for (int b = threadIdx.x; b <= kMaxBin; b += blockDim.x)
        if (local[b] > 0) atomicAdd(&count[b], static_cast<unsigned long long>(local[b]));
}

// The walk's candidate groups: each of the tree's groups cut into `per_group` pieces of `piece`
// particles (the last piece takes the rest); due[s] is 1 for piece s when it holds a particle due
// at `tick`.
__device__ inline ParticleRange group_piece(const ParticleRange* ranges, int s, int per_group, int piece)
{
    const ParticleRange r = ranges[s / per_group];
    const int c = s % per_group;
    const long long begin = r.begin + static_cast<long long>(c) * piece;
    if (begin >= r.end) return {r.end, r.end};
    const long long end = c == per_group - 1 ? r.end : min(static_cast<long long>(r.end), begin + piece);
    return {static_cast<std::int32_t>(begin), static_cast<std::int32_t>(end)};
}

__global__ void due_pieces_kernel(int pieces, const ParticleRange* ranges, int per_group, int piece,
                                  const std::uint8_t* bins, Tick tick, std::uint8_t* due)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= pieces) return;
    const ParticleRange r = group_piece(ranges, s, per_group, piece);
    std::uint8_t any = 0;
    for (int i = r.begin; i < r.end && !any; ++i) any = bin_due(bins[i], tick);
    due[s] = any;
}

// The relative criterion's scale of each walked group or piece (ranges[0 .. count)): from the
// smallest |a| / G of its due particles, whose last forces are those of their last due tick.
__global__ void due_scales_kernel(const int* count, const ParticleRange* ranges, const std::uint8_t* bins, Tick tick,
                                  const float4* sums, float* mac_scale)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < *count)
        mac_scale[k] = range_mac_scale(ranges[k], [&](int i) { return bin_due(bins[i], tick) ? sums + i : nullptr; });
}

// The ranges of the pieces selected (selected[k] for k < count).
__global__ void piece_ranges_kernel(const int* count, const int* selected, const ParticleRange* ranges, int per_group,
                                    int piece, ParticleRange* out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < *count) out[k] = group_piece(ranges, selected[k], per_group, piece);
}

} // namespace

} // namespace grove
