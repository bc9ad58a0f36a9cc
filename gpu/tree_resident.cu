#include "gpu/tree_resident.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include <omp.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/sequence.h>

#include "core/softening.hpp"
#include "core/step_update.hpp"
#include "core/wall_clock.hpp"
#include "gpu/cuda_check.cuh"
#include "gpu/resident_tree_kernels.cuh"
#include "gpu/tree_engine_impl.cuh"
#include "tree/build.hpp"
#include "tree/cut_cells.hpp"
#include "tree/float_tree.hpp"
#include "tree/morton.hpp"

namespace grove {

namespace {

// The closing kick with the new forces (sums without G, in the tree's order), which stay in the
// engine's sums for the next step's opening kick: v += a h in place, unless the one-pass walk cut a
// list (*cut != 0), whose evaluation finish() makes again before this kernel runs once more.
__global__ void kick_kernel(int n, double h, double G, const float4* sums, const int* cut, Vec4<double>* vel,
                            int* flags)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n || *cut != 0) return;
    const Vec4<double> a = acceleration_of(sums[k], G);
    const Vec4<double> vh = vel[k];
    const Vec4<double> v{kicked(vh.x, a.x, h), kicked(vh.y, a.y, h), kicked(vh.z, a.z, h), 0};
    vel[k] = v;
    if (!finite3(v.x, v.y, v.z)) atomicAdd(flags, 1);
}

// The potentials of a step's sums, made again with potentials into `with_potentials`
// (TreeGpuEngine::Impl::evaluate_potentials), into the step's sums: their accelerations stay the
// kick's, which the next step goes on from.
__global__ void potential_kernel(int n, const float4* with_potentials, float4* sums)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) sums[k].w = with_potentials[k].w;
}

} // namespace

TreeGpuResident::TreeGpuResident(TreeGpuEngine::Impl& engine) : e_(engine)
{
    // The key sort on copy_ runs beside the refit and the walk, which fill the device: at the
    // highest priority its blocks go first as theirs come free, so that it is done before the list
    // kernels (which wait for it) and the host's next build starts early.
    int least = 0, greatest = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUDA_CHECK(cudaStreamCreateWithPriority(&copy_, cudaStreamNonBlocking, greatest));
    for (cudaEvent_t& ev : ev_) CUDA_CHECK(cudaEventCreate(&ev));
    for (Chunk& ch : chunks_) CUDA_CHECK(cudaEventCreateWithFlags(&ch.copied, cudaEventDisableTiming));
}

TreeGpuResident::~TreeGpuResident()
{
    drop_lookahead();
    cudaStreamSynchronize(copy_);
    cudaStreamSynchronize(e_.stream);
    for (cudaEvent_t ev : ev_) cudaEventDestroy(ev);
    for (Chunk& ch : chunks_) cudaEventDestroy(ch.copied);
    cudaStreamDestroy(copy_);
}

void TreeGpuResident::load(const ParticleSet& p, TypesRef types)
{
    unload();
    // Everything below writes the double buffers' first half, find_domains_cut's IDs and types
    // too (at cur_): each step's gather flips cur_, and after an odd number of steps since the last
    // load they would land in the half the state does not read, giving the particles the IDs of an
    // earlier step's order.
    cur_ = 0;
    const auto n = p.size();
    if (n == 0 && ranks_ && ranks_->ranks() > 1)
        throw std::runtime_error("tree-gpu: the domain of rank " + std::to_string(ranks_->rank()) + " of " +
                                 std::to_string(ranks_->ranks()) +
                                 " holds no particles; tree-gpu's steps on domains need particles in every domain: "
                                 "run on fewer ranks, or with --engine tree-cpu, whose domains may be empty");
    if (n == 0) throw std::invalid_argument("tree-gpu: no particles to evolve");
    if (n > static_cast<std::size_t>(INT32_MAX / 2)) throw std::runtime_error("tree-gpu: at most 2^30 particles");
    if (!p.has_forces()) throw std::logic_error("tree-gpu: a resident store starts from particles with forces");
    n_ = static_cast<int>(n);
    // The host-side evaluations before the steps sized their lists to the memory free then, and
    // the forces' copy in the caller's order is not needed here: both make room for the store.
    e_.release_host_path_buffers();
    body_.reserve(n, "resident positions");
    vel_.reserve(n, "resident velocities");
    spare_.reserve(n, "resident gather and key sort");
    for (int b = 0; b < 2; ++b) caller_[b].reserve(n, "resident particle order");
    flags_.reserve(1, "step flags");
    order_.reserve(n, "tree order");
    s_order_.reserve(n, "tree order");
    bounds_.reserve(1, "key box");
    box_.reserve(1, "key box");
    h_keys_.reserve(n, "keys");
    h_box_.reserve(1, "key box");
    e_.d_sorted.reserve(n, "sorted accelerations");
    h_flags_.reserve(1, "step flags");
    reserve_chunks();
    const double G = e_.gravity.G;
    for (std::size_t first = 0, c = 0; first < n; first += kChunk, ++c) {
        Chunk& ch = chunks_[c % 2];
        CUDA_CHECK(cudaEventSynchronize(ch.copied)); // its last copies have left it
        const std::size_t count = std::min(kChunk, n - first);
        const auto last = static_cast<std::int64_t>(count);
#pragma omp parallel for schedule(static)
        for (std::int64_t k = 0; k < last; ++k) {
            const auto i = static_cast<Eigen::Index>(first) + k;
            ch.body[k] = {p.pos(0, i), p.pos(1, i), p.pos(2, i), p.mass[i]};
            ch.vel[k] = {p.vel(0, i), p.vel(1, i), p.vel(2, i), 0};
            // The store's accelerations are an evaluation's sums times G (store_forces): divided
            // by G and rounded to float they are those sums again.
            ch.sums[k] = make_float4(static_cast<float>(p.acc(0, i) / G), static_cast<float>(p.acc(1, i) / G),
                                     static_cast<float>(p.acc(2, i) / G), static_cast<float>(p.pot[i] / G));
            ch.caller[k] = static_cast<std::uint32_t>(i);
        }
        copy_async(body_.data() + first, ch.body.data(), count, cudaMemcpyHostToDevice, e_.stream);
        copy_async(vel_.data() + first, ch.vel.data(), count, cudaMemcpyHostToDevice, e_.stream);
        copy_async(e_.d_sorted.data() + first, ch.sums.data(), count, cudaMemcpyHostToDevice, e_.stream);
        copy_async(caller_[0].data() + first, ch.caller.data(), count, cudaMemcpyHostToDevice, e_.stream);
        CUDA_CHECK(cudaEventRecord(ch.copied, e_.stream));
    }
    const std::vector<double> half = half_squared_softening(e_.gravity, types, n, "tree-gpu");
    if (!half.empty()) {
        const std::vector<float> half_f(half.begin(), half.end());
        e_.smallest_half = *std::min_element(half_f.begin(), half_f.end());
        loaded_half_.reserve(n, "resident softening");
        mass_half_sums_.reserve(2 * n, "resident softening"); // prefix sums of m h and m h^2
        e_.d_particle_half.reserve(n, "tree softening by type");
        CUDA_CHECK(
            cudaMemcpyAsync(loaded_half_.data(), half_f.data(), n * sizeof(float), cudaMemcpyHostToDevice, e_.stream));
        CUDA_CHECK(cudaStreamSynchronize(e_.stream)); // half_f goes out of scope
    }
    by_type_ = !half.empty();
    find_domains_cube(p);
    find_domains_cut(p);
    loaded_types_.resize(types.size());
    for (std::size_t k = 0; k < types.size(); ++k) loaded_types_[k] = types[k];
    types_uploaded_ = false;
    CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    loaded_ = fresh_ = true;
    sorted_n_ = n_;
    crossing_.active = false;
    potentials_missing_ = false; // the caller's potentials came with the accelerations
}

