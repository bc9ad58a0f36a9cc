// The domains cut anew on the GPUs, in a frame that moves (tree_resident.cuh): every
// domain_recut_steps() steps of a store that moves crossers, the next structure's keys are made in
// the load's cube moved by a new draw (tree/key_frame.hpp: moved_domains_frame), each rank sends
// samples of them weighted by its particles' last costs, every rank finds the same new key ranges
// (core/key_ranges.hpp), and every particle goes to its owner: half to all of a rank's particles
// change domain at a cut, too many for the crossers' slot plans (tree_resident_crossers.cu), so the
// owners are sorted on the device and each owner's keys, then state, go in one piece, GPU to GPU
// between direct peers. The domains' frame then does not stay put, and neither do the force errors
// its grid leaves; and the domains are cut to equal work, not counts.
#include "gpu/tree_resident.cuh"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>

#include "gpu/crosser_records.cuh"
#include "gpu/cuda_check.cuh"
#include "gpu/resident_tree_kernels.cuh"
#include "tree/hilbert.hpp"

namespace grove {

namespace {

// Samples of a rank's keys: enough that a cut is off by a few thousandths of a domain at most.
constexpr int kRecutSamples = 8192;
constexpr int kSampleThreads = 128;
constexpr std::uint64_t kKeysEnd = std::uint64_t{1} << 63; // keys have 63 bits

// Sample j: the Peano-Hilbert key of the first of the j-th of `samples` equal runs of the keys (in
// the order of the current tree, so that a run is a few neighbouring leaves), weighed by the run's
// costs (each particle's at order[i], the sums' order) or its count.
__global__ void sample_keys_kernel(int n, int samples, const std::uint64_t* keys, const std::uint32_t* order,
                                   const float* cost, WeightedKey* out)
{
    using Reduce = cub::BlockReduce<double, kSampleThreads>;
    __shared__ typename Reduce::TempStorage temp;
    const long long j = blockIdx.x;
    const long long begin = j * n / samples, end = (j + 1) * n / samples;
    double w = 0;
    for (long long i = begin + threadIdx.x; i < end; i += kSampleThreads) w += cost ? cost[order[i]] : 1.0;
    const double total = Reduce(temp).Sum(w);
    if (threadIdx.x == 0) out[j] = {hilbert_key_of_morton(keys[begin]), total};
}

// Each particle of a group costs what its group's lists hold: its cells at `per_cell` and its
// leaves at `per_leaf` (the particles a leaf of the lists holds on average).
__global__ void particle_costs_kernel(int groups, const ParticleRange* range, const long long* nodes,
                                      const long long* leaves, double per_cell, double per_leaf, float* cost)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= groups) return;
    const auto c =
        static_cast<float>(per_cell * static_cast<double>(nodes[g]) + per_leaf * static_cast<double>(leaves[g]));
    for (int i = range[g].begin; i < range[g].end; ++i) cost[i] = c;
}

// Each particle's owner under the new ranges, its slot, and the count of each owner's.
__global__ void owners_kernel(int n, const std::uint64_t* keys, const std::uint64_t* first, int ranks,
                              std::uint32_t* owner, std::uint32_t* slot, int* count)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const int r = key_range_owner(first, ranks, hilbert_key_of_morton(keys[k]));
    owner[k] = static_cast<std::uint32_t>(r);
    slot[k] = static_cast<std::uint32_t>(k);
    atomicAdd(count + r, 1);
}

__global__ void keys_of_slots_kernel(int n, const std::uint32_t* slot, const std::uint64_t* keys, std::uint64_t* out)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) out[j] = keys[slot[j]];
}

__global__ void count_up_kernel(int n, std::uint32_t* index)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) index[j] = static_cast<std::uint32_t>(j);
}

// The bits of an owner's number (at least one, for the sort).
int owner_bits(int ranks)
{
    int bits = 1;
    while ((1 << bits) < ranks) ++bits;
    return bits;
}

