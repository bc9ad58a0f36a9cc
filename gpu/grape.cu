// The GRAPE engine's kernels and launcher; see grape_gpu.h.
#include "gpu/grape_gpu.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/grape_engine.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/device_buffer.cuh"
#include "gpu/device_info.h"
#include "gpu/grape_kernels.cuh"
#include "gpu/j_split.hpp"
#include "gpu/occupancy.cuh"
#include "gpu/split_reduce.cuh"
#include "tree/gravity.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

struct GrapeGpuEngine::Impl {
    Precision precision;
    int device = -1; // -1: whichever is current
    int sm_count = 0;
    cudaStream_t stream = nullptr;
    // j-particles set since the last upload are staged in h_packed, 5 D4 each (see scatter_kernel),
    // straight from set(): the device holds the only whole copy of the j-memory.
    std::size_t slots = 0;
    std::size_t staged = 0;
    std::vector<std::int32_t> staged_at; // per slot: its place in h_packed, -1 if not staged
    std::int64_t max_j_name = -1;        // the largest name ever stored (the fast kernel takes 31 bits)
    bool upload_in_flight = false;       // h_packed may still be read by the device
    double predicted_t = 0;
    std::size_t predicted_n = 0;
    bool predicted = false;
    gpu::DeviceBuffer<D4> d_xm, d_vt, d_a2, d_j6, d_k18, d_xp, d_vp, d_packed, d_i;
    gpu::DeviceBuffer<long long> d_name, d_entries;
    gpu::DeviceBuffer<float4> d_hi, d_lo, d_vel;
    gpu::DeviceBuffer<int> d_count, d_coincident;
    gpu::DeviceBuffer<Partial> d_partial, d_out;
    gpu::PinnedBuffer<D4> h_packed, h_i;
    gpu::PinnedBuffer<long long> h_entries;
    gpu::PinnedBuffer<int> h_count, h_coincident;
    gpu::PinnedBuffer<Partial> h_out;

    Impl(Precision p, int device) : precision(p)
    {
        if (p == Precision::Float)
            throw std::invalid_argument("the GRAPE engine on the GPU: precision mixed or double");
        if (cuda_device_count() == 0) throw std::runtime_error("direct-gpu: no CUDA device is visible");
        this->device = device;
        if (device >= 0) select_cuda_device(device); // checks it is visible
        sm_count = describe_device().sm_count;
        CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    }
    ~Impl()
    {
        if (device >= 0) cudaSetDevice(device);
        cudaStreamDestroy(stream);
    }

    // Several engines of one thread may live on different devices (libg5's boards): each call
    // makes its own current first.
    void use_device() const
    {
        if (device >= 0) CUDA_CHECK(cudaSetDevice(device));
    }

    JMemory device_memory()
    {
        return {d_xm.data(), d_vt.data(), d_a2.data(), d_j6.data(), d_k18.data(), d_name.data()};
    }

    // Grows or shrinks the j-memory to n slots, keeping the first min(n, slots) (a client may add
    // particles between force calls); new slots are empty (name -1, mass 0).
    void resize_memory(std::size_t n)
    {
        upload_staged();
        synchronize();
        const std::size_t room = std::max<std::size_t>(n, 1), keep = std::min(n, slots);
        for (auto* b : {&d_xm, &d_vt, &d_a2, &d_j6, &d_k18}) b->reserve_keeping(room, keep, "GRAPE j-memory");
        d_name.reserve_keeping(room, keep, "GRAPE j-memory");
        for (auto* b : {&d_xp, &d_vp}) b->reserve(room, "GRAPE predicted j-particles");
        for (auto* b : {&d_hi, &d_lo, &d_vel}) b->reserve(room, "GRAPE predicted j-particles");
        if (n > slots) {
            const std::size_t added = n - slots;
            for (auto* b : {&d_xm, &d_vt, &d_a2, &d_j6, &d_k18})
                CUDA_CHECK(cudaMemsetAsync(b->data() + slots, 0, added * sizeof(D4), stream));
            CUDA_CHECK(cudaMemsetAsync(d_name.data() + slots, 0xff, added * sizeof(long long), stream)); // -1
        }
        h_packed.reserve(5 * room, "GRAPE upload"); // nothing staged now: set() never needs to grow it
        staged_at.assign(n, -1);
        slots = n;
        predicted = false;
    }

    // The stream is idle again: h_packed may be written.
    void synchronize()
    {
        CUDA_CHECK(cudaStreamSynchronize(stream));
        upload_in_flight = false;
    }