void TreeGpuResident::find_domains_cube(const ParticleSet& p)
{
    on_domains_cube_ = ranks_ && ranks_->ranks() > 1;
    if (!on_domains_cube_) return;
    double bounds[6] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY}; // lo, then -hi
    const Eigen::Index n = p.pos.cols();
#pragma omp parallel for schedule(static) reduction(min : bounds[:6])
    for (Eigen::Index i = 0; i < n; ++i)
        for (int d = 0; d < 3; ++d) {
            bounds[d] = std::min(bounds[d], p.pos(d, i));
            bounds[3 + d] = std::min(bounds[3 + d], -p.pos(d, i));
        }
    const auto* first = reinterpret_cast<const char*>(bounds);
    ranks_->all_gather(std::vector<char>(first, first + sizeof bounds), cube_bounds_);
    double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (const std::vector<char>& theirs : cube_bounds_) {
        if (theirs.size() != sizeof bounds) throw std::runtime_error("tree-gpu: a rank's bounds came malformed");
        double b[6];
        std::memcpy(b, theirs.data(), sizeof b);
        for (int d = 0; d < 3; ++d) {
            mn[d] = std::min(mn[d], b[d]);
            mx[d] = std::max(mx[d], -b[3 + d]);
        }
    }
    domains_cube_ = load_cube_ = domains_key_frame(mn, mx);
    // The cuts anew after this load move the cube by draws that differ from those after the last
    // load (whose bounds differed), and repeat after a load of the same particles (a restart).
    frame_draw_ = 0x510e527fade682d1ull;
    for (int d = 0; d < 3; ++d) frame_draw_ = mix_bits(mix_bits(frame_draw_ ^ double_bits(mn[d])) ^ double_bits(mx[d]));
}

void TreeGpuResident::evaluate_start(ParticleSet& p, TypesRef types)
{
    const auto n = static_cast<Eigen::Index>(p.size());
    p.acc.setZero(3, n); // the loaded sums, read by nothing before this evaluation replaces them
    p.pot.setZero(n);
    load(p, types);
    guarded([&] {
        fresh_ = false;
        if (!stage_from_device_keys({body_.data(), vel_.data(), nullptr, nullptr, e_.gravity.G, 0, 0}))
            throw std::invalid_argument("tree-gpu: non-finite position");
        apply_staged();
        CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, sizeof(int), e_.stream));
        gather_and_drift(0, 0, false); // into the tree's order, nothing moved
        launch_refit();
        launch_pack_groups();
        if (by_type_) launch_softening();
        const OpeningCriterion criterion = e_.params.opening();
        Forces unused; // the forces stay on the device
        if (criterion.kind == MacKind::relative) {
            // As the host pipeline starts: a geometric evaluation first, whose |a| scale the groups.
            e_.finish(e_.enqueue(OpeningCriterion::geometric(kFirstPassTheta), ForcesTo::device, true,
                                 GroupScales::on_device),
                      unused);
            launch_group_scales(nullptr); // the sums are this tree's
        }
        e_.finish(e_.enqueue(criterion, ForcesTo::device, true, GroupScales::on_device), unused);
        potentials_missing_ = true;
    });
    store(p);
    // The first step loads the state again: the caller may change the particles before it.
    unload();
}

void TreeGpuResident::unload()
{
    drop_lookahead();
    if (loaded_ || staged_) {
        CUDA_CHECK(cudaStreamSynchronize(copy_));
        CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    }
    loaded_ = staged_ = fresh_ = forces_due_ = kick_due_ = failed_ = bins_active_ = false;
    evaluation_.reset();
}

void TreeGpuResident::build_next_structure()
{
    finish_lookahead();
    run_lookahead();
    report_lookahead();
}

void TreeGpuResident::run_lookahead()
{
    build_times_.clear();
    const auto t0 = WallClock::now();
    stage_from_sorted_keys();
    lookahead_seconds_ = seconds_since(t0);
}

void TreeGpuResident::report_lookahead()
{
    lookahead_report_seconds_ = lookahead_seconds_;
    lookahead_report_ = build_times_;
}

void TreeGpuResident::start_lookahead()
{
    finish_lookahead();
    // A core stays with this thread, which queues the ticks' kernels and waits for them.
    const int team = std::max(1, omp_get_max_threads() - 1);
    lookahead_task_.post([this, team] {
        omp_set_num_threads(team);
        run_lookahead();
    });
}

void TreeGpuResident::finish_lookahead()
{
    if (!lookahead_task_.pending()) return;
    lookahead_task_.wait();
    report_lookahead();
}

