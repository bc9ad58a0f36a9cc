#include "parallel/domains.hpp"

#include <parallel/algorithm>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <stdexcept>

#include <omp.h>

#include "core/rank_exchange.hpp"
#include "core/resize_keeping_memory.hpp"
#include "core/slot_plan.hpp"
#include "tree/hilbert.hpp"
#include "tree/morton.hpp"

namespace grove {

namespace {

constexpr std::uint64_t kKeyEnd = std::uint64_t{1} << 63; // one past the largest 63-bit key

// Where each cut lies, refined a histogram at a time: every cut's interval [lo, lo + width) is
// split into bins, the costs in them summed over all ranks, and the interval narrowed to the bin
// in which the cut's target cost is reached. 2^14 bins a round: five rounds for 63 bits, each one
// all-reduce of (cuts x bins) values. After each round only the keys in the narrowed intervals
// are kept (with their costs) for the next: a galaxy's dense centre fills one bin of the first
// rounds with most of the keys, so that keys kept once, after the first round, left the later
// rounds reading nearly every key again.
std::vector<std::uint64_t> cut_keys(const std::vector<std::uint64_t>& keys, const std::vector<double>& cost, int ranks,
                                    const Communicator& comm)
{
    const auto cuts = static_cast<std::size_t>(ranks - 1);
    // Every key weighs 1 where no cost is given (no array of ones at every step), and where all
    // costs are zero.
    bool unit = cost.empty();
    double total = unit ? static_cast<double>(keys.size()) : 0;
    for (const double c : cost) total += c;
    comm.sum(&total, 1);
    if (!(total > 0)) { // decided on the sum over the ranks: every rank takes this branch or none
        unit = true;
        total = static_cast<double>(keys.size());
        comm.sum(&total, 1);
    }
    // The keys the rounds read: all of them at first, then those in the cuts' intervals.
    std::vector<std::uint64_t> near_keys;
    std::vector<double> near_cost;
    bool all = true;
    const auto count = [&] { return all ? keys.size() : near_keys.size(); };
    const auto key = [&](std::size_t i) { return all ? keys[i] : near_keys[i]; };
    const auto weight = [&](std::size_t i) { return unit ? 1.0 : all ? cost[i] : near_cost[i]; };
    std::vector<double> target(cuts), below(cuts, 0.0);
    for (std::size_t c = 0; c < cuts; ++c) target[c] = total * static_cast<double>(c + 1) / ranks;
    std::vector<std::uint64_t> lo(cuts, 0);
    std::uint64_t width = kKeyEnd;
    // The cuts' intervals: several cuts may share one (the first rounds), and distinct ones are
    // disjoint (each one bin of the last round, the cuts in key order), so a key lies in at most
    // one, found by a binary search over their starts instead of a test per cut.
    std::vector<std::uint64_t> starts;
    std::vector<std::size_t> interval(cuts);
    const auto find_intervals = [&] {
        starts.clear();
        for (std::size_t c = 0; c < cuts; ++c) {
            if (!starts.empty() && lo[c] < starts.back()) throw std::logic_error("domains: cuts out of key order");
            if (starts.empty() || lo[c] != starts.back()) starts.push_back(lo[c]);
            interval[c] = starts.size() - 1;
        }
    };
    // The interval key k lies in, or starts.size() where none holds it.
    const auto interval_of = [&](std::uint64_t k) {
        const auto after = std::upper_bound(starts.begin(), starts.end(), k);
        if (after == starts.begin() || k - *std::prev(after) >= width) return starts.size();
        return static_cast<std::size_t>(std::prev(after) - starts.begin());
    };
    if (cuts > 0) find_intervals(); // then after each round, for the next
    while (width > 1 && cuts > 0) {
        const std::uint64_t bins = std::min<std::uint64_t>(std::uint64_t{1} << 14, width), bin_width = width / bins;
        const int shift = __builtin_ctzll(bin_width); // the widths are powers of two
        std::vector<double> histogram(starts.size() * bins, 0.0);
        // Each thread its own histogram, added up after (a run's costs are ones: the sums are
        // exact in any order).
#pragma omp parallel
        {
            std::vector<double> mine(histogram.size(), 0.0);
#pragma omp for schedule(static) nowait
            for (std::int64_t s = 0; s < static_cast<std::int64_t>(count()); ++s) {
                const auto i = static_cast<std::size_t>(s);
                const std::size_t u = interval_of(key(i));
                if (u == starts.size()) continue;
                mine[u * bins + ((key(i) - starts[u]) >> shift)] += weight(i);
            }
#pragma omp critical
            for (std::size_t k = 0; k < mine.size(); ++k) histogram[k] += mine[k];
        }
        comm.sum(histogram.data(), histogram.size());
        for (std::size_t c = 0; c < cuts; ++c) {
            const double* h = histogram.data() + interval[c] * bins;
            std::uint64_t b = 0;
            while (b + 1 < bins && below[c] + h[b] < target[c]) below[c] += h[b++];
            lo[c] += b * bin_width;
        }
        width = bin_width;
        // The keys in the narrowed intervals, in their order: each thread counts those of its
        // slice, then writes them at its offset (costs too, where they are not all 1).
        find_intervals();
        const int most_threads = omp_get_max_threads();
        std::vector<std::size_t> offset(static_cast<std::size_t>(most_threads) + 1, 0);
        std::vector<std::uint64_t> kept_keys;
        std::vector<double> kept_cost;
#pragma omp parallel num_threads(most_threads)
        {
            const auto t = static_cast<std::size_t>(omp_get_thread_num()),
                       threads = static_cast<std::size_t>(omp_get_num_threads());
            const std::size_t n = count(), begin = n * t / threads, end = n * (t + 1) / threads;
            std::size_t mine = 0;
            for (std::size_t i = begin; i < end; ++i) mine += interval_of(key(i)) != starts.size();
            offset[t + 1] = mine;
#pragma omp barrier
#pragma omp single
            {
                for (std::size_t k = 1; k <= threads; ++k) offset[k] += offset[k - 1];
                kept_keys.resize(offset[threads]);
                if (!unit) kept_cost.resize(offset[threads]);
            }
            std::size_t at = offset[t];
            for (std::size_t i = begin; i < end; ++i) {
                if (interval_of(key(i)) == starts.size()) continue;
                kept_keys[at] = key(i);
                if (!unit) kept_cost[at] = weight(i);
                ++at;
            }
        }
        near_keys.swap(kept_keys);
        near_cost.swap(kept_cost);
        all = false;
    }
    // lo[c] is the key whose own cost reaches the target; the cut falls before or after it,
    // whichever lands nearer the target.
    std::vector<std::uint64_t> first(static_cast<std::size_t>(ranks) + 1, 0);
    first.back() = kKeyEnd;
    for (std::size_t c = 0; c < cuts; ++c) {
        double at_key = 0;
#pragma omp parallel for schedule(static) reduction(+ : at_key)
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(count()); ++i)
            if (key(static_cast<std::size_t>(i)) == lo[c]) at_key += weight(static_cast<std::size_t>(i));
        comm.sum(&at_key, 1);
        const bool after = below[c] + at_key - target[c] < target[c] - below[c];
        first[c + 1] = std::max(first[c], lo[c] + (after ? 1 : 0));
    }
    return first;
}

} // namespace