// What a cut anew holds on the device beyond the step's own arrays, a particle: the records gathered
// and those in the peers' outboxes, the owners and slots (sorted beside them) and the keys.
constexpr std::size_t kRecutBytesPerParticle =
    2 * sizeof(CrosserRecord) + 4 * sizeof(std::uint32_t) + sizeof(std::uint64_t);
constexpr std::size_t kRecutMargin = std::size_t{256} << 20;

} // namespace

bool TreeGpuResident::recut_due()
{
    ++steps_since_load_;
    if (!recut_at(steps_since_load_, recut_steps_)) return false;
    // Every rank has the room, or none cuts: a cut anew that ran out of memory would end the run.
    const auto n = static_cast<std::size_t>(n_);
    const std::size_t held =
        d_crossers_.bytes() + d_recut_owner_.bytes() + d_recut_slot_.bytes() + d_recut_key_.bytes();
    const std::size_t want = n * kRecutBytesPerParticle + kRecutMargin;
    const std::size_t extra = want > held ? want - held : 0;
    std::size_t room = 0;
    if (e_.params.device_memory > 0) {
        const std::size_t taken = gpu::device_bytes_held();
        room = e_.params.device_memory > taken ? e_.params.device_memory - taken : 0;
    } else {
        std::size_t total = 0;
        CUDA_CHECK(cudaMemGetInfo(&room, &total));
    }
    const int fits = extra <= room ? 1 : 0;
    std::vector<std::vector<char>> all;
    ranks_->all_gather(
        std::vector<char>(reinterpret_cast<const char*>(&fits), reinterpret_cast<const char*>(&fits) + sizeof fits),
        all);
    bool everyone = true;
    for (const std::vector<char>& theirs : all) {
        int f = 0;
        if (theirs.size() != sizeof f)
            throw std::runtime_error("tree-gpu: a rank's room for a cut anew came malformed");
        std::memcpy(&f, theirs.data(), sizeof f);
        everyone = everyone && f != 0;
    }
    if (!everyone && !recut_refused_) {
        recut_refused_ = true;
        if (ranks_->rank() == 0)
            std::fprintf(stderr,
                         "grove: tree-gpu: a GPU lacks the memory to cut the domains anew (%zu MiB more a rank at "
                         "this count); the domains keep their frame until the next load, and the momentum may drift "
                         "(docs/parallel-design.md). GROVE_DOMAIN_RECUT=0 turns the cuts off.\n",
                         extra >> 20);
    }
    return everyone;
}

void TreeGpuResident::move_domains_frame()
{
    domains_cube_ =
        moved_domains_frame(load_cube_, mix_bits(frame_draw_ + static_cast<std::uint64_t>(steps_since_load_)));
}