void TreeGpuResident::drop_lookahead() noexcept
{
    try {
        lookahead_task_.wait();
    } catch (...) { // the state goes with it
    }
}

void TreeGpuResident::reserve_chunks()
{
    const std::size_t size = std::min(kChunk, static_cast<std::size_t>(n_));
    for (Chunk& ch : chunks_) {
        ch.body.reserve(size, "resident staging");
        ch.vel.reserve(size, "resident staging");
        ch.sums.reserve(size, "resident staging");
        ch.caller.reserve(size, "resident staging");
        if (identity_on_device_) {
            ch.id.reserve(size, "resident staging");
            ch.type.reserve(size, "resident staging");
        }
    }
}

bool TreeGpuResident::stage_from_device_keys(const Prediction& pred)
{
    finish_lookahead(); // the keys and the staging buffers are the build's until it is done
    CUDA_CHECK(cudaEventRecord(ev_[kPredicted], e_.stream)); // the positions pred reads are made
    launch_key_sort(pred);
    return stage_from_sorted_keys();
}

bool TreeGpuResident::stage_from_sorted_keys()
{
    auto start = WallClock::now();
    CUDA_CHECK(cudaEventSynchronize(ev_[kKeysCopied]));
    build_times_.emplace_back("look-ahead: wait for keys", seconds_since(start));
    if (h_box_[0].finite != 1) return false; // a non-finite prediction: the next step builds from positions
    Octree& t = trees_[1 - live_];
    t.frame = h_box_[0].frame;
    BuildTimes build;
    build_structure_from_sorted_keys(t, h_keys_.data(), static_cast<std::size_t>(sorted_n_), e_.params.build, &build);
    build_times_.emplace_back("look-ahead: nodes and groups", build.build);
    stage(t, false);
    return true;
}

void TreeGpuResident::stage(const Octree& t, bool with_order)
{
    auto start = WallClock::now();
    const auto n = static_cast<std::size_t>(sorted_n_);
    const auto m = static_cast<std::size_t>(t.num_nodes());
    const auto g = t.groups.size();
    // The last staging's copies read the pinned buffers until they are done.
    CUDA_CHECK(cudaEventSynchronize(ev_[kStaged]));
    h_next_.reserve(m, "tree next indices");
    h_leaf_.reserve(m, "tree leaf flags");
    h_range_.reserve(m, "tree node ranges");
    h_level_.reserve(m, "tree levels");
    h_group_range_.reserve(g, "tree groups");
    // One parallel pass writes what the device needs of each node; a cell's level stands for its
    // side and centre, which the refit recomputes.
    const auto nodes = static_cast<std::int64_t>(m);
#pragma omp parallel for schedule(static) if (nodes > 16384)
    for (std::int64_t i = 0; i < nodes; ++i) {
        const auto k = static_cast<std::size_t>(i);
        h_next_[k] = t.next[k];
        h_leaf_[k] = t.is_leaf[k];
        h_range_[k] = t.range[k];
        h_level_[k] = static_cast<std::uint8_t>(cell_level(t.cell_centre[k].w, t.frame.side));
    }
    // On domains, the cells the cut passes through (tree/cut_cells.hpp), which the refit enlarges:
    // the keys' range is the one the crossers' exchange gave these keys.
    if (first_key_.size() > 2) {
        const auto me = static_cast<std::size_t>(ranks_->rank());
        for_each_cut_cell(t, h_keys_.data(), first_key_[me], first_key_[me + 1],
                          [&](std::size_t k) { h_level_[k] |= kCutCellLevelFlag; });
    }
    const auto groups = static_cast<std::int64_t>(g);
    int widest = 1;
#pragma omp parallel for schedule(static) reduction(max : widest) if (groups > 16384)
    for (std::int64_t k = 0; k < groups; ++k) {
        const ParticleRange r = t.groups[static_cast<std::size_t>(k)].range;
        h_group_range_[k] = r;
        widest = std::max(widest, r.end - r.begin);
    }
    s_next_.reserve(m, "tree next indices");
    s_leaf_.reserve(m, "tree leaf flags");
    s_range_.reserve(m, "tree node ranges");
    s_level_.reserve(m, "tree levels");
    s_group_range_.reserve(g, "tree groups");
    CUDA_CHECK(cudaStreamWaitEvent(copy_, ev_[kStagingFree], 0)); // the device took the last staging
    if (with_order) {
        h_order_.reserve(n, "tree order");
        std::memcpy(h_order_.data(), t.order.data(), n * sizeof(std::uint32_t));
        copy_async(s_order_.data(), h_order_.data(), n, cudaMemcpyHostToDevice, copy_);
    }
    copy_async(s_next_.data(), h_next_.data(), m, cudaMemcpyHostToDevice, copy_);
    copy_async(s_leaf_.data(), h_leaf_.data(), m, cudaMemcpyHostToDevice, copy_);
    copy_async(s_range_.data(), h_range_.data(), m, cudaMemcpyHostToDevice, copy_);
    copy_async(s_level_.data(), h_level_.data(), m, cudaMemcpyHostToDevice, copy_);
    copy_async(s_group_range_.data(), h_group_range_.data(), g, cudaMemcpyHostToDevice, copy_);
    CUDA_CHECK(cudaEventRecord(ev_[kStaged], copy_));
    build_times_.emplace_back("look-ahead: staging", seconds_since(start));
    staged_info_ = {static_cast<int>(m), static_cast<int>(g), widest, t.frame.side, sorted_n_};
    staged_ = true;
}