namespace {

// The box about every rank's particles (the same on every rank; zero where there are none).
void global_bounds(PositionsRef pos, const Communicator& comm, double mn[3], double mx[3])
{
    double x0 = INFINITY, y0 = INFINITY, z0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY, z1 = -INFINITY;
#pragma omp parallel for schedule(static) reduction(min : x0, y0, z0) reduction(max : x1, y1, z1)
    for (Eigen::Index i = 0; i < pos.cols(); ++i) {
        x0 = std::min(x0, pos(0, i)), x1 = std::max(x1, pos(0, i));
        y0 = std::min(y0, pos(1, i)), y1 = std::max(y1, pos(1, i));
        z0 = std::min(z0, pos(2, i)), z1 = std::max(z1, pos(2, i));
    }
    mn[0] = x0, mn[1] = y0, mn[2] = z0, mx[0] = x1, mx[1] = y1, mx[2] = z1;
    comm.min(mn, 3);
    comm.max(mx, 3);
    if (!(mn[0] <= mx[0])) mn[0] = mn[1] = mn[2] = mx[0] = mx[1] = mx[2] = 0; // no particles anywhere
}

} // namespace

KeyFrame domains_cube(PositionsRef pos, const Communicator& comm)
{
    double mn[3], mx[3];
    global_bounds(pos, comm, mn, mx);
    return domains_key_frame(mn, mx);
}

