// Each step's crossers between domains on the resident store (tree_resident.cuh): the particles
// whose predicted keys leave this domain's key range go to their owners at the step's end, so that
// the next step's trees hold each domain's own particles. Left to drift between the domains'
// follows, a particle across a cut makes its cells overlap the other domain's, whose LETs then
// open everything near it (docs/parallel-design.md).
//
// The next structure is built on the host from the sorted keys while the GPU evaluates this step
// (the look-ahead): so the crossers' keys move first, before the sort, and their state after the
// step, into the slots that their keys' index named.
#include "gpu/tree_resident.cuh"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "gpu/crosser_records.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/resident_tree_kernels.cuh"
#include "tree/hilbert.hpp"

namespace grove {

namespace {

// Whether the particle of key `keys[k]` belongs to another domain than `me`.
struct LeavesDomain {
    const std::uint64_t* keys;
    const std::uint64_t* first;
    int ranks, me;
    __device__ bool operator()(std::uint32_t k) const
    {
        return key_range_owner(first, ranks, hilbert_key_of_morton(keys[k])) != me;
    }
};

// The leavers' keys and their owners.
__global__ void gather_keys_kernel(int count, const std::uint32_t* slot, const std::uint64_t* keys,
                                   const std::uint64_t* first, int ranks, std::uint64_t* out, int* owner)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= count) return;
    const std::uint64_t key = keys[slot[j]];
    out[j] = key;
    owner[j] = key_range_owner(first, ranks, hilbert_key_of_morton(key));
}

// Before the sort: the leavers' keys marked to sort last, the arrivals' keys after the own with
// the slots they will take, and the stayers that move down to fill slots get their new index.
__global__ void place_keys_kernel(int n, int leavers, int arrivals, int moves, const std::uint32_t* slot,
                                  const std::uint64_t* arrival_key, std::uint64_t* keys, std::uint32_t* index)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < leavers) {
        keys[slot[t]] = ~std::uint64_t{0};
        return;
    }
    t -= leavers;
    const std::uint32_t* arrival_slot = slot + leavers;
    if (t < arrivals) {
        keys[n + t] = arrival_key[t];
        index[n + t] = arrival_slot[t];
        return;
    }
    t -= arrivals;
    const std::uint32_t* from = arrival_slot + arrivals;
    const std::uint32_t* to = from + moves;
    if (t < moves) index[from[t]] = to[t];
}

constexpr std::uint64_t kBeyondEveryKey = std::uint64_t{1} << 63; // keys have 63 bits

} // namespace