void TreeGpuResident::apply_staged()
{
    finish_lookahead();
    // A structure staged before particles crossed between domains takes their new number (kick()).
    if (staged_info_.particles != n_) throw std::logic_error("tree-gpu: a staged structure of another particle count");
    const auto n = static_cast<std::size_t>(n_);
    const auto m = static_cast<std::size_t>(staged_info_.nodes);
    const auto g = static_cast<std::size_t>(staged_info_.groups);
    order_.reserve(n, "tree order");
    cell_.reserve(m, "tree cells");
    level_.reserve(m, "tree levels");
    group_range_.reserve(g, "tree groups");
    moments_.com_mass.reserve(m, "tree centres of mass");
    moments_.quad.reserve(m, "tree quadrupoles");
    moments_.size.reserve(m, "tree cell sizes");
    moments_.com_offset.reserve(m, "tree com offsets");
    boxes_.reserve(m, "tree boxes");
    const std::size_t counts[] = {n, m, g};
    for_each_array(e_.dev, [&](auto& a, const TreeArrayInfo& info) {
        a.reserve(counts[static_cast<int>(info.extent)], info.name);
    });
    CUDA_CHECK(cudaStreamWaitEvent(e_.stream, ev_[kStaged], 0));
    const cudaMemcpyKind d2d = cudaMemcpyDeviceToDevice;
    copy_async(order_.data(), s_order_.data(), n, d2d, e_.stream);
    copy_async(e_.dev.next.data(), s_next_.data(), m, d2d, e_.stream);
    copy_async(e_.dev.is_leaf.data(), s_leaf_.data(), m, d2d, e_.stream);
    copy_async(e_.dev.range.data(), s_range_.data(), m, d2d, e_.stream);
    copy_async(level_.data(), s_level_.data(), m, d2d, e_.stream);
    copy_async(group_range_.data(), s_group_range_.data(), g, d2d, e_.stream);
    CUDA_CHECK(cudaEventRecord(ev_[kStagingFree], e_.stream));
    // The refit's order: parents, child counts, and the children listed.
    parent_.reserve(m, "tree parents");
    child_count_.reserve(m, "tree child counts");
    first_child_.reserve(m, "tree first children");
    child_list_.reserve(m, "tree child lists");
    arrived_.reserve(m, "tree refit arrivals");
    const int nodes = staged_info_.nodes;
    parents_kernel<<<blocks_for(m), kBlock, 0, e_.stream>>>(nodes, e_.dev.next.data(), e_.dev.is_leaf.data(),
                                                            parent_.data(), child_count_.data(), first_child_.data());
    gpu::check_launch("parents_kernel", e_.stream);
    std::size_t scan_bytes = 0;
    CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, first_child_.data(), first_child_.data(), nodes, e_.stream));
    scan_temp_.reserve(scan_bytes, "tree child lists workspace");
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp_.data(), scan_bytes, first_child_.data(), first_child_.data(),
                                             nodes, e_.stream));
    child_list_kernel<<<blocks_for(m), kBlock, 0, e_.stream>>>(nodes, e_.dev.next.data(), e_.dev.is_leaf.data(),
                                                               first_child_.data(), child_list_.data());
    gpu::check_launch("child_list_kernel", e_.stream);
    live_info_ = staged_info_;
    live_ = 1 - live_;
    staged_ = false;
    e_.num_particles = n_;
    e_.num_nodes = staged_info_.nodes;
    e_.num_groups = staged_info_.groups;
    e_.loaded = &trees_[live_];
    e_.uploaded = true;
    e_.evaluated = false;
}

void TreeGpuResident::kick_drift(double h, double dt)
{
    guarded([&] {
        step_start_ = WallClock::now();
        // The last step's leavers go and its arrivals come (or, after a cut anew, every particle goes
        // to its owner) only now, not with the last kick: a store in between gives each particle
        // from the domain whose tree it was evaluated on, with the potential of that evaluation.
        exchange_crossing_records();
        exchange_recut_records();
        const bool after_exact = std::exchange(exact_tree_, false);
        if (std::exchange(fresh_, false)) {
            // The first tree from the positions after this step's kick and drift.
            stage_from_device_keys({body_.data(), vel_.data(), e_.d_sorted.data(), nullptr, e_.gravity.G, h, dt});
            exact_tree_ = true;
        }
        if (!staged_) { // the last look-ahead build failed: build from the positions themselves
            if (!stage_from_device_keys({body_.data(), vel_.data(), nullptr, nullptr, e_.gravity.G, 0, 0})) {
                failed_ = true; // non-finite positions: the step stops here and its kick says so
                return;
            }
            exact_tree_ = true;
        }
        walk_twice_ = (after_exact && !exact_tree_) || std::exchange(after_recut_, false);
        apply_staged();
        CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, sizeof(int), e_.stream));
        CUDA_CHECK(cudaEventRecord(ev_[kStart], e_.stream));
        gather_and_drift(h, dt, false);
        lead_ = dt;
        CUDA_CHECK(cudaEventRecord(ev_[kPredicted], e_.stream));
        potentials_missing_ = true;
        forces_due_ = true;
    });
}

void TreeGpuResident::compute()
{
    if (bins_active_) {
        compute_due_groups();
        return;
    }
    guarded([&] {
        if (failed_) return;
        if (!forces_due_) throw std::logic_error("tree-gpu: forces on a device store without a drift before");
        partial_walk_ = false;
        // The positions one more step ahead, kicked by the last forces (still in the order of the
        // last tree, until the evaluation replaces them).
        const bool crossing = crossers_each_step();
        recut_now_ = crossing && recut_due();
        if (recut_now_) move_domains_frame(); // the next structure's keys are made in the moved frame
        launch_keys({body_.data(), vel_.data(), e_.d_sorted.data(), order_.data(), e_.gravity.G, lead_, lead_});
        if (!crossing) sort_keys(n_, n_);
        launch_refit();
        launch_pack_groups();
        const OpeningCriterion criterion = e_.params.opening();
        // The last step's |a| scales the groups: its sums, in the last tree's order, are still the
        // engine's (the evaluation below replaces them).
        if (criterion.kind == MacKind::relative) launch_group_scales(order_.data());
        if (by_type_) launch_softening();
        CUDA_CHECK(cudaEventRecord(ev_[kRefitted], e_.stream));
        if (ranks_) append_lets(criterion);
        // On domains, the next structure takes the particles whose predicted keys lie in this
        // domain's range: the leavers' keys go to their owners, the arrivals' come here first.
        // After the LETs, by when the keys are made; the list kernels wait for the sort it starts.
        if (recut_now_) recut_now_ = cut_domains_anew();
        if (recut_now_)
            exchange_recut_keys();
        else if (crossing)
            exchange_crossing_keys();

        // The walk and the lists, queued (after the keys, whose predictions read the forces they
        // replace): the kick follows them on the stream, and the host builds the next structure
        // while the GPU works through both (kick()).
        CUDA_CHECK(cudaStreamWaitEvent(e_.stream, ev_[kKeysMade], 0));
        evaluation_ = e_.enqueue(criterion, ForcesTo::device, !walk_twice_, GroupScales::on_device, {}, ev_[kSorted]);
        forces_due_ = false;
        kick_due_ = true;
    });
}