KeyFrame moved_domains_cube(PositionsRef pos, const Communicator& comm)
{
    double mn[3], mx[3];
    global_bounds(pos, comm, mn, mx);
    return moved_domains_frame(domains_key_frame(mn, mx), key_frame_bounds_draw(mn, mx));
}

HilbertDomains HilbertDomains::cut(PositionsRef pos, const std::vector<double>& cost, const Communicator& comm,
                                   std::vector<std::uint64_t>* keys_out, const KeyFrame* frame)
{
    const auto n = static_cast<std::size_t>(pos.cols());
    if (!cost.empty() && cost.size() != n) throw std::invalid_argument("domains: one cost per particle");
    for (const double c : cost)
        if (!(c >= 0) || !std::isfinite(c)) throw std::invalid_argument("domains: costs must be finite and >= 0");
    HilbertDomains d;
    d.frame_ = frame ? *frame : domains_cube(pos, comm);
    if (comm.size() == 1) { // one domain: everything, no keys needed
        d.first_key_ = {0, kKeyEnd};
        return d;
    }
    std::vector<std::uint64_t> local_keys;
    std::vector<std::uint64_t>& keys = keys_out ? *keys_out : local_keys;
    d.keys_into(pos, keys);
    d.first_key_ = cut_keys(keys, cost, comm.size(), comm);
    return d;
}

std::uint64_t HilbertDomains::key(double x, double y, double z) const
{
    return hilbert_key(frame_.cell(x, 0), frame_.cell(y, 1), frame_.cell(z, 2));
}

int HilbertDomains::owner(std::uint64_t key) const
{
    return key_range_owner(first_key_.data(), ranks(), key);
}

std::vector<int> HilbertDomains::owners_of_keys(const std::vector<std::uint64_t>& keys, std::size_t count) const
{
    std::vector<int> out(count, 0);
    if (ranks() == 1) return out;
    if (keys.size() != count) throw std::logic_error("domains: one key per particle");
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(count); ++i)
        out[static_cast<std::size_t>(i)] = owner(keys[static_cast<std::size_t>(i)]);
    return out;
}

std::vector<int> HilbertDomains::owners(PositionsRef pos) const
{
    const auto n = static_cast<std::size_t>(pos.cols());
    return ranks() == 1 ? std::vector<int>(n, 0) : owners_of_keys(keys_of(pos), n);
}

std::vector<std::uint64_t> HilbertDomains::keys_of(PositionsRef pos) const
{
    std::vector<std::uint64_t> keys;
    keys_into(pos, keys);
    return keys;
}

void HilbertDomains::keys_into(PositionsRef pos, std::vector<std::uint64_t>& keys) const
{
    keys.resize(static_cast<std::size_t>(pos.cols()));
#pragma omp parallel for schedule(static)
    for (Eigen::Index i = 0; i < pos.cols(); ++i)
        keys[static_cast<std::size_t>(i)] = key(pos(0, i), pos(1, i), pos(2, i));
}

void HilbertDomains::leaving(const std::vector<std::uint64_t>& keys, int rank, std::vector<std::size_t>& leave,
                             std::vector<int>& destination) const
{
    leave.clear();
    destination.clear();
    if (ranks() == 1) return;
    // Each thread a contiguous slice, the slices' lists joined in order: ascending.
    const int threads = omp_get_max_threads();
    std::vector<std::vector<std::size_t>> slots(static_cast<std::size_t>(threads));
    std::vector<std::vector<int>> owners(static_cast<std::size_t>(threads));
    const std::size_t n = keys.size();
#pragma omp parallel num_threads(threads)
    {
        const auto t = static_cast<std::size_t>(omp_get_thread_num()),
                   count = static_cast<std::size_t>(omp_get_num_threads());
        for (std::size_t i = n * t / count; i < n * (t + 1) / count; ++i) {
            const int r = owner(keys[i]);
            if (r == rank) continue;
            slots[t].push_back(i);
            owners[t].push_back(r);
        }
    }
    for (std::size_t t = 0; t < slots.size(); ++t) {
        leave.insert(leave.end(), slots[t].begin(), slots[t].end());
        destination.insert(destination.end(), owners[t].begin(), owners[t].end());
    }
}

