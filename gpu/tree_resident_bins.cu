// Hierarchical time steps on tree-gpu's resident store (tree_resident.cuh, core/device_time_bins.hpp).
// A tick: drift() moves every particle (gathered into a new structure's order where the tick
// rebuilds), compute() refits the tree and walks the groups that hold a due particle, close()
// kicks the due particles and gives them new bins. The host learns only the particles per bin.
#include "gpu/tree_resident.cuh"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "core/wall_clock.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/resident_bin_kernels.cuh"
#include "tree/lane_layout.hpp"

namespace grove {

namespace {

// A tick rebuilds the tree when at least this share of the particles is due: its walk is then long
// enough to hide the host's build of the next structure. The other ticks refit the live one, whose
// cells grow with every refit and lengthen the lists of the ticks that follow. Under the relative
// criterion a tick's walk and lists are shorter and hide less of the build: it rebuilds from twice
// the share (measured on the 2^20 galaxy, bench/results/step.md).
constexpr long long kRebuildShare = 16, kRelativeRebuildShare = 8; // 1 / 16, 1 / 8

long long rebuild_share(const TreeParams& params)
{
    return params.mac == MacKind::relative ? kRelativeRebuildShare : kRebuildShare;
}
// A tick walks whole groups, as a full step does, when at least this share is due (1 / 2): then
// most groups hold a due particle, and walking them whole costs less than their pieces. Else
// 32-particle pieces of the groups that hold a due particle, with long walks cut into parts.
constexpr long long kWholeGroupsShare = 2;

} // namespace

DeviceTimeBins* TreeGpuResident::time_bins()
{
    return ranks_ ? nullptr : this; // a domain's ticks would need every rank's due groups
}

BinCounts TreeGpuResident::launch_bins(Tick tick, bool close, bool open)
{
    const auto n = static_cast<std::size_t>(n_);
    DeviceBinRule rule{rule_.eta, rule_.dt_max, e_.gravity.G, {}, e_.gravity.eps, rule_.eta_dyn, profile_};
    for (int t = 0; t < kNumParticleTypes; ++t) rule.eps_of_type[t] = rule_.eps_of_type[static_cast<std::size_t>(t)];
    bin_count_.reserve(kMaxBin + 1, "particles per bin");
    h_bin_count_.reserve(kMaxBin + 1, "particles per bin");
    CUDA_CHECK(cudaMemsetAsync(bin_count_.data(), 0, (kMaxBin + 1) * sizeof(unsigned long long), e_.stream));
    CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, sizeof(int), e_.stream));
    CUDA_CHECK(cudaEventRecord(ev_[kKickStart], e_.stream));
    bins_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(
        n_, tick, close, open, rule, e_.d_sorted.data(), loaded_types_.empty() ? nullptr : types_.data(),
        caller_[cur_].data(), body_.data(), bins_[cur_].data(), vel_.data(), flags_.data(), bin_count_.data());
    gpu::check_launch("bins_kernel", e_.stream);
    CUDA_CHECK(cudaEventRecord(ev_[kKickEnd], e_.stream));
    copy_async(h_bin_count_.data(), bin_count_.data(), static_cast<std::size_t>(kMaxBin + 1), cudaMemcpyDeviceToHost,
               e_.stream);
    CUDA_CHECK(cudaMemcpyAsync(h_flags_.data(), flags_.data(), sizeof(int), cudaMemcpyDeviceToHost, e_.stream));
    CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    last_counts_.count.assign(h_bin_count_.data(), h_bin_count_.data() + kMaxBin + 1);
    last_counts_.finite = h_flags_[0] == 0;
    return last_counts_;
}

void TreeGpuResident::prepare_bins(const BinRule& rule)
{
    if (forces_due_ || kick_due_ || bins_active_)
        throw std::logic_error("tree-gpu: block steps opened in the middle of a step");
    const auto n = static_cast<std::size_t>(n_);
    rule_ = rule;
    for (int b = 0; b < 2; ++b) bins_[b].reserve(n, "time bins");
    if (!types_uploaded_ && !loaded_types_.empty()) {
        types_.reserve(n, "particle types");
        CUDA_CHECK(cudaMemcpy(types_.data(), loaded_types_.data(), n, cudaMemcpyHostToDevice));
        types_uploaded_ = true;
    }
}

BinCounts TreeGpuResident::open_all(const BinRule& rule)
{
    BinCounts counts;
    guarded([&] {
        prepare_bins(rule);
        if (rule.eta_dyn > 0) profile_ = enclosed_mass_profile();
        // The forces of every particle are the engine's sums in the order of body_ (those loaded,
        // or the last evaluation's, which covered every group: every particle was due).
        counts = launch_bins(0, false, true);
    });
    return counts;
}