void TreeGpuResident::append_lets(const OpeningCriterion& criterion)
{
    let_times_.clear();
    if (ranks_->ranks() == 1) return; // the whole tree is here
    auto phase = WallClock::now();
    const auto ranks = static_cast<std::size_t>(ranks_->ranks()), me = static_cast<std::size_t>(ranks_->rank());
    // This domain's boxes, of the positions the refit has just fitted, to every rank.
    const std::vector<DomainBox> mine = lets_.boxes(trees_[live_], body_.data(), e_.stream);
    std::vector<char> bytes(mine.size() * sizeof(DomainBox));
    if (!mine.empty()) std::memcpy(bytes.data(), mine.data(), bytes.size());
    ranks_->all_gather(bytes, all_boxes_);
    let_times_.emplace_back("LET boxes", seconds_since(phase));

    // Each other domain's LET, from the refitted moments and the positions: into device memory
    // that a direct peer reads, or into pinned memory that MPI sends from.
    phase = WallClock::now();
    if (!peers_connected_) {
        peers_.connect(*ranks_);
        peers_connected_ = true;
    }
    const DeviceLetSource source{e_.num_nodes,         e_.dev.next.data(),         e_.dev.is_leaf.data(),
                                 e_.dev.range.data(),  moments_.com_mass.data(),   moments_.quad.data(),
                                 moments_.size.data(), moments_.com_offset.data(), body_.data()};
    let_send_.assign(ranks, ByteSpan{});
    tickets_.resize(ranks);
    while (let_made_.size() < ranks) let_made_.push_back(std::make_unique<gpu::PinnedBuffer<char>>());
    LetTraffic traffic;
    std::vector<DomainBox> theirs;
    for (std::size_t r = 0; r < ranks; ++r) {
        const std::vector<char>& b = all_boxes_[r];
        if (r == me || b.empty()) continue;
        if (b.size() % sizeof(DomainBox) != 0)
            throw std::runtime_error("tree-gpu: a rank's domain boxes are malformed");
        theirs.resize(b.size() / sizeof(DomainBox));
        std::memcpy(theirs.data(), b.data(), b.size());
        // A direct peer's LET into its outbox, which it reads, and a ticket naming it through MPI;
        // another rank's into pinned memory, which MPI sends.
        const int to = static_cast<int>(r);
        const bool direct = peers_.direct(to);
        gpu::PinnedBuffer<char>& made = *let_made_[r];
        LetHeader header;
        const std::size_t size = lets_.make(
            source, theirs, criterion, theirs.front().box.centre,
            [&](std::size_t bytes) {
                if (direct) return peers_.outbox(to, bytes);
                made.reserve(bytes, "LETs made");
                return made.data();
            },
            header, e_.stream);
        if (direct) tickets_[r] = peers_.ticket(to, size, header);
        let_send_[r] = direct ? ByteSpan{tickets_[r].data(), tickets_[r].size()} : ByteSpan{made.data(), size};
        traffic.bytes_sent += size;
    }
    let_times_.emplace_back("LET walks", seconds_since(phase));

    phase = WallClock::now();
    while (let_in_.size() < ranks) let_in_.push_back(std::make_unique<gpu::PinnedBuffer<char>>());
    let_in_size_.assign(ranks, 0);
    ranks_->all_to_all(let_send_, [&](int r, std::size_t bytes) {
        gpu::PinnedBuffer<char>& in = *let_in_[static_cast<std::size_t>(r)];
        in.reserve(std::max<std::size_t>(bytes, 1), "LETs received");
        let_in_size_[static_cast<std::size_t>(r)] = bytes;
        return in.data();
    });
    let_times_.emplace_back("LET exchange", seconds_since(phase));

    // The received LETs, their headers checked here and their nodes on the device as they are
    // appended; a direct peer's read where it made it.
    phase = WallClock::now();
    std::vector<LetBytes> lets;
    std::size_t nodes = 0, particles = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
        if (r == me || let_in_size_[r] == 0) continue;
        LetHeader header{};
        std::size_t size = let_in_size_[r];
        const char* data = let_in_[r]->data();
        if (peers_.direct(static_cast<int>(r)))
            data = peers_.receive(static_cast<int>(r), data, size, header, size);
        else if (size >= sizeof header)
            std::memcpy(&header, data, sizeof header);
        else
            throw std::runtime_error("received LET is malformed: shorter than its header");
        lets.push_back(let_bytes_of_header(header, data, size));
        nodes += lets.back().nodes;
        particles += lets.back().particles;
        traffic.bytes_received += size;
    }
    traffic.nodes_received = nodes;
    traffic.particles_received = particles;
    let_traffic_ = traffic;
    ranks_->record(traffic);
    let_times_.emplace_back("LET append: checks", seconds_since(phase));
    phase = WallClock::now();
    const auto m = static_cast<std::size_t>(e_.num_nodes), n = static_cast<std::size_t>(n_);
    if (m + nodes > static_cast<std::size_t>(INT32_MAX) || n + particles > static_cast<std::size_t>(INT32_MAX))
        throw std::runtime_error("tree-gpu: the domain's tree and its LETs exceed 2^31 nodes or particles");
    CUDA_CHECK(cudaStreamSynchronize(e_.stream)); // the arrays may move
    for_each_array(e_.dev, [&](auto& a, const TreeArrayInfo& info) {
        if (info.extent == Extent::groups) return;
        const bool per_node = info.extent == Extent::nodes;
        a.reserve_keeping(per_node ? m + nodes : n + particles, info.per_theta ? 0 : (per_node ? m : n), info.name);
    });
    e_.d_sorted.reserve_keeping(n + particles, n, "sorted accelerations");
    lets_.append(lets, pointers_of(e_.dev), static_cast<int>(m), n_, moments_.com_mass.data(), e_.stream);
    e_.num_nodes = static_cast<int>(m + nodes);
    e_.num_particles = static_cast<int>(n + particles);
    if (peers_.any()) { // every rank has copied what it read from the others' outboxes
        ranks_->barrier();
        peers_.retire();
    }
    let_times_.emplace_back("LET append", seconds_since(phase));
}