namespace {

// One particle on the wire.
struct Record {
    double pos[3], vel[3], acc[3], pot, mass;
    std::uint64_t id;
    std::uint8_t type, has_forces;
};

} // namespace

ParticleSet migrate(const ParticleSet& p, const std::vector<int>& owner, const Communicator& comm,
                    std::vector<std::vector<double>*> carried)
{
    const std::size_t n = p.size(), ranks = static_cast<std::size_t>(comm.size()), extra = carried.size();
    if (owner.size() != n) throw std::invalid_argument("migrate: one owner per particle");
    for (const auto* c : carried)
        if (c->size() != n) throw std::invalid_argument("migrate: one carried value per particle");
    const std::size_t record = sizeof(Record) + extra * sizeof(double);
    std::vector<std::size_t> count(ranks, 0);
    for (const int r : owner) {
        if (r < 0 || static_cast<std::size_t>(r) >= ranks) throw std::invalid_argument("migrate: owner out of range");
        ++count[static_cast<std::size_t>(r)];
    }
    // Each particle's place in its rank's buffer, then the records written side by side.
    std::vector<std::vector<char>> send(ranks);
    for (std::size_t r = 0; r < ranks; ++r) send[r].resize(count[r] * record);
    std::vector<std::size_t> slot(n), next(ranks, 0);
    for (std::size_t i = 0; i < n; ++i) slot[i] = next[static_cast<std::size_t>(owner[i])]++;
    const bool forces = p.has_forces();
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < static_cast<std::int64_t>(n); ++s) {
        const auto i = static_cast<std::size_t>(s);
        const auto k = static_cast<Eigen::Index>(i);
        Record rec{};
        for (int a = 0; a < 3; ++a) {
            rec.pos[a] = p.pos(a, k);
            rec.vel[a] = p.vel(a, k);
            rec.acc[a] = forces ? p.acc(a, k) : 0.0;
        }
        rec.pot = forces ? p.pot[k] : 0.0;
        rec.mass = p.mass[k];
        rec.id = p.id[i];
        rec.type = p.type[i];
        rec.has_forces = forces;
        char* out = send[static_cast<std::size_t>(owner[i])].data() + slot[i] * record;
        std::memcpy(out, &rec, sizeof rec);
        for (std::size_t e = 0; e < extra; ++e)
            std::memcpy(out + sizeof rec + e * sizeof(double), &(*carried[e])[i], sizeof(double));
    }
    std::vector<std::vector<char>> received;
    comm.all_to_all(send, received);
    std::size_t m = 0;
    for (const auto& buffer : received) m += buffer.size() / record;
    ParticleSet q;
    q.time = p.time;
    q.units = p.units;
    q.run_parameters = p.run_parameters;
    q.pos.resize(3, static_cast<Eigen::Index>(m));
    q.vel.resize(3, static_cast<Eigen::Index>(m));
    q.mass.resize(static_cast<Eigen::Index>(m));
    q.id.resize(m);
    q.type.resize(m);
    std::vector<std::vector<double>> values(extra, std::vector<double>(m));
    std::vector<std::size_t> first(received.size() + 1, 0); // each buffer's first record in q
    for (std::size_t r = 0; r < received.size(); ++r) first[r + 1] = first[r] + received[r].size() / record;
    Eigen::Matrix3Xd acc(3, static_cast<Eigen::Index>(m));
    Eigen::VectorXd pot(static_cast<Eigen::Index>(m));
    int without_forces = 0;