    void stage(std::size_t slot, const GrapeJParticle& p)
    {
        // Normally evaluate() has waited for its upload; after an evaluation that failed midway it
        // may still be in flight.
        if (upload_in_flight) synchronize();
        std::int32_t& at = staged_at[slot];
        if (at < 0) at = static_cast<std::int32_t>(staged++);
        D4* q = h_packed.data() + 5 * static_cast<std::size_t>(at);
        q[0] = D4{p.x[0], p.x[1], p.x[2], p.mass};
        q[1] = D4{p.v[0], p.v[1], p.v[2], p.t};
        q[2] = D4{p.a2[0], p.a2[1], p.a2[2], bits_as_double(static_cast<std::uint64_t>(slot))};
        q[3] = D4{p.j6[0], p.j6[1], p.j6[2], bits_as_double(static_cast<std::uint64_t>(p.name))};
        q[4] = D4{p.k18[0], p.k18[1], p.k18[2], 0.0};
        max_j_name = std::max(max_j_name, p.name);
        predicted = false;
    }

    void upload_staged()
    {
        const std::size_t k = staged;
        if (k == 0) return;
        d_packed.reserve(5 * k, "GRAPE upload");
        CUDA_CHECK(
            cudaMemcpyAsync(d_packed.data(), h_packed.data(), 5 * k * sizeof(D4), cudaMemcpyHostToDevice, stream));
        scatter_kernel<<<static_cast<unsigned>(ceil_div(k, 256)), 256, 0, stream>>>(static_cast<int>(k),
                                                                                    d_packed.data(), device_memory());
        gpu::check_launch("GRAPE scatter_kernel", stream);
        upload_in_flight = true; // until synchronize(): stage() waits for it
        for (std::size_t u = 0; u < k; ++u)
            staged_at[static_cast<std::size_t>(double_bits(h_packed[5 * u + 2].w))] = -1;
        staged = 0;
        predicted = false;
    }
};

GrapeGpuEngine::GrapeGpuEngine(Precision precision, int device) : impl_(std::make_unique<Impl>(precision, device)) {}
GrapeGpuEngine::~GrapeGpuEngine() = default;

std::string GrapeGpuEngine::name() const
{
    return std::string("direct-gpu (") + precision_name(impl_->precision) + ")";
}

void GrapeGpuEngine::resize(std::size_t slots)
{
    impl_->use_device();
    impl_->resize_memory(slots);
}

std::size_t GrapeGpuEngine::size() const
{
    return impl_->slots;
}

void GrapeGpuEngine::set(std::size_t slot, const GrapeJParticle& p)
{
    Impl& d = *impl_;
    if (slot >= d.slots)
        throw std::out_of_range("j-particle address " + std::to_string(slot) + " beyond the memory of " +
                                std::to_string(d.slots));
    d.stage(slot, p);
}

namespace {

// GRAPE-6's prediction of the j-particles to time t, unless they are there already.
void predict(GrapeGpuEngine::Impl& d, double t, std::size_t nj)
{
    if (d.predicted && d.predicted_t == t && d.predicted_n == nj) return;
    const bool mixed = d.precision == Precision::Mixed;
    if (nj > 0)
        predict_kernel<<<static_cast<unsigned>(ceil_div(nj, 256)), 256, 0, d.stream>>>(
            static_cast<int>(nj), t, d.device_memory(), mixed ? nullptr : d.d_xp.data(),
            mixed ? nullptr : d.d_vp.data(), d.d_hi.data(), d.d_lo.data(), d.d_vel.data());
    gpu::check_launch("GRAPE predict_kernel", d.stream);
    d.predicted = true;
    d.predicted_t = t;
    d.predicted_n = nj;
}

// The general kernel flags a pair at zero distance; the fast one leaves it as a nearest r^2 of 0,
// which also names the pair (by_nearest: a softening below float's normal range counts as 0 there).
void check_coincident(const GrapeGpuEngine::Impl& d, const GrapeIParticles& in, bool by_nearest)
{
    if (by_nearest)
        for (std::size_t k = 0; k < in.size(); ++k)
            if (d.h_out[k].nearest_r2 == 0 && d.h_out[k].nearest >= 0)
                throw std::runtime_error("two particles of different names are at the same position and the softening "
                                         "is 0: their force is infinite (names " +
                                         std::to_string(in.name[k]) + " and " + std::to_string(d.h_out[k].nearest) +
                                         ")");
    if (d.h_coincident[0])
        throw std::runtime_error("two particles of different names are at the same position and the softening is 0: "
                                 "their force is infinite");
}

// The downloaded sums and neighbour lists into the caller's arrays.
void unpack_results(const GrapeGpuEngine::Impl& d, std::size_t ni, std::size_t neighbour_capacity, GrapeResults& out)
{
    const bool lists = neighbour_capacity > 0;
    for (std::size_t k = 0; k < ni; ++k) {
        const Partial& p = d.h_out[k];
        out.acc[3 * k] = p.ax;
        out.acc[3 * k + 1] = p.ay;
        out.acc[3 * k + 2] = p.az;
        out.jerk[3 * k] = p.jx;
        out.jerk[3 * k + 1] = p.jy;
        out.jerk[3 * k + 2] = p.jz;
        out.pot[k] = p.pot;
        out.nearest[k] = p.nearest;
        out.nearest_r2[k] = p.nearest_r2;
        if (lists) {
            const auto count = static_cast<std::size_t>(d.h_count[k]);
            const std::size_t kept = std::min(count, neighbour_capacity);
            out.offset[k] = static_cast<std::int64_t>(k * neighbour_capacity);
            out.count[k] = static_cast<std::int64_t>(count);
            out.overflowed[k] = count > neighbour_capacity;
            auto first = out.neighbours.begin() + static_cast<std::ptrdiff_t>(k * neighbour_capacity);
            std::copy(d.h_entries.data() + k * neighbour_capacity, d.h_entries.data() + k * neighbour_capacity + kept,
                      first);
            // The device appends in arrival order; a list that overflowed kept whichever came first,
            // so it is reported (overflowed) and the client asks for a smaller radius.
            std::sort(first, first + static_cast<std::ptrdiff_t>(kept));
        }
    }
}

} // namespace