bool TreeGpuResident::cut_domains_anew()
{
    const auto start = WallClock::now();
    const int samples = std::min(n_, kRecutSamples);
    d_samples_.reserve(static_cast<std::size_t>(std::max(samples, 1)), "domain cut samples");
    h_samples_.reserve(static_cast<std::size_t>(std::max(samples, 1)), "domain cut samples");
    if (samples > 0) { // the keys were made on this stream
        const auto* keys = reinterpret_cast<const std::uint64_t*>(spare_.data());
        sample_keys_kernel<<<static_cast<unsigned>(samples), kSampleThreads, 0, copy_>>>(
            n_, samples, keys, order_.data(), costs_known_ ? cost_.data() : nullptr, d_samples_.data());
        gpu::check_launch("sample_keys_kernel", copy_);
        copy_async(h_samples_.data(), d_samples_.data(), static_cast<std::size_t>(samples), cudaMemcpyDeviceToHost,
                   copy_);
        CUDA_CHECK(cudaStreamSynchronize(copy_));
    }
    const auto* bytes = reinterpret_cast<const char*>(h_samples_.data());
    ranks_->all_gather(std::vector<char>(bytes, bytes + static_cast<std::size_t>(samples) * sizeof(WeightedKey)),
                       all_samples_);
    std::vector<WeightedKey> all;
    for (const std::vector<char>& theirs : all_samples_) {
        if (theirs.size() % sizeof(WeightedKey) != 0)
            throw std::runtime_error("tree-gpu: a rank's samples of its keys came malformed");
        const std::size_t k = all.size();
        all.resize(k + theirs.size() / sizeof(WeightedKey));
        if (!theirs.empty()) std::memcpy(all.data() + k, theirs.data(), theirs.size());
    }
    const int ranks = ranks_->ranks();
    std::vector<std::uint64_t> first = key_ranges_from_samples(all, ranks, kKeysEnd);
    // A sample's key is a particle's: a range that holds none may hold no particle, and a domain
    // keeps one at least. Then no cut this time (the same decision on every rank).
    std::vector<char> holds(static_cast<std::size_t>(ranks), 0);
    for (const WeightedKey& k : all) holds[static_cast<std::size_t>(key_range_owner(first.data(), ranks, k.key))] = 1;
    if (std::find(holds.begin(), holds.end(), 0) != holds.end()) return false;
    first_key_ = std::move(first);
    const auto r = static_cast<std::size_t>(ranks);
    CUDA_CHECK(cudaMemcpyAsync(d_first_key_.data(), first_key_.data(), (r + 1) * sizeof(std::uint64_t),
                               cudaMemcpyHostToDevice, copy_));
    CUDA_CHECK(cudaStreamSynchronize(copy_)); // first_key_ may change before the next cut
    crossing_times_.emplace_back("domains cut anew", seconds_since(start));
    return true;
}

void TreeGpuResident::launch_particle_costs()
{
    if (recut_steps_ == 0) return;
    const auto n = static_cast<std::size_t>(n_);
    const ListWork& w = e_.last_work;
    // The particles a leaf entry brings a group's particle, on average over the lists.
    const double per_leaf =
        w.leaf_entries > 0 && n > 0 ? w.particle_pairs * w.groups / (static_cast<double>(n) * w.leaf_entries) : 0;
    cost_.reserve(n, "particle costs");
    const auto g = static_cast<std::size_t>(e_.num_groups);
    particle_costs_kernel<<<blocks_for(g), kBlock, 0, e_.stream>>>(e_.num_groups, group_range_.data(),
                                                                   e_.d_node_count.data(), e_.d_leaf_count.data(),
                                                                   ListWork::kCellPairCost, per_leaf, cost_.data());
    gpu::check_launch("particle_costs_kernel", e_.stream);
    costs_known_ = true;
}