void TreeGpuResident::gather_and_drift(double h, double dt, bool block_tick)
{
    const auto n = static_cast<std::size_t>(n_);
    const int nx = 1 - cur_;
    // The last key sort in spare_ is done (and its keys on the host) before the gather writes there.
    CUDA_CHECK(cudaStreamWaitEvent(e_.stream, ev_[kKeysCopied], 0));
    if (block_tick) sums_spare_.reserve(n, "sorted accelerations");
    gather_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(
        n_, order_.data(), h, e_.gravity.G, block_tick ? nullptr : e_.d_sorted.data(), vel_.data(), spare_.data(),
        caller_[cur_].data(), caller_[nx].data(), block_tick ? bins_[cur_].data() : nullptr,
        block_tick ? bins_[nx].data() : nullptr, block_tick ? e_.d_sorted.data() : nullptr,
        block_tick ? sums_spare_.data() : nullptr,
        identity_on_device_ ? IdentityGather{id_[cur_].data(), id_[nx].data(), type_[cur_].data(), type_[nx].data()}
                            : IdentityGather{},
        flags_.data());
    gpu::check_launch("gather_kernel", e_.stream);
    vel_.swap(spare_);
    drift_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(n_, dt, order_.data(), body_.data(), vel_.data(),
                                                          spare_.data(), flags_.data());
    gpu::check_launch("drift_kernel", e_.stream);
    body_.swap(spare_);
    if (block_tick) e_.d_sorted.swap(sums_spare_);
    cur_ = nx;
}

void TreeGpuResident::launch_key_sort(const Prediction& pred)
{
    launch_keys(pred);
    sort_keys(n_, n_);
}

void TreeGpuResident::launch_keys(const Prediction& pred)
{
    const auto n = static_cast<std::size_t>(n_);
    // The predictions' keys, with their index into the order of the next step's gather, left in
    // spare_ (this step's gather has read it), on the second stream, beside the refit, which does
    // not need them.
    auto* keys = reinterpret_cast<std::uint64_t*>(spare_.data());
    CUDA_CHECK(cudaStreamWaitEvent(copy_, ev_[kPredicted], 0));
    const auto points = thrust::make_transform_iterator(thrust::counting_iterator<int>(0), BoxOfPoint{pred});
    const PointBounds empty{{INFINITY, INFINITY, INFINITY}, {-INFINITY, -INFINITY, -INFINITY}, 1};
    std::size_t reduce_bytes = 0;
    CUDA_CHECK(
        cub::DeviceReduce::Reduce(nullptr, reduce_bytes, points, bounds_.data(), n_, MergeBounds{}, empty, copy_));
    reduce_temp_.reserve(reduce_bytes, "key box workspace");
    CUDA_CHECK(cub::DeviceReduce::Reduce(reduce_temp_.data(), reduce_bytes, points, bounds_.data(), n_, MergeBounds{},
                                         empty, copy_));
    key_box_kernel<<<1, kKeyFrameSample, 0, copy_>>>(pred, n_, bounds_.data(), domains_cube_, on_domains_cube_,
                                                     box_.data());
    gpu::check_launch("key_box_kernel", copy_);
    s_order_.reserve(n, "tree order");
    keys_kernel<<<blocks_for(n), kBlock, 0, copy_>>>(n_, pred, box_.data(), keys, s_order_.data());
    gpu::check_launch("keys_kernel", copy_);
    CUDA_CHECK(cudaEventRecord(ev_[kKeysMade], copy_));
}

void TreeGpuResident::sort_keys(int count, int structure)
{
    // `count` keys from the start of spare_, each with its index; where leavers are marked (all
    // bits set), they sort last and the structure takes the `structure` keys before them. The keys and the
    // sort's second buffers take 20 bytes a key of spare_'s 32 a particle.
    static_assert(sizeof(Vec4<double>) >= 2 * sizeof(std::uint64_t) + sizeof(std::uint32_t));
    const auto c = static_cast<std::size_t>(count);
    auto* keys = reinterpret_cast<std::uint64_t*>(spare_.data());
    auto* index = reinterpret_cast<std::uint32_t*>(keys + 2 * c);
    cub::DoubleBuffer<std::uint64_t> sorted_keys(keys, keys + c);
    cub::DoubleBuffer<std::uint32_t> sorted_index(s_order_.data(), index);
    // A Morton key has 63 bits; the leavers' mark has the 64th.
    const int bits = structure < count ? 64 : 3 * kMortonBitsPerAxis;
    sorted_n_ = structure;
    std::size_t sort_bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, sorted_keys, sorted_index, count, 0, bits, copy_));
    sort_temp_.reserve(sort_bytes, "key sort workspace");
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.data(), sort_bytes, sorted_keys, sorted_index, count, 0, bits,
                                               copy_));
    if (sorted_index.Current() != s_order_.data())
        copy_async(s_order_.data(), sorted_index.Current(), c, cudaMemcpyDeviceToDevice, copy_);
    CUDA_CHECK(cudaEventRecord(ev_[kSorted], copy_));
    h_keys_.reserve(static_cast<std::size_t>(sorted_n_), "keys");
    copy_async(h_keys_.data(), sorted_keys.Current(), static_cast<std::size_t>(sorted_n_), cudaMemcpyDeviceToHost,
               copy_);
    copy_async(h_box_.data(), box_.data(), 1, cudaMemcpyDeviceToHost, copy_);
    CUDA_CHECK(cudaEventRecord(ev_[kKeysCopied], copy_));
}