std::vector<std::uint8_t> TreeGpuResident::bins_in_load_order()
{
    std::vector<std::uint8_t> out;
    guarded([&] {
        if (forces_due_ || kick_due_ || bins_active_) throw std::logic_error("tree-gpu: bins read within a tick");
        const auto n = static_cast<std::size_t>(n_);
        std::vector<std::uint8_t> bins(n);
        std::vector<std::uint32_t> caller(n);
        CUDA_CHECK(cudaStreamSynchronize(e_.stream));
        CUDA_CHECK(cudaMemcpy(bins.data(), bins_[cur_].data(), n, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(caller.data(), caller_[cur_].data(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
        out.resize(n);
        for (std::size_t k = 0; k < n; ++k) out[caller[k]] = bins[k];
    });
    return out;
}

BinCounts TreeGpuResident::continue_within(const BinRule& rule, const std::vector<std::uint8_t>& bins,
                                           const EnclosedMassProfile& profile)
{
    guarded([&] {
        const auto n = static_cast<std::size_t>(n_);
        if (bins.size() != n) throw std::invalid_argument("tree-gpu: bins for another number of particles");
        prepare_bins(rule);
        profile_ = profile;
        // Into the order of body_: bins_[cur_][k] = bins[caller_[cur_][k]].
        std::vector<std::uint32_t> caller(n);
        CUDA_CHECK(cudaStreamSynchronize(e_.stream));
        CUDA_CHECK(cudaMemcpy(caller.data(), caller_[cur_].data(), n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
        std::vector<std::uint8_t> ordered(n);
        for (std::size_t k = 0; k < n; ++k) ordered[k] = bins[caller[k]];
        CUDA_CHECK(cudaMemcpy(bins_[cur_].data(), ordered.data(), n, cudaMemcpyHostToDevice));
        // The counts the last close() left, as a run that never paused has them (the next
        // structure's look-ahead reads them).
        last_counts_.count.assign(kMaxBin + 1, 0);
        for (std::uint8_t k : bins) ++last_counts_.count[k];
        last_counts_.finite = true;
    });
    return last_counts_;
}

void TreeGpuResident::drift(double dt, Tick tick, long long due)
{
    guarded([&] {
        if (forces_due_ || kick_due_) throw std::logic_error("tree-gpu: a drift in the middle of a tick");
        step_start_ = WallClock::now();
        const auto n = static_cast<std::size_t>(n_);
        tick_ = tick;
        rebuild_tick_ = fresh_ || due * rebuild_share(e_.params) >= static_cast<long long>(n);
        ticks_since_rebuild_ = rebuild_tick_ ? 0 : ticks_since_rebuild_ + 1;
        whole_groups_ = due * kWholeGroupsShare >= static_cast<long long>(n);
        CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, sizeof(int), e_.stream));
        CUDA_CHECK(cudaEventRecord(ev_[kStart], e_.stream));
        lead_ = rebuild_tick_ ? structure_lead(tick, dt) : 0; // the next structure's keys (compute_due_groups)
        const auto in_place = [&] {
            drift_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(n_, dt, nullptr, body_.data(), vel_.data(),
                                                                  body_.data(), flags_.data());
            gpu::check_launch("drift_kernel", e_.stream);
        };
        double still = dt; // the drift the gather below makes
        // A rebuild takes the structure built beside the ticks since the last rebuild.
        if (rebuild_tick_) finish_lookahead();
        if (rebuild_tick_ && !staged_) {
            // No structure built ahead (the first tick, or a look-ahead that failed): build one
            // from the drifted positions themselves.
            in_place();
            still = 0;
            if (!stage_from_device_keys({body_.data(), vel_.data(), nullptr, nullptr, e_.gravity.G, 0, 0})) {
                failed_ = true; // non-finite positions: close() says so
                bins_active_ = true;
                return;
            }
        }
        fresh_ = false;
        if (rebuild_tick_) {
            apply_staged();
            gather_and_drift(0, still, true);
        } else {
            in_place();
        }
        CUDA_CHECK(cudaEventRecord(ev_[kPredicted], e_.stream));
        potentials_missing_ = true;
        forces_due_ = true;
        bins_active_ = true;
    });
}

double TreeGpuResident::structure_lead(Tick tick, double dt) const
{
    // The structure staged now serves from the next rebuild to the one after: predicted to the
    // middle of that span, taking the spans alike and the bins as they are (the last counts).
    if (last_counts_.count.empty()) return dt;
    const int shortest = last_counts_.shortest();
    Tick next = tick;
    do next += ticks_of_bin(shortest);
    while (next < kTicksPerMaxStep &&
           last_counts_.due_at(next) * rebuild_share(e_.params) < static_cast<long long>(n_));
    const double span = std::ldexp(rule_.dt_max, -kMaxBin) * static_cast<double>(next - tick);
    return std::max(dt, 1.5 * span);
}

void TreeGpuResident::compute_due_groups()
{
    guarded([&] {
        if (failed_) return;
        if (!forces_due_) throw std::logic_error("tree-gpu: forces on a device store without a drift before");
        if (rebuild_tick_) launch_key_sort({body_.data(), vel_.data(), nullptr, nullptr, e_.gravity.G, 0, lead_});
        e_.num_groups = live_info_.groups;
        launch_refit();
        // A tick with fewer than a third of the particles due walks pieces of groups that hold one, a
        // warp's targets at most: its few groups would otherwise leave most of the GPU idle while
        // each warp works through a whole group's lists (the densest groups, which are due most
        // often, the longest of them).
        static_assert(kWarpLanes <= gpu::kSplitTargets, "pieces' lists may be evaluated in stretches");
        const int piece = whole_groups_ ? live_info_.widest : kWarpLanes;
        const int per_group = std::max(1, (live_info_.widest + piece - 1) / piece);
        const int pieces = live_info_.groups * per_group;
        const auto candidates = static_cast<std::size_t>(pieces);
        group_due_.reserve(candidates, "due groups");
        due_groups_.reserve(candidates, "due groups");
        due_ranges_.reserve(candidates, "due groups");
        due_group_count_.reserve(1, "due groups");
        h_due_group_count_.reserve(1, "due groups");
        due_pieces_kernel<<<blocks_for(candidates), kBlock, 0, e_.stream>>>(
            pieces, group_range_.data(), per_group, piece, bins_[cur_].data(), tick_, group_due_.data());
        gpu::check_launch("due_pieces_kernel", e_.stream);
        const thrust::counting_iterator<int> all(0);
        std::size_t select_bytes = 0;
        CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, select_bytes, all, group_due_.data(), due_groups_.data(),
                                              due_group_count_.data(), pieces, e_.stream));
        select_temp_.reserve(select_bytes, "due groups workspace");
        CUDA_CHECK(cub::DeviceSelect::Flagged(select_temp_.data(), select_bytes, all, group_due_.data(),
                                              due_groups_.data(), due_group_count_.data(), pieces, e_.stream));
        piece_ranges_kernel<<<blocks_for(candidates), kBlock, 0, e_.stream>>>(
            due_group_count_.data(), due_groups_.data(), group_range_.data(), per_group, piece, due_ranges_.data());
        gpu::check_launch("piece_ranges_kernel", e_.stream);
        CUDA_CHECK(cudaMemcpyAsync(h_due_group_count_.data(), due_group_count_.data(), sizeof(int),
                                   cudaMemcpyDeviceToHost, e_.stream));
        CUDA_CHECK(cudaStreamSynchronize(e_.stream)); // the walk's plan needs the count
        const int walked = h_due_group_count_[0];
        e_.dev.groups.reserve(static_cast<std::size_t>(walked), "tree groups");
        pack_groups_kernel<<<blocks_for(static_cast<std::size_t>(walked)), kBlock, 0, e_.stream>>>(
            walked, due_ranges_.data(), pointers_of(e_.dev));
        gpu::check_launch("pack_groups_kernel", e_.stream);
        const OpeningCriterion criterion = e_.params.opening();
        if (criterion.kind == MacKind::relative) {
            e_.dev.mac_scale.reserve(static_cast<std::size_t>(std::max(walked, 1)), "tree group scales");
            due_scales_kernel<<<blocks_for(static_cast<std::size_t>(walked)), kBlock, 0, e_.stream>>>(
                due_group_count_.data(), due_ranges_.data(), bins_[cur_].data(), tick_, e_.d_sorted.data(),
                e_.dev.mac_scale.data());
            gpu::check_launch("due_scales_kernel", e_.stream);
        }
        e_.num_groups = walked;
        partial_walk_ = !whole_groups_ || walked < live_info_.groups;
        // Ticks whose longest due bin is the same, as long after a rebuild, walk alike groups on
        // alike trees: each such kind keeps the room its last walk measured, and walks once into it.
        const int longest_due = longest_due_bin(tick_);
        WalkShape shape;
        shape.list_class = 1 + longest_due + (kMaxBin + 1) * std::min(ticks_since_rebuild_, 7);
        shape.few_groups = !whole_groups_;
        if (by_type_) launch_softening();
        CUDA_CHECK(cudaEventRecord(ev_[kRefitted], e_.stream));
        CUDA_CHECK(cudaStreamWaitEvent(e_.stream, ev_[kKeysMade], 0)); // the keys read the velocities first
        evaluation_ = e_.enqueue(criterion, ForcesTo::device, true, GroupScales::on_device, shape,
                                 rebuild_tick_ ? ev_[kSorted] : nullptr);
        forces_due_ = false;
        kick_due_ = true;
    });
}

BinCounts TreeGpuResident::close(bool reopen)
{
    BinCounts counts;
    guarded([&] {
        if (!bins_active_) throw std::logic_error("tree-gpu: close() without a drift before");
        bins_active_ = false;
        if (std::exchange(failed_, false)) {
            counts.count.assign(kMaxBin + 1, 0);
            counts.finite = false;
            return;
        }
        if (!kick_due_) throw std::logic_error("tree-gpu: close() without the tick's forces");
        // The next structure, built on the host while the GPU walks and the ticks until the next
        // rebuild refit the live tree (the next rebuild tick's drift() waits for it).
        if (rebuild_tick_) start_lookahead();
        Forces unused; // the forces stay on the device
        e_.finish(*evaluation_, unused);
        evaluation_.reset();
        kick_due_ = false;
        counts = launch_bins(tick_, true, reopen);
        collect_times(rebuild_tick_);
    });
    return counts;
}

} // namespace grove