#pragma omp parallel for schedule(static) reduction(+ : without_forces)
    for (std::int64_t s = 0; s < static_cast<std::int64_t>(m); ++s) {
        const auto j = static_cast<std::size_t>(s);
        const std::size_t r =
            static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), j) - first.begin()) - 1;
        const char* in = received[r].data() + (j - first[r]) * record;
        Record rec;
        std::memcpy(&rec, in, sizeof rec);
        const auto k = static_cast<Eigen::Index>(j);
        for (int a = 0; a < 3; ++a) {
            q.pos(a, k) = rec.pos[a];
            q.vel(a, k) = rec.vel[a];
            acc(a, k) = rec.acc[a];
        }
        pot[k] = rec.pot;
        q.mass[k] = rec.mass;
        q.id[j] = rec.id;
        q.type[j] = rec.type;
        without_forces += rec.has_forces ? 0 : 1;
        for (std::size_t e = 0; e < extra; ++e)
            std::memcpy(&values[e][j], in + sizeof rec + e * sizeof(double), sizeof(double));
    }
    const bool any_forces = m > 0 && without_forces == 0;
    if (any_forces) {
        q.acc = std::move(acc);
        q.pot = std::move(pot);
    }
    for (std::size_t e = 0; e < extra; ++e) *carried[e] = std::move(values[e]);
    return q;
}

namespace {

// A set of m particles with p's time, units and parameters, and room for forces where asked.
ParticleSet sized_like(const ParticleSet& p, std::size_t m, bool forces)
{
    ParticleSet q;
    q.time = p.time;
    q.units = p.units;
    q.run_parameters = p.run_parameters;
    const auto n = static_cast<Eigen::Index>(m);
    q.pos.resize(3, n);
    q.vel.resize(3, n);
    q.mass.resize(n);
    q.id.resize(m);
    q.type.resize(m);
    if (forces) {
        q.acc.resize(3, n);
        q.pot.resize(n);
    }
    return q;
}

// Particle i of `from` into slot k of `to` (its forces too where `to` has room for them).
void copy_particle(const ParticleSet& from, std::size_t i, ParticleSet& to, std::size_t k)
{
    const auto c = static_cast<Eigen::Index>(i), d = static_cast<Eigen::Index>(k);
    to.pos.col(d) = from.pos.col(c);
    to.vel.col(d) = from.vel.col(c);
    to.mass[d] = from.mass[c];
    to.id[k] = from.id[i];
    to.type[k] = from.type[i];
    if (to.acc.cols() > 0) {
        to.acc.col(d) = from.acc.col(c);
        to.pot[d] = from.pot[c];
    }
}

} // namespace

void exchange_in_place(ParticleSet& local, const std::vector<std::size_t>& leave, const ParticleSet& arrived)
{
    const std::size_t n = local.size(), arriving = arrived.size();
    const SlotPlan plan = plan_slots(n, leave, arriving);
    const std::size_t m = plan.count;
    // Forces stay only where every particle brings them (a run's do; a set's first cut has none).
    const bool forces = (n == 0 || local.has_forces()) && (arriving == 0 ? n > 0 : arrived.has_forces());
    if (!forces) {
        local.acc.resize(3, 0);
        local.pot.resize(0);
    }
    local.extra.clear(); // not carried between ranks
    const auto resize = [&](std::size_t count) {
        const auto c = static_cast<Eigen::Index>(count);
        resize_keeping_memory(local.pos, c);
        resize_keeping_memory(local.vel, c);
        resize_keeping_memory(local.mass, c);
        local.id.resize(count);
        local.type.resize(count);
        if (forces) {
            resize_keeping_memory(local.acc, c);
            resize_keeping_memory(local.pot, c);
        }
    };
    if (m > n) resize(m);
    const auto arrivals = static_cast<std::int64_t>(arriving);
#pragma omp parallel for schedule(static) if (arrivals > 16384)
    for (std::int64_t b = 0; b < arrivals; ++b) {
        const auto k = static_cast<std::size_t>(b);
        copy_particle(arrived, k, local, plan.arrival[k]);
    }
    for (const auto& [from, to] : plan.moves) copy_particle(local, from, local, to);
    if (m < n) resize(m);
}

int device_follow_steps()
{
    if (!domain_crossers_each_step()) return kDeviceFollowSteps;
    return domain_recut_steps() > 0 ? 0 : kDeviceFollowStepsWithCrossers;
}

bool device_follow_due(long long step)
{
    const int every = device_follow_steps();
    return every > 0 && step % every == 0;
}