void TreeGpuResident::exchange_recut_keys()
{
    const auto start = WallClock::now();
    const int ranks = ranks_->ranks(), me = ranks_->rank();
    const auto R = static_cast<std::size_t>(ranks), n = static_cast<std::size_t>(n_);
    const auto* keys = reinterpret_cast<const std::uint64_t*>(spare_.data());
    d_recut_owner_.reserve(2 * n, "owners at a cut anew");
    d_recut_slot_.reserve(2 * n, "slots at a cut anew");
    d_recut_key_.reserve(n, "keys at a cut anew");
    d_recut_count_.reserve(R, "counts at a cut anew");
    h_recut_count_.reserve(R, "counts at a cut anew");
    std::uint32_t* owner = d_recut_owner_.data();
    std::uint32_t* slot = d_recut_slot_.data();
    CUDA_CHECK(cudaMemsetAsync(d_recut_count_.data(), 0, R * sizeof(int), copy_));
    owners_kernel<<<blocks_for(n), kBlock, 0, copy_>>>(n_, keys, d_first_key_.data(), ranks, owner, slot,
                                                       d_recut_count_.data());
    gpu::check_launch("owners_kernel", copy_);
    // The slots grouped by owner, ascending within each (the sort is stable).
    std::size_t sort_bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, owner, owner + n, slot, slot + n, n_, 0,
                                               owner_bits(ranks), copy_));
    recut_temp_.reserve(sort_bytes, "sort at a cut anew");
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(recut_temp_.data(), sort_bytes, owner, owner + n, slot, slot + n, n_, 0,
                                               owner_bits(ranks), copy_));
    keys_of_slots_kernel<<<blocks_for(n), kBlock, 0, copy_>>>(n_, slot + n, keys, d_recut_key_.data());
    gpu::check_launch("keys_of_slots_kernel", copy_);
    copy_async(h_recut_count_.data(), d_recut_count_.data(), R, cudaMemcpyDeviceToHost, copy_);
    copy_async(h_box_.data(), box_.data(), 1, cudaMemcpyDeviceToHost, copy_);
    CUDA_CHECK(cudaStreamSynchronize(copy_));
    const int finite = h_box_[0].finite == 1;
    recut_.sent.assign(R, 0);
    std::vector<std::size_t> at(R + 1, 0);
    for (std::size_t r = 0; r < R; ++r) {
        recut_.sent[r] = static_cast<std::size_t>(h_recut_count_[r]);
        at[r + 1] = at[r] + recut_.sent[r];
    }
    if (at[R] != n) throw std::logic_error("tree-gpu: the owners at a cut anew do not add up");
    // To each other rank its keys after this rank's flag: into a direct peer's outbox (the message
    // names it), else in the message itself.
    recut_mail_.assign(R, {});
    for (std::size_t r = 0; r < R; ++r) {
        if (r == static_cast<std::size_t>(me)) continue;
        std::vector<char>& m = recut_mail_[r];
        m.resize(sizeof(int));
        std::memcpy(m.data(), &finite, sizeof(int));
        const std::size_t bytes = recut_.sent[r] * sizeof(std::uint64_t);
        const char* from = reinterpret_cast<const char*>(d_recut_key_.data() + at[r]);
        const int to = static_cast<int>(r);
        if (bytes == 0) continue;
        if (peers_.direct(to)) {
            copy_async(peers_.outbox(to, bytes), from, bytes, cudaMemcpyDeviceToDevice, copy_);
            const std::vector<char> ticket = peers_.ticket(to, bytes, LetHeader{});
            m.insert(m.end(), ticket.begin(), ticket.end());
        } else {
            m.resize(sizeof(int) + bytes);
            copy_async(m.data() + sizeof(int), from, bytes, cudaMemcpyDeviceToHost, copy_);
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(copy_));
    std::vector<ByteSpan> send(R);
    for (std::size_t r = 0; r < R; ++r) send[r] = {recut_mail_[r].data(), recut_mail_[r].size()};
    crossing_times_.emplace_back("cut anew: keys grouped", seconds_since(start));
    auto phase = WallClock::now();
    const std::vector<std::vector<char>> received = all_to_all(*ranks_, send);
    crossing_times_.emplace_back("cut anew: keys exchanged", seconds_since(phase));
    phase = WallClock::now();

    // Where each sender's keys lie (on this device, a peer's, or in its message), and how many.
    bool everyone = finite != 0;
    recut_.received.assign(R, 0);
    std::vector<const void*> from(R, nullptr);
    for (std::size_t r = 0; r < R; ++r) {
        if (r == static_cast<std::size_t>(me)) {
            recut_.received[r] = recut_.sent[r];
            from[r] = d_recut_key_.data() + at[r];
            continue;
        }
        const std::vector<char>& m = received[r];
        if (m.size() < sizeof(int)) throw std::runtime_error("tree-gpu: a rank's keys at a cut anew came malformed");
        int theirs = 0;
        std::memcpy(&theirs, m.data(), sizeof theirs);
        everyone = everyone && theirs != 0;
        std::size_t bytes = m.size() - sizeof(int);
        from[r] = m.data() + sizeof(int);
        if (bytes > 0 && peers_.direct(static_cast<int>(r))) {
            LetHeader unused{};
            from[r] = peers_.receive(static_cast<int>(r), m.data() + sizeof(int), bytes, unused, bytes);
        }
        if (bytes % sizeof(std::uint64_t) != 0)
            throw std::runtime_error("tree-gpu: a rank's keys at a cut anew came malformed");
        recut_.received[r] = bytes / sizeof(std::uint64_t);
    }
    std::size_t count = 0;
    for (const std::size_t c : recut_.received) count += c;
    if (everyone && count == 0) throw std::logic_error("tree-gpu: a cut anew left a domain without particles");
    if (count > static_cast<std::size_t>(INT32_MAX / 2))
        throw std::runtime_error("tree-gpu: a domain of more than 2^30 particles");
    if (everyone) {
        // The keys by sender in rank order, each with its slot, where the sort reads them (the own
        // keys were taken from there already): 20 bytes a key, and a particle's 32 for the gathers.
        const std::size_t need = std::max(count, (20 * count + sizeof(Vec4<double>) - 1) / sizeof(Vec4<double>));
        if (need > spare_.capacity()) spare_.reserve(need, "resident gather and key sort");
        s_order_.reserve(count, "tree order");
        auto* into = reinterpret_cast<std::uint64_t*>(spare_.data());
        std::size_t off = 0;
        for (std::size_t r = 0; r < R; ++r) {
            copy_async(into + off, static_cast<const std::uint64_t*>(from[r]), recut_.received[r], cudaMemcpyDefault,
                       copy_);
            off += recut_.received[r];
        }
        count_up_kernel<<<blocks_for(count), kBlock, 0, copy_>>>(static_cast<int>(count), s_order_.data());
        gpu::check_launch("count_up_kernel", copy_);
    }
    CUDA_CHECK(cudaStreamSynchronize(copy_)); // the peers' outboxes and the messages are read
    if (peers_.any()) {
        ranks_->barrier();
        peers_.retire();
    }
    recut_.active = everyone;
    let_traffic_.crossers_sent = everyone ? n - recut_.sent[static_cast<std::size_t>(me)] : 0;
    let_traffic_.crossers_received = everyone ? count - recut_.sent[static_cast<std::size_t>(me)] : 0;
    ranks_->record(let_traffic_);
    // Nobody moves where a rank's predictions are not finite (its next structure is built from
    // its positions): the own keys sorted as they are, the new ranges left to the crossers.
    if (everyone)
        sort_keys(static_cast<int>(count), static_cast<int>(count));
    else
        sort_keys(n_, n_);
    crossing_times_.emplace_back("cut anew: keys placed", seconds_since(phase));
}