void TreeGpuResident::find_domains_cut(const ParticleSet& p)
{
    first_key_.clear();
    crossed_ = false;
    identity_on_device_ = on_domains_cube_ && domain_crossers_each_step();
    recut_steps_ = identity_on_device_ ? domain_recut_steps() : 0;
    steps_since_load_ = 0;
    costs_known_ = false;
    recut_.active = after_recut_ = false;
    if (!on_domains_cube_) return;
    if (identity_on_device_) { // in the loaded order, as the state
        const std::size_t n = p.size();
        if (p.id.size() != n || p.type.size() != n)
            throw std::invalid_argument("tree-gpu: a domain's particles need an ID and a type each");
        for (int b = 0; b < 2; ++b) {
            id_[b].reserve(n, "resident particle IDs");
            type_[b].reserve(n, "resident particle types");
        }
        CUDA_CHECK(cudaMemcpy(id_[cur_].data(), p.id.data(), n * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(type_[cur_].data(), p.type.data(), n * sizeof(std::uint8_t), cudaMemcpyHostToDevice));
    }
    // Each rank's least key; the ranges between them are the ranks' (a rank holding nothing, or
    // whose least key lies above a later rank's, takes the range it leaves).
    std::uint64_t least = kBeyondEveryKey;
    const auto n = static_cast<Eigen::Index>(p.size());
#pragma omp parallel for schedule(static) reduction(min : least)
    for (Eigen::Index i = 0; i < n; ++i)
        least = std::min(least, hilbert_key(domains_cube_.cell(p.pos(0, i), 0), domains_cube_.cell(p.pos(1, i), 1),
                                            domains_cube_.cell(p.pos(2, i), 2)));
    const auto* bytes = reinterpret_cast<const char*>(&least);
    std::vector<std::vector<char>> all;
    ranks_->all_gather(std::vector<char>(bytes, bytes + sizeof least), all);
    const auto ranks = static_cast<std::size_t>(ranks_->ranks());
    first_key_.assign(ranks + 1, kBeyondEveryKey);
    for (std::size_t r = ranks; r-- > 1;) {
        if (all[r].size() != sizeof least) throw std::runtime_error("tree-gpu: a rank's least key came malformed");
        std::uint64_t theirs = 0;
        std::memcpy(&theirs, all[r].data(), sizeof theirs);
        first_key_[r] = std::min(theirs, first_key_[r + 1]);
    }
    first_key_[0] = 0;
    d_first_key_.reserve(ranks + 1, "domain key ranges");
    CUDA_CHECK(cudaMemcpyAsync(d_first_key_.data(), first_key_.data(), (ranks + 1) * sizeof(std::uint64_t),
                               cudaMemcpyHostToDevice, e_.stream));
    CUDA_CHECK(cudaStreamSynchronize(e_.stream));
}

StateArrays TreeGpuResident::state_arrays()
{
    return StateArrays{body_.data(),
                       vel_.data(),
                       e_.d_sorted.data(),
                       caller_[cur_].data(),
                       id_[cur_].data(),
                       type_[cur_].data(),
                       costs_known_ ? cost_.data() : nullptr};
}

bool TreeGpuResident::crossers_each_step() const
{
    return identity_on_device_; // set by find_domains_cut with the key ranges
}

void TreeGpuResident::exchange_crossing_keys()
{
    const auto start = WallClock::now();
    const auto n = static_cast<std::size_t>(n_);
    const int ranks = ranks_->ranks(), me = ranks_->rank();
    auto* keys = reinterpret_cast<std::uint64_t*>(spare_.data());
    // The leavers' slots, ascending, where the sort's buffers will lie (free until it runs).
    const std::size_t room = spare_.capacity() * sizeof(Vec4<double>) / sizeof(std::uint64_t);
    auto* selected = reinterpret_cast<std::uint32_t*>(keys + 3 * (room / 4));
    const LeavesDomain leaves{keys, d_first_key_.data(), ranks, me};
    d_crossing_count_.reserve(1, "crossers");
    h_crossing_count_.reserve(1, "crossers");
    std::size_t select_bytes = 0;
    const thrust::counting_iterator<std::uint32_t> slots(0);
    CUDA_CHECK(
        cub::DeviceSelect::If(nullptr, select_bytes, slots, selected, d_crossing_count_.data(), n_, leaves, copy_));
    crossing_temp_.reserve(select_bytes, "crossers workspace");
    CUDA_CHECK(cub::DeviceSelect::If(crossing_temp_.data(), select_bytes, slots, selected, d_crossing_count_.data(), n_,
                                     leaves, copy_));
    copy_async(h_crossing_count_.data(), d_crossing_count_.data(), 1, cudaMemcpyDeviceToHost, copy_);
    copy_async(h_box_.data(), box_.data(), 1, cudaMemcpyDeviceToHost, copy_);
    CUDA_CHECK(cudaStreamSynchronize(copy_));
    const int finite = h_box_[0].finite == 1;
    // A domain keeps one particle at least (a store holds some).
    const auto found = static_cast<std::size_t>(finite ? h_crossing_count_[0] : 0);
    const std::size_t kept = found == n ? 1 : 0, leaving = found - kept;
    d_crossing_key_.reserve(std::max<std::size_t>(leaving, 1), "crossers' keys");
    h_crossing_key_.reserve(std::max<std::size_t>(leaving, 1), "crossers' keys");
    h_crossing_slot_.reserve(std::max<std::size_t>(leaving, 1), "crossers' slots");
    d_crossing_owner_.reserve(std::max<std::size_t>(leaving, 1), "crossers' owners");
    h_crossing_owner_.reserve(std::max<std::size_t>(leaving, 1), "crossers' owners");
    if (leaving > 0) {
        gather_keys_kernel<<<blocks_for(leaving), kBlock, 0, copy_>>>(static_cast<int>(leaving), selected + kept, keys,
                                                                      d_first_key_.data(), ranks,
                                                                      d_crossing_key_.data(), d_crossing_owner_.data());
        gpu::check_launch("gather_keys_kernel", copy_);
        copy_async(h_crossing_slot_.data(), selected + kept, leaving, cudaMemcpyDeviceToHost, copy_);
        copy_async(h_crossing_key_.data(), d_crossing_key_.data(), leaving, cudaMemcpyDeviceToHost, copy_);
        copy_async(h_crossing_owner_.data(), d_crossing_owner_.data(), leaving, cudaMemcpyDeviceToHost, copy_);
        CUDA_CHECK(cudaStreamSynchronize(copy_));
    }
    crossing_times_.emplace_back("crossers: keys found", seconds_since(start));
    auto phase = WallClock::now();

    // Grouped by owner (ascending slots within each), each owner's keys after this rank's flag.
    Crossing& c = crossing_;
    const auto R = static_cast<std::size_t>(ranks);
    const int* owner = h_crossing_owner_.data();
    c.sent_count.assign(R, 0);
    for (std::size_t j = 0; j < leaving; ++j) {
        if (owner[j] == me || owner[j] < 0 || owner[j] >= ranks)
            throw std::logic_error("tree-gpu: a leaver owned by its own domain, or by none");
        ++c.sent_count[static_cast<std::size_t>(owner[j])];
    }
    std::vector<std::size_t> at(R, 0);
    for (std::size_t r = 1; r < R; ++r) at[r] = at[r - 1] + c.sent_count[r - 1];
    c.sent.resize(leaving);
    crossing_mail_.assign(R, {});
    for (std::size_t r = 0; r < R; ++r) {
        if (static_cast<int>(r) == me) continue;
        crossing_mail_[r].resize(sizeof(int) + c.sent_count[r] * sizeof(std::uint64_t));
        std::memcpy(crossing_mail_[r].data(), &finite, sizeof(int));
    }
    std::vector<std::size_t> filled(R, 0);
    for (std::size_t j = 0; j < leaving; ++j) {
        const auto r = static_cast<std::size_t>(owner[j]);
        c.sent[at[r] + filled[r]] = h_crossing_slot_[j];
        std::memcpy(crossing_mail_[r].data() + sizeof(int) + filled[r] * sizeof(std::uint64_t), &h_crossing_key_[j],
                    sizeof(std::uint64_t));
        ++filled[r];
    }
    std::vector<ByteSpan> send(R);
    for (std::size_t r = 0; r < R; ++r) send[r] = {crossing_mail_[r].data(), crossing_mail_[r].size()};
    const std::vector<std::vector<char>> received = all_to_all(*ranks_, send);
    crossing_times_.emplace_back("crossers: keys exchanged", seconds_since(phase));
    phase = WallClock::now();
    // Everyone moves, or (a rank's predictions not finite: its next structure is built from
    // positions) nobody does.
    bool everyone = finite != 0;
    c.arrived_count.assign(R, 0);
    std::size_t arriving = 0;
    for (std::size_t r = 0; r < R; ++r) {
        if (static_cast<int>(r) == me) continue;
        const std::vector<char>& m = received[r];
        if (m.size() < sizeof(int) || (m.size() - sizeof(int)) % sizeof(std::uint64_t) != 0)
            throw std::runtime_error("tree-gpu: a rank's crossers' keys came malformed");
        int theirs = 0;
        std::memcpy(&theirs, m.data(), sizeof theirs);
        everyone = everyone && theirs != 0;
        c.arrived_count[r] = (m.size() - sizeof(int)) / sizeof(std::uint64_t);
        arriving += c.arrived_count[r];
    }
    c.active = everyone && (leaving > 0 || arriving > 0);
    let_traffic_.crossers_sent = c.active ? leaving : 0;
    let_traffic_.crossers_received = c.active ? arriving : 0;
    ranks_->record(let_traffic_);
    if (!c.active) {
        sort_keys(n_, n_);
        return;
    }
    c.leave.assign(h_crossing_slot_.data(), h_crossing_slot_.data() + leaving);
    c.plan = plan_slots(n, c.leave, arriving);
    const std::size_t total = n + arriving, count = c.plan.count;
    if (total > static_cast<std::size_t>(INT32_MAX / 2))
        throw std::runtime_error("tree-gpu: a domain of more than 2^30 particles");

    // The sort's room for the own keys and the arrivals' (20 bytes a key), kept with the own keys;
    // the next gather's for the particles after.
    const std::size_t need = std::max(count, (20 * total + sizeof(Vec4<double>) - 1) / sizeof(Vec4<double>));
    const std::size_t keep = (n * sizeof(std::uint64_t) + sizeof(Vec4<double>) - 1) / sizeof(Vec4<double>);
    if (need > spare_.capacity()) {
        CUDA_CHECK(cudaStreamSynchronize(copy_));
        spare_.reserve_keeping(need, keep, "resident gather and key sort");
    }
    keys = reinterpret_cast<std::uint64_t*>(spare_.data());
    s_order_.reserve_keeping(total, n, "tree order");
    // The slots (the leavers', the arrivals', the moved stayers' from and to) and the arrivals' keys.
    const std::size_t moves = c.plan.moves.size();
    const std::size_t slots_up = leaving + arriving + 2 * moves;
    h_crossing_slot_.reserve(std::max<std::size_t>(slots_up, 1), "crossers' slots");
    d_crossing_slot_.reserve(std::max<std::size_t>(slots_up, 1), "crossers' slots");
    h_crossing_key_.reserve(std::max<std::size_t>(arriving, 1), "crossers' keys");
    d_crossing_key_.reserve(std::max<std::size_t>(arriving, 1), "crossers' keys");
    std::uint32_t* up = h_crossing_slot_.data();
    for (std::size_t j = 0; j < leaving; ++j) up[j] = static_cast<std::uint32_t>(c.leave[j]);
    up += leaving;
    for (std::size_t a = 0; a < arriving; ++a) up[a] = static_cast<std::uint32_t>(c.plan.arrival[a]);
    up += arriving;
    for (std::size_t t = 0; t < moves; ++t) {
        up[t] = static_cast<std::uint32_t>(c.plan.moves[t].first);
        up[moves + t] = static_cast<std::uint32_t>(c.plan.moves[t].second);
    }
    std::size_t a = 0;
    for (std::size_t r = 0; r < R; ++r)
        for (std::size_t j = 0; j < c.arrived_count[r]; ++j, ++a)
            std::memcpy(&h_crossing_key_[a], received[r].data() + sizeof(int) + j * sizeof(std::uint64_t),
                        sizeof(std::uint64_t));
    copy_async(d_crossing_slot_.data(), h_crossing_slot_.data(), slots_up, cudaMemcpyHostToDevice, copy_);
    if (arriving > 0)
        copy_async(d_crossing_key_.data(), h_crossing_key_.data(), arriving, cudaMemcpyHostToDevice, copy_);
    place_keys_kernel<<<blocks_for(slots_up), kBlock, 0, copy_>>>(
        n_, static_cast<int>(leaving), static_cast<int>(arriving), static_cast<int>(moves), d_crossing_slot_.data(),
        d_crossing_key_.data(), keys, s_order_.data());
    gpu::check_launch("place_keys_kernel", copy_);
    sort_keys(static_cast<int>(total), static_cast<int>(count));
    // The pinned slots are read by the copy above; the records' exchange writes them again after
    // the step, which waits for the keys.
    crossing_times_.emplace_back("crossers: keys placed", seconds_since(phase));
}

void TreeGpuResident::exchange_crossing_records()
{
    Crossing& c = crossing_;
    if (!std::exchange(c.active, false)) return;
    const auto start = WallClock::now();
    const auto n = static_cast<std::size_t>(n_);
    const std::size_t leaving = c.sent.size(), moves = c.plan.moves.size(), count = c.plan.count;
    const std::size_t arriving = c.plan.arrival.size();
    const auto R = static_cast<std::size_t>(ranks_->ranks());
    const auto me = static_cast<std::size_t>(ranks_->rank());
    h_crossing_slot_.reserve(std::max<std::size_t>({leaving, arriving, 2 * moves, 1}), "crossers' slots");
    d_crossing_slot_.reserve(std::max<std::size_t>({leaving, arriving, 2 * moves, 1}), "crossers' slots");
    d_crossers_.reserve(std::max<std::size_t>({leaving, arriving, 1}), "crossers");
    h_crossers_.reserve(std::max<std::size_t>(leaving, 1), "crossers");
    std::vector<std::size_t> at(R + 1, 0), from(R + 1, 0); // each owner's first leaver, each sender's first arrival
    for (std::size_t r = 0; r < R; ++r) {
        at[r + 1] = at[r] + c.sent_count[r];
        from[r + 1] = from[r] + c.arrived_count[r];
    }
    // The leavers, grouped by owner: into a direct peer's outbox, where it reads them GPU to GPU,
    // else to pinned memory, which MPI sends.
    if (leaving > 0) {
        std::copy(c.sent.begin(), c.sent.end(), h_crossing_slot_.data());
        copy_async(d_crossing_slot_.data(), h_crossing_slot_.data(), leaving, cudaMemcpyHostToDevice, e_.stream);
        gather_crossers_kernel<<<blocks_for(leaving), kBlock, 0, e_.stream>>>(
            static_cast<int>(leaving), d_crossing_slot_.data(), state_arrays(), d_crossers_.data());
        gpu::check_launch("gather_crossers_kernel", e_.stream);
        for (std::size_t r = 0; r < R; ++r) {
            if (c.sent_count[r] == 0) continue;
            const int to = static_cast<int>(r);
            CrosserRecord* into =
                peers_.direct(to)
                    ? reinterpret_cast<CrosserRecord*>(peers_.outbox(to, c.sent_count[r] * sizeof(CrosserRecord)))
                    : h_crossers_.data() + at[r];
            copy_async(into, d_crossers_.data() + at[r], c.sent_count[r], cudaMemcpyDefault, e_.stream);
        }
        CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    }
    crossing_mail_.assign(R, {});
    std::vector<ByteSpan> send(R);
    for (std::size_t r = 0; r < R; ++r) {
        if (r == me || c.sent_count[r] == 0) continue;
        const int to = static_cast<int>(r);
        if (peers_.direct(to)) {
            crossing_mail_[r] = peers_.ticket(to, c.sent_count[r] * sizeof(CrosserRecord), LetHeader{});
            send[r] = {crossing_mail_[r].data(), crossing_mail_[r].size()};
        } else {
            send[r] = {reinterpret_cast<const char*>(h_crossers_.data() + at[r]),
                       c.sent_count[r] * sizeof(CrosserRecord)};
        }
    }
    crossing_times_.emplace_back("crossers: state gathered", seconds_since(start));
    auto phase = WallClock::now();
    const std::vector<std::vector<char>> received = all_to_all(*ranks_, send);
    crossing_times_.emplace_back("crossers: state exchanged", seconds_since(phase));
    phase = WallClock::now();
    // The arrivals, by sender, into one device array: read from a direct peer's outbox, or copied up.
    for (std::size_t r = 0; r < R; ++r) {
        if (r == me) continue;
        const std::vector<char>& m = received[r];
        const std::size_t count_r = c.arrived_count[r];
        const int sender = static_cast<int>(r);
        if (count_r == 0) {
            if (!m.empty())
                throw std::runtime_error("tree-gpu: a rank's crossers came in another number than their keys");
            continue;
        }
        const char* records = m.data();
        std::size_t bytes = m.size();
        if (peers_.direct(sender)) {
            LetHeader unused{};
            records = peers_.receive(sender, m.data(), m.size(), unused, bytes);
        }
        if (bytes != count_r * sizeof(CrosserRecord))
            throw std::runtime_error("tree-gpu: a rank's crossers came in another number than their keys");
        copy_async(d_crossers_.data() + from[r], reinterpret_cast<const CrosserRecord*>(records), count_r,
                   cudaMemcpyDefault, e_.stream);
    }
    CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    if (peers_.any()) { // every rank has copied what it read from the others' outboxes
        ranks_->barrier();
        peers_.retire();
    }
    // The state's arrays take the new count (a growth keeps this step's state).
    const std::size_t keep = n;
    body_.reserve_keeping(count, keep, "resident positions");
    vel_.reserve_keeping(count, keep, "resident velocities");
    e_.d_sorted.reserve_keeping(count, keep, "sorted accelerations");
    caller_[cur_].reserve_keeping(count, keep, "resident particle order");
    caller_[1 - cur_].reserve(count, "resident particle order");
    id_[cur_].reserve_keeping(count, keep, "resident particle IDs");
    id_[1 - cur_].reserve(count, "resident particle IDs");
    type_[cur_].reserve_keeping(count, keep, "resident particle types");
    type_[1 - cur_].reserve(count, "resident particle types");
    if (costs_known_) cost_.reserve_keeping(count, keep, "particle costs");
    order_.reserve(count, "tree order");
    spare_.reserve(count, "resident gather and key sort");
    if (moves > 0) {
        for (std::size_t t = 0; t < moves; ++t) {
            h_crossing_slot_[t] = static_cast<std::uint32_t>(c.plan.moves[t].first);
            h_crossing_slot_[moves + t] = static_cast<std::uint32_t>(c.plan.moves[t].second);
        }
        copy_async(d_crossing_slot_.data(), h_crossing_slot_.data(), 2 * moves, cudaMemcpyHostToDevice, e_.stream);
        move_stayers_kernel<<<blocks_for(moves), kBlock, 0, e_.stream>>>(static_cast<int>(moves),
                                                                         d_crossing_slot_.data(), state_arrays());
        gpu::check_launch("move_stayers_kernel", e_.stream);
        CUDA_CHECK(cudaStreamSynchronize(e_.stream)); // before the pinned slots are written again
    }
    if (arriving > 0) {
        for (std::size_t a = 0; a < arriving; ++a) h_crossing_slot_[a] = static_cast<std::uint32_t>(c.plan.arrival[a]);
        copy_async(d_crossing_slot_.data(), h_crossing_slot_.data(), arriving, cudaMemcpyHostToDevice, e_.stream);
        place_arrivals_kernel<<<blocks_for(arriving), kBlock, 0, e_.stream>>>(
            static_cast<int>(arriving), d_crossing_slot_.data(), d_crossers_.data(), state_arrays());
        gpu::check_launch("place_arrivals_kernel", e_.stream);
        CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    }
    n_ = static_cast<int>(count);
    e_.num_particles = n_;
    crossed_ = true;
    crossing_times_.emplace_back("crossers: state placed", seconds_since(phase));
}

} // namespace grove