void GrapeGpuEngine::evaluate(double t, std::size_t nj, const GrapeIParticles& in, double eps2,
                              std::size_t neighbour_capacity, GrapeResults& out)
{
    Impl& d = *impl_;
    if (nj > d.slots)
        throw std::out_of_range("nj = " + std::to_string(nj) + " beyond the j-memory of " + std::to_string(d.slots));
    const bool mixed = d.precision == Precision::Mixed;
    d.use_device();
    d.upload_staged();
    predict(d, t, nj);
    const std::size_t ni = in.size();
    out.acc.assign(3 * ni, 0.0);
    out.jerk.assign(3 * ni, 0.0);
    out.pot.assign(ni, 0.0);
    out.nearest.assign(ni, -1);
    out.nearest_r2.assign(ni, INFINITY);
    const bool lists = neighbour_capacity > 0;
    out.offset.assign(lists ? ni : 0, 0);
    out.count.assign(lists ? ni : 0, 0);
    out.overflowed.assign(lists ? ni : 0, 0);
    out.neighbours.assign(lists ? ni * neighbour_capacity : 0, -1);
    if (ni == 0) return;

    // The i-particles in one upload: ni of (x, name's bits), then ni of (v, h2).
    d.h_i.reserve(2 * ni, "GRAPE i-particles");
    d.d_i.reserve(2 * ni, "GRAPE i-particles");
    bool narrow_names = d.max_j_name < static_cast<std::int64_t>(kEmptyName / 2); // fit the fast kernel's 32 bits
    for (std::size_t k = 0; k < ni; ++k) {
        d.h_i[k] =
            D4{in.x[3 * k], in.x[3 * k + 1], in.x[3 * k + 2], bits_as_double(static_cast<std::uint64_t>(in.name[k]))};
        d.h_i[ni + k] = D4{in.v[3 * k], in.v[3 * k + 1], in.v[3 * k + 2], in.h2[k]};
        narrow_names = narrow_names && in.name[k] >= INT32_MIN && in.name[k] <= INT32_MAX;
    }
    const bool fast = mixed && !lists && narrow_names;
    CUDA_CHECK(cudaMemcpyAsync(d.d_i.data(), d.h_i.data(), 2 * ni * sizeof(D4), cudaMemcpyHostToDevice, d.stream));
    NeighbourLists nl{0, nullptr, nullptr};
    if (lists) {
        d.d_count.reserve(ni, "GRAPE neighbour counts");
        d.h_count.reserve(ni, "GRAPE neighbour counts");
        d.d_entries.reserve(ni * neighbour_capacity, "GRAPE neighbour lists");
        d.h_entries.reserve(ni * neighbour_capacity, "GRAPE neighbour lists");
        CUDA_CHECK(cudaMemsetAsync(d.d_count.data(), 0, ni * sizeof(int), d.stream));
        nl = NeighbourLists{static_cast<int>(neighbour_capacity), d.d_count.data(), d.d_entries.data()};
    }
    d.d_coincident.reserve(1, "GRAPE flags");
    d.h_coincident.reserve(1, "GRAPE flags");
    d.h_coincident[0] = 0;
    if (!fast) CUDA_CHECK(cudaMemsetAsync(d.d_coincident.data(), 0, sizeof(int), d.stream));

    const std::size_t per_block = fast ? static_cast<std::size_t>(kThreads) * kTargetsPerThread : kThreads;
    // A softening that is a normal float keeps every r^2 + eps^2 > 0 (even flushed to zero), so the
    // fast kernel then drops its test for a pair at zero distance.
    const float eps2f = static_cast<float>(eps2);
    using gpu::resident_blocks_per_sm;
    const int blocks_per_sm =
        fast ? (eps2f >= FLT_MIN ? resident_blocks_per_sm<grape_mixed_kernel<kTargetsPerThread, true>, kThreads>()
                                 : resident_blocks_per_sm<grape_mixed_kernel<kTargetsPerThread, false>, kThreads>())
             : (mixed ? resident_blocks_per_sm<grape_kernel<true>, kThreads>()
                      : resident_blocks_per_sm<grape_kernel<false>, kThreads>());
    const gpu::JSplit plan =
        gpu::plan_j_split(ni, per_block, std::max<std::size_t>(nj, 1), kThreads, d.sm_count, blocks_per_sm, 0);
    d.d_partial.reserve(static_cast<std::size_t>(plan.splits) * ni, "GRAPE partial sums");
    d.d_out.reserve(ni, "GRAPE results");
    d.h_out.reserve(ni, "GRAPE results");
    const dim3 grid(static_cast<unsigned>(plan.i_blocks), static_cast<unsigned>(plan.splits));
    if (fast && eps2f >= FLT_MIN)
        grape_mixed_kernel<kTargetsPerThread, true><<<grid, kThreads, 0, d.stream>>>(
            static_cast<int>(nj), d.d_hi.data(), d.d_lo.data(), d.d_vel.data(), static_cast<int>(ni), d.d_i.data(),
            plan.chunk, eps2f, d.d_partial.data());
    else if (fast)
        grape_mixed_kernel<kTargetsPerThread, false><<<grid, kThreads, 0, d.stream>>>(
            static_cast<int>(nj), d.d_hi.data(), d.d_lo.data(), d.d_vel.data(), static_cast<int>(ni), d.d_i.data(),
            plan.chunk, eps2f, d.d_partial.data());
    else if (mixed)
        grape_kernel<true><<<grid, kThreads, 0, d.stream>>>(
            static_cast<int>(nj), nullptr, nullptr, d.d_hi.data(), d.d_lo.data(), d.d_vel.data(), d.d_name.data(),
            static_cast<int>(ni), d.d_i.data(), plan.chunk, eps2, nl, d.d_partial.data(), d.d_coincident.data());
    else
        grape_kernel<false><<<grid, kThreads, 0, d.stream>>>(
            static_cast<int>(nj), d.d_xp.data(), d.d_vp.data(), nullptr, nullptr, nullptr, d.d_name.data(),
            static_cast<int>(ni), d.d_i.data(), plan.chunk, eps2, nl, d.d_partial.data(), d.d_coincident.data());
    gpu::check_launch("grape_kernel", d.stream);
    reduce_kernel<<<gpu::warp_reduce_blocks(ni), gpu::kReduceThreads, 0, d.stream>>>(
        static_cast<int>(ni), plan.splits, d.d_partial.data(), d.d_out.data());
    gpu::check_launch("GRAPE reduce_kernel", d.stream);
    CUDA_CHECK(cudaMemcpyAsync(d.h_out.data(), d.d_out.data(), ni * sizeof(Partial), cudaMemcpyDeviceToHost, d.stream));
    if (!fast)
        CUDA_CHECK(cudaMemcpyAsync(d.h_coincident.data(), d.d_coincident.data(), sizeof(int), cudaMemcpyDeviceToHost,
                                   d.stream));
    if (lists) {
        CUDA_CHECK(
            cudaMemcpyAsync(d.h_count.data(), d.d_count.data(), ni * sizeof(int), cudaMemcpyDeviceToHost, d.stream));
        CUDA_CHECK(cudaMemcpyAsync(d.h_entries.data(), d.d_entries.data(), ni * neighbour_capacity * sizeof(long long),
                                   cudaMemcpyDeviceToHost, d.stream));
    }
    d.synchronize();
    check_coincident(d, in, fast && eps2f < FLT_MIN);
    unpack_results(d, ni, neighbour_capacity, out);
}

} // namespace grove