void TreeGpuResident::exchange_recut_records()
{
    if (!std::exchange(recut_.active, false)) return;
    const auto start = WallClock::now();
    const int me = ranks_->rank();
    const auto R = static_cast<std::size_t>(ranks_->ranks()), n = static_cast<std::size_t>(n_);
    std::vector<std::size_t> at(R + 1, 0);
    std::size_t count = 0, by_mpi = 0;
    for (std::size_t r = 0; r < R; ++r) {
        at[r + 1] = at[r] + recut_.sent[r];
        count += recut_.received[r];
        if (r != static_cast<std::size_t>(me) && !peers_.direct(static_cast<int>(r))) by_mpi += recut_.received[r];
    }
    // Every particle's state, grouped by owner; each other owner's into its outbox or a message.
    d_crossers_.reserve(std::max<std::size_t>(n, 1), "crossers");
    gather_crossers_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(n_, d_recut_slot_.data() + n, state_arrays(),
                                                                    d_crossers_.data());
    gpu::check_launch("gather_crossers_kernel", e_.stream);
    recut_mail_.assign(R, {});
    for (std::size_t r = 0; r < R; ++r) {
        const std::size_t bytes = recut_.sent[r] * sizeof(CrosserRecord);
        if (r == static_cast<std::size_t>(me) || bytes == 0) continue;
        const int to = static_cast<int>(r);
        const auto* from = reinterpret_cast<const char*>(d_crossers_.data() + at[r]);
        if (peers_.direct(to)) {
            copy_async(peers_.outbox(to, bytes), from, bytes, cudaMemcpyDeviceToDevice, e_.stream);
        } else {
            recut_mail_[r].resize(bytes);
            copy_async(recut_mail_[r].data(), from, bytes, cudaMemcpyDeviceToHost, e_.stream);
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    std::vector<ByteSpan> send(R);
    for (std::size_t r = 0; r < R; ++r) {
        const std::size_t bytes = recut_.sent[r] * sizeof(CrosserRecord);
        if (r != static_cast<std::size_t>(me) && bytes > 0 && peers_.direct(static_cast<int>(r)))
            recut_mail_[r] = peers_.ticket(static_cast<int>(r), bytes, LetHeader{});
        send[r] = {recut_mail_[r].data(), recut_mail_[r].size()};
    }
    crossing_times_.emplace_back("cut anew: state gathered", seconds_since(start));
    auto phase = WallClock::now();
    const std::vector<std::vector<char>> received = all_to_all(*ranks_, send);
    crossing_times_.emplace_back("cut anew: state exchanged", seconds_since(phase));
    phase = WallClock::now();

    // The state's arrays take the new count (every slot is written below: nothing to keep), and
    // each sender's particles fill the next slots, in rank order, as their keys did.
    body_.reserve(count, "resident positions");
    vel_.reserve(count, "resident velocities");
    e_.d_sorted.reserve(count, "sorted accelerations");
    for (int b = 0; b < 2; ++b) {
        caller_[b].reserve(count, "resident particle order");
        id_[b].reserve(count, "resident particle IDs");
        type_[b].reserve(count, "resident particle types");
    }
    if (costs_known_) cost_.reserve(count, "particle costs");
    order_.reserve(count, "tree order");
    spare_.reserve(count, "resident gather and key sort");
    d_recut_in_.reserve(std::max<std::size_t>(by_mpi, 1), "crossers");
    std::size_t first = 0, staged = 0;
    for (std::size_t r = 0; r < R; ++r) {
        const std::size_t c = recut_.received[r];
        if (c == 0) continue;
        const CrosserRecord* in = d_crossers_.data() + at[r]; // the own
        if (r != static_cast<std::size_t>(me)) {
            const std::vector<char>& m = received[r];
            std::size_t bytes = m.size();
            const char* records = m.data();
            if (peers_.direct(static_cast<int>(r))) {
                LetHeader unused{};
                records = peers_.receive(static_cast<int>(r), m.data(), m.size(), unused, bytes);
            }
            if (bytes != c * sizeof(CrosserRecord))
                throw std::runtime_error(
                    "tree-gpu: a rank's particles at a cut anew came in another number than their keys");
            in = reinterpret_cast<const CrosserRecord*>(records);
            if (!peers_.direct(static_cast<int>(r))) {
                copy_async(d_recut_in_.data() + staged, in, c, cudaMemcpyHostToDevice, e_.stream);
                in = d_recut_in_.data() + staged;
                staged += c;
            }
        }
        place_records_kernel<<<blocks_for(c), kBlock, 0, e_.stream>>>(static_cast<int>(c), static_cast<int>(first), in,
                                                                      state_arrays());
        gpu::check_launch("place_records_kernel", e_.stream);
        first += c;
    }
    CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    if (peers_.any()) { // every rank has read what it mapped of the others' outboxes
        ranks_->barrier();
        peers_.retire();
    }
    n_ = static_cast<int>(count);
    e_.num_particles = n_;
    crossed_ = true;
    after_recut_ = true;
    crossing_times_.emplace_back("cut anew: state placed", seconds_since(phase));
}

} // namespace grove