ParticleSet select_particles(const ParticleSet& p, const std::vector<std::size_t>& index)
{
    ParticleSet q = sized_like(p, index.size(), p.has_forces());
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(index.size()); ++k)
        copy_particle(p, index[static_cast<std::size_t>(k)], q, static_cast<std::size_t>(k));
    return q;
}

namespace {

// The indices of p's particles that `keep` accepts, in ID order.
template <class Keep> std::vector<std::size_t> by_id(const ParticleSet& p, Keep&& keep)
{
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < p.size(); ++i)
        if (keep(i)) index.push_back(i);
    // IDs are unique, so any sort gives the one order; the parallel one, since a run on domains
    // sorts a rank's every particle at each file.
    __gnu_parallel::sort(index.begin(), index.end(), [&](std::size_t a, std::size_t b) { return p.id[a] < p.id[b]; });
    return index;
}

} // namespace

ParticleSet own_domain(const ParticleSet& all, const Communicator& comm, DomainKeys* keys)
{
    const std::size_t n = all.size(), ranks = static_cast<std::size_t>(comm.size()),
                      me = static_cast<std::size_t>(comm.rank());
    const std::size_t begin = n * me / ranks, end = n * (me + 1) / ranks;
    // The cut from each rank's slab (together the whole set), the owners from the whole set.
    const HilbertDomains domains = HilbertDomains::cut(
        all.pos.middleCols(static_cast<Eigen::Index>(begin), static_cast<Eigen::Index>(end - begin)), {}, comm);
    const std::vector<int> owner = domains.owners(all.pos);
    if (keys) *keys = domains.domain_keys(comm.rank());
    return select_particles(all, by_id(all, [&](std::size_t i) { return owner[i] == comm.rank(); }));
}

ParticleSet sorted_by_id(const ParticleSet& p)
{
    return select_particles(p, by_id(p, [](std::size_t) { return true; }));
}

DomainKeys move_to_domains(ParticleSet& local, const Communicator& comm, const std::vector<double>& cost)
{
    const HilbertDomains domains = HilbertDomains::cut(local.pos, cost, comm);
    local = sorted_by_id(migrate(local, domains.owners(local.pos), comm));
    return domains.domain_keys(comm.rank());
}

std::size_t planned_domain_particles(std::size_t n, int ranks)
{
    const auto k = static_cast<std::size_t>(std::max(ranks, 1));
    const std::size_t share = (n + k - 1) / k;
    return k == 1 ? n : std::min(n, share + share / 4);
}

bool DomainFollower::follow(ParticleSet& local, const Communicator& comm, double work, bool move_frame)
{
    if (!(work >= 0) || !std::isfinite(work))
        throw std::invalid_argument("domains: a rank's work must be finite and >= 0");
    // Equal work only where every rank that holds particles counted some.
    double least = local.size() > 0 ? work : 1.0;
    comm.min(&least, 1);
    const bool by_work = least > 0;
    cost_.clear();
    if (by_work) cost_.assign(local.size(), work / static_cast<double>(std::max<std::size_t>(local.size(), 1)));
    const bool moving = move_frame && comm.size() > 1; // one domain has no cut to move
    const KeyFrame moved = moving ? moved_domains_cube(local.pos, comm) : KeyFrame{};
    const HilbertDomains domains = HilbertDomains::cut(local.pos, cost_, comm, &keys_, moving ? &moved : nullptr);
    const KeyFrame& cube = domains.frame();
    own_keys_ = domains.domain_keys(comm.rank());
    // One domain's tree keeps its own frame (there is no cut to match).
    const bool same_cube =
        comm.size() == 1 || (followed_ && std::equal(cube.lo, cube.lo + 3, cube_.lo) && cube.side == cube_.side);
    cube_ = cube;
    followed_ = true;
    domains.leaving(keys_, comm.rank(), leave_, destination_);
    // A step moves few particles across a cut, and often none: only those travel.
    if (comm.max(leave_.empty() ? 0 : 1) == 0) return !same_cube;
    const ParticleSet arrived = migrate(select_particles(local, leave_), destination_, comm);
    exchange_in_place(local, leave_, arrived);
    return true;
}

} // namespace grove