void TreeGpuResident::launch_refit()
{
    // The refit to the exact positions (the leaves, then each node when its children are done),
    // then the float tree the walk reads.
    MomentArrays t;
    t.particles = body_.data();
    t.next = e_.dev.next.data();
    t.is_leaf = e_.dev.is_leaf.data();
    t.range = e_.dev.range.data();
    t.cell_centre = cell_.data();
    t.size = moments_.size.data();
    t.com_mass = moments_.com_mass.data();
    t.quad = moments_.quad.data();
    t.com_offset = moments_.com_offset.data();
    t.boxes = boxes_.data();
    t.child_list = child_list_.data();
    t.first_child = first_child_.data();
    t.child_count = child_count_.data();
    const auto n = static_cast<std::size_t>(n_), m = static_cast<std::size_t>(e_.num_nodes);
    CUDA_CHECK(cudaMemsetAsync(arrived_.data(), 0, m * sizeof(int), e_.stream));
    refit_kernel<<<blocks_for(m), kBlock, 0, e_.stream>>>(e_.num_nodes, t, level_.data(), live_info_.root_side,
                                                          parent_.data(), child_count_.data(), arrived_.data());
    gpu::check_launch("refit_kernel", e_.stream);
    const TreeArrays<float, Pointer> out = pointers_of(e_.dev);
    pack_particles_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(n_, body_.data(), moments_.com_mass.data(),
                                                                   out.particles);
    gpu::check_launch("pack_particles_kernel", e_.stream);
    pack_nodes_kernel<<<blocks_for(m), kBlock, 0, e_.stream>>>(e_.num_nodes, moments_.com_mass.data(),
                                                               moments_.quad.data(), moments_.size.data(),
                                                               moments_.com_offset.data(), out);
    gpu::check_launch("pack_nodes_kernel", e_.stream);
}

void TreeGpuResident::launch_pack_groups()
{
    const auto g = static_cast<std::size_t>(e_.num_groups);
    pack_groups_kernel<<<blocks_for(g), kBlock, 0, e_.stream>>>(e_.num_groups, group_range_.data(),
                                                                pointers_of(e_.dev));
    gpu::check_launch("pack_groups_kernel", e_.stream);
}

void TreeGpuResident::launch_group_scales(const std::uint32_t* order)
{
    const auto g = static_cast<std::size_t>(e_.num_groups);
    e_.dev.mac_scale.reserve(g, "tree group scales");
    group_scales_kernel<<<blocks_for(g), kBlock, 0, e_.stream>>>(e_.num_groups, group_range_.data(), order,
                                                                 e_.d_sorted.data(), e_.dev.mac_scale.data());
    gpu::check_launch("group_scales_kernel", e_.stream);
}

void TreeGpuResident::launch_softening()
{
    const auto n = static_cast<std::size_t>(n_), m = static_cast<std::size_t>(e_.num_nodes);
    e_.d_node_half.reserve(m, "tree softening by type");
    e_.d_node_radius2.reserve(m, "tree softening by type");
    particle_half_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(n_, loaded_half_.data(), caller_[cur_].data(),
                                                                  e_.d_particle_half.data());
    gpu::check_launch("particle_half_kernel", e_.stream);
    double* sums[2] = {mass_half_sums_.data(), mass_half_sums_.data() + n};
    for (int power = 1; power <= 2; ++power) {
        const auto in = thrust::make_transform_iterator(thrust::counting_iterator<int>(0),
                                                        MassHalfPower{e_.d_particle_half.data(), body_.data(), power});
        std::size_t scan_bytes = 0;
        CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, in, sums[power - 1], n_, e_.stream));
        scan_temp_.reserve(scan_bytes, "softening scan workspace");
        CUDA_CHECK(cub::DeviceScan::InclusiveSum(scan_temp_.data(), scan_bytes, in, sums[power - 1], n_, e_.stream));
    }
    node_half_kernel<<<blocks_for(m), kBlock, 0, e_.stream>>>(e_.num_nodes, e_.dev.range.data(),
                                                              moments_.com_mass.data(), sums[0], sums[1],
                                                              e_.d_node_half.data(), e_.d_node_radius2.data());
    gpu::check_launch("node_half_kernel", e_.stream);
    e_.softening_by_type = true;
}

void TreeGpuResident::launch_kick(double h)
{
    const auto n = static_cast<std::size_t>(n_);
    CUDA_CHECK(cudaEventRecord(ev_[kKickStart], e_.stream));
    kick_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(n_, h, e_.gravity.G, e_.d_sorted.data(), e_.d_cut_flag(),
                                                         vel_.data(), flags_.data());
    gpu::check_launch("kick_kernel", e_.stream);
    CUDA_CHECK(cudaEventRecord(ev_[kKickEnd], e_.stream));
    CUDA_CHECK(cudaMemcpyAsync(h_flags_.data(), flags_.data(), sizeof(int), cudaMemcpyDeviceToHost, e_.stream));
}

bool TreeGpuResident::kick(double h)
{
    bool finite = false;
    guarded([&] {
        if (std::exchange(failed_, false)) return;
        if (!kick_due_) throw std::logic_error("tree-gpu: a kick on a device store without its forces");
        launch_kick(h);
        build_next_structure();
        // The evaluation's checks; an overflowed one-pass walk is evaluated again, and the kick,
        // which skipped the overflowed one's sums (kick_kernel), runs after it.
        Forces unused; // the forces stay on the device
        e_.finish(*evaluation_, unused);
        evaluation_.reset();
        if (e_.walks == 3) launch_kick(h);
        launch_particle_costs(); // before the crossers take theirs along
        CUDA_CHECK(cudaStreamSynchronize(e_.stream));
        kick_due_ = false;
        collect_times();
        finite = h_flags_[0] == 0;
    });
    return finite;
}

void TreeGpuResident::collect_times(bool sorted)
{
    float ms_drift = 0, ms_refit = 0, ms_sort = 0, ms_kick = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms_drift, ev_[kStart], ev_[kPredicted]));
    CUDA_CHECK(cudaEventElapsedTime(&ms_refit, ev_[kPredicted], ev_[kRefitted]));
    if (sorted) CUDA_CHECK(cudaEventElapsedTime(&ms_sort, ev_[kPredicted], ev_[kSorted]));
    CUDA_CHECK(cudaEventElapsedTime(&ms_kick, ev_[kKickStart], ev_[kKickEnd]));
    PhaseTimes times = {{"kick-drift", ms_drift * 1e-3}, {"refit", ms_refit * 1e-3}};
    times.insert(times.end(), e_.times.begin(), e_.times.end());
    times.emplace_back("kick", ms_kick * 1e-3);
    if (ranks_) {
        times.insert(times.end(), let_times_.begin(), let_times_.end());
        times.insert(times.end(), crossing_times_.begin(), crossing_times_.end());
        crossing_times_.clear();
    }
    double phases = 0;
    for (const auto& [name, seconds] : times) phases += seconds;
    times.emplace_back("other", std::max(0.0, seconds_since(step_start_) - phases));
    // Beside the GPU's phases; what they took beyond them is in "other".
    times.emplace_back("keys and sort", ms_sort * 1e-3);
    times.emplace_back("look-ahead build", std::exchange(lookahead_report_seconds_, 0.0));
    times.insert(times.end(), lookahead_report_.begin(), lookahead_report_.end());
    lookahead_report_.clear();
    e_.times = times;
}

void TreeGpuResident::make_potentials()
{
    if (!potentials_missing_) return;
    // Into a buffer of their own, given back after: the sums the next kick goes on from stay the
    // step's to the bit.
    const auto n = static_cast<std::size_t>(n_);
    gpu::DeviceBuffer<float4> with_potentials;
    with_potentials.reserve(n, "potentials");
    if (partial_walk_) {
        // A block tick walked only the groups holding a due particle, so its lists give no
        // potential to the others: every group walks the tree as it stands, whose forces replace
        // the sums for as long as the potentials take them.
        gpu::DeviceBuffer<float4> kept;
        kept.reserve(n, "potentials");
        copy_async(kept.data(), e_.d_sorted.data(), n, cudaMemcpyDeviceToDevice, e_.stream);
        e_.num_groups = live_info_.groups;
        launch_pack_groups();
        const OpeningCriterion criterion = e_.params.opening();
        if (criterion.kind == MacKind::relative) launch_group_scales(nullptr);
        const TreeGpuEngine::Impl::Evaluation full =
            e_.enqueue(criterion, ForcesTo::device, false, GroupScales::on_device, {}, nullptr);
        Forces unused;
        e_.finish(full, unused);
        e_.evaluate_potentials(with_potentials.data());
        copy_async(e_.d_sorted.data(), kept.data(), n, cudaMemcpyDeviceToDevice, e_.stream);
        CUDA_CHECK(cudaStreamSynchronize(e_.stream)); // before `kept` goes
        partial_walk_ = false;
    } else {
        e_.evaluate_potentials(with_potentials.data());
    }
    potential_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(n_, with_potentials.data(), e_.d_sorted.data());
    gpu::check_launch("potential_kernel", e_.stream);
    CUDA_CHECK(cudaStreamSynchronize(e_.stream)); // before the buffer goes
    potentials_missing_ = false;
}

void TreeGpuResident::store(ParticleSet& p)
{
    if (!loaded_) throw std::logic_error("tree-gpu: store before load");
    if (forces_due_ || kick_due_) throw std::logic_error("tree-gpu: store in the middle of a step");
    // Where particles crossed between domains, the set becomes this domain's, in the device's
    // order, with their IDs and types; that order is the callers' from then on.
    const bool crossed = crossed_;
    if (!crossed && p.size() != static_cast<std::size_t>(n_))
        throw std::invalid_argument("tree-gpu: the particle set to store into has another size");
    const auto n = static_cast<std::size_t>(n_);
    make_potentials();
    if (crossed) {
        p.pos.resize(3, n_);
        p.vel.resize(3, n_);
        p.mass.resize(n_);
        p.id.resize(n);
        p.type.resize(n);
        p.extra.clear();
    }
    p.acc.resize(3, n_);
    p.pot.resize(n_);
    reserve_chunks();
    const std::size_t chunks = (n + kChunk - 1) / kChunk;
    const auto send = [&](std::size_t c) { // chunk c's copies, into the staging chunk it uses
        Chunk& ch = chunks_[c % 2];
        const std::size_t first = c * kChunk, count = std::min(kChunk, n - first);
        copy_async(ch.body.data(), body_.data() + first, count, cudaMemcpyDeviceToHost, e_.stream);
        copy_async(ch.vel.data(), vel_.data() + first, count, cudaMemcpyDeviceToHost, e_.stream);
        copy_async(ch.sums.data(), e_.d_sorted.data() + first, count, cudaMemcpyDeviceToHost, e_.stream);
        if (!crossed) // else written in the device's order
            copy_async(ch.caller.data(), caller_[cur_].data() + first, count, cudaMemcpyDeviceToHost, e_.stream);
        if (crossed) {
            copy_async(ch.id.data(), id_[cur_].data() + first, count, cudaMemcpyDeviceToHost, e_.stream);
            copy_async(ch.type.data(), type_[cur_].data() + first, count, cudaMemcpyDeviceToHost, e_.stream);
        }
        CUDA_CHECK(cudaEventRecord(ch.copied, e_.stream));
    };
    send(0);
    const double G = e_.gravity.G;
    for (std::size_t c = 0; c < chunks; ++c) {
        if (c + 1 < chunks) send(c + 1); // beside this chunk's conversion
        const Chunk& ch = chunks_[c % 2];
        CUDA_CHECK(cudaEventSynchronize(ch.copied));
        const auto count = static_cast<std::int64_t>(std::min(kChunk, n - c * kChunk));
#pragma omp parallel for schedule(static)
        for (std::int64_t k = 0; k < count; ++k) {
            const auto i =
                crossed ? static_cast<Eigen::Index>(c * kChunk) + k : static_cast<Eigen::Index>(ch.caller[k]);
            const Vec4<double>&b = ch.body[k], &v = ch.vel[k];
            if (crossed) {
                p.mass[i] = b.w;
                p.id[static_cast<std::size_t>(i)] = ch.id[k];
                p.type[static_cast<std::size_t>(i)] = ch.type[k];
            }
            const float4 s = ch.sums[k];
            const Vec4<double> a{G * s.x, G * s.y, G * s.z, G * s.w}; // as the device converts them
            p.pos.col(i) << b.x, b.y, b.z;
            p.vel.col(i) << v.x, v.y, v.z;
            p.acc.col(i) << a.x, a.y, a.z;
            p.pot[i] = a.w;
        }
    }
    if (crossed) { // the set's order is the callers' now
        crossed_ = false;
        loaded_types_ = p.type;
        thrust::sequence(thrust::cuda::par.on(e_.stream), caller_[cur_].data(), caller_[cur_].data() + n, 0u);
        CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    }
}

} // namespace grove
