// Locally essential trees made on the GPU (gpu/device_lets.cuh) against the host's, and a resident
// store on domains (one rank of two, the other played by the host) against the forest's forces.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/force_errors.hpp"
#include "core/particle_store.hpp"
#include "core/rank_exchange.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/device_lets.cuh"
#include "gpu/tree_gpu.h"
#include "support/test_support.hpp"
#include "tree/build.hpp"
#include "tree/cut_cells.hpp"
#include "tree/hilbert.hpp"
#include "tree/locally_essential.hpp"
#include "tree/tree_cpu.hpp"

using namespace grove;

namespace {

template <class T> void upload(gpu::DeviceBuffer<T>& to, const std::vector<T>& from)
{
    to.reserve(from.size(), "test");
    if (!from.empty())
        REQUIRE(cudaMemcpy(to.data(), from.data(), from.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
}

// A host tree's structure, moments and particles on the device.
struct DeviceTree {
    gpu::DeviceBuffer<std::int32_t> next;
    gpu::DeviceBuffer<std::uint8_t> is_leaf;
    gpu::DeviceBuffer<ParticleRange> range;
    gpu::DeviceBuffer<Vec4<double>> com_mass, particles;
    gpu::DeviceBuffer<Quadrupole<double>> quad;
    gpu::DeviceBuffer<double> size, com_offset;
    explicit DeviceTree(const Octree& t)
    {
        upload(next, t.next);
        upload(is_leaf, t.is_leaf);
        upload(range, t.range);
        upload(com_mass, t.com_mass);
        upload(particles, t.particles);
        upload(quad, t.quad);
        upload(size, t.size);
        upload(com_offset, t.com_offset);
    }
    DeviceLetSource source(const Octree& t) const
    {
        return {t.num_nodes(), next.data(), is_leaf.data(),    range.data(),    com_mass.data(),
                quad.data(),   size.data(), com_offset.data(), particles.data()};
    }
};

// What a rank sends when the domains' cube is sought: its points' lowest coordinates, then their
// highest negated (gpu/tree_resident.cu).
std::vector<char> encoded_bounds(const Eigen::Matrix3Xd& pos)
{
    double b[6];
    for (int d = 0; d < 3; ++d) {
        b[d] = pos.row(d).minCoeff();
        b[3 + d] = -pos.row(d).maxCoeff();
    }
    const auto* first = reinterpret_cast<const char*>(b);
    return {first, first + sizeof b};
}

// Three domains of random points, cut along their Peano-Hilbert keys in the domains' cube (the
// cube of all the points), each with its tree in that cube, as a run's domains have theirs.
struct ThreeDomains {
    ParticleSet all = test::random_particles(30000, 7);
    std::vector<ParticleSet> sets;
    std::vector<Octree> trees;
    std::uint64_t first_key[4] = {}; // domain k holds the keys first_key[k] .. first_key[k + 1] - 1
    std::vector<char> beyond_first;  // the bounds of the second and third domains' points
    explicit ThreeDomains(const BuildParams& build)
    {
        double mn[3], mx[3];
        for (int d = 0; d < 3; ++d) {
            mn[d] = all.pos.row(d).minCoeff();
            mx[d] = all.pos.row(d).maxCoeff();
        }
        const KeyFrame cube = domains_key_frame(mn, mx);
        const auto n = static_cast<Eigen::Index>(all.size());
        std::vector<std::pair<std::uint64_t, std::int32_t>> keyed;
        for (Eigen::Index i = 0; i < n; ++i)
            keyed.emplace_back(
                hilbert_key(cube.cell(all.pos(0, i), 0), cube.cell(all.pos(1, i), 1), cube.cell(all.pos(2, i), 2)),
                static_cast<std::int32_t>(i));
        std::sort(keyed.begin(), keyed.end());
        first_key[3] = std::uint64_t{1} << 63;
        for (int k = 0; k < 3; ++k) {
            const std::size_t from = keyed.size() * static_cast<std::size_t>(k) / 3,
                              to = keyed.size() * static_cast<std::size_t>(k + 1) / 3;
            if (k > 0) first_key[k] = keyed[from].first;
            std::vector<std::int32_t> mine;
            for (std::size_t s = from; s < to; ++s) mine.push_back(keyed[s].second);
            ParticleSet q;
            q.resize(mine.size());
            q.pos = select_columns(all.pos, mine);
            for (std::size_t i = 0; i < mine.size(); ++i) q.mass[static_cast<Eigen::Index>(i)] = all.mass[mine[i]];
            q.acc.setZero(3, q.pos.cols());
            q.pot.setZero(q.pos.cols());
            trees.emplace_back();
            build_octree_into(trees.back(), q.pos, q.mass, build, nullptr, BuildContent::full, &cube);
            sets.push_back(std::move(q));
        }
        Eigen::Matrix3Xd rest(3, sets[1].pos.cols() + sets[2].pos.cols());
        rest << sets[1].pos, sets[2].pos;
        beyond_first = encoded_bounds(rest);
    }
};

std::vector<DomainBox> decode_boxes(const std::vector<char>& bytes)
{
    std::vector<DomainBox> boxes(bytes.size() / sizeof(DomainBox));
    if (!boxes.empty()) std::memcpy(boxes.data(), bytes.data(), bytes.size());
    return boxes;
}

void check_same_boxes(const std::vector<DomainBox>& a, const std::vector<DomainBox>& b)
{
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k) {
        INFO("box " << k);
        CHECK(a[k].next == b[k].next);
        CHECK(a[k].bounds_particles == b[k].bounds_particles);
        CHECK(a[k].box.centre.x == b[k].box.centre.x);
        CHECK(a[k].box.centre.y == b[k].box.centre.y);
        CHECK(a[k].box.centre.z == b[k].box.centre.z);
        CHECK(a[k].box.half_extent.x == b[k].box.half_extent.x);
        CHECK(a[k].box.half_extent.y == b[k].box.half_extent.y);
        CHECK(a[k].box.half_extent.z == b[k].box.half_extent.z);
    }
}

// Rank 0 of two, whose rank 1 the host plays: its tree's boxes go out, and its LET for what rank
// 0's boxes describe comes back (made on the host), as MPI would bring them. The store's load
// first gathers the ranks' bounds, for the domains' cube: rank 1 answers with `other_bounds`. The
// store's first evaluation also seeks peers on this host (two more gathers after the boxes'):
// rank 1 answers with zeros, a rank that offers nothing, so its LET comes through all_to_all.
class HostPlaysRankOne final : public RankExchange {
  public:
    HostPlaysRankOne(const Octree& other, std::vector<char> other_bounds, const OpeningCriterion& criterion)
        : other_(other), other_bounds_(std::move(other_bounds)), other_boxes_(domain_boxes(other)),
          criterion_(criterion)
    {
    }
    int ranks() const override { return 2; }
    int rank() const override { return 0; }
    void all_gather(const std::vector<char>& mine, std::vector<std::vector<char>>& all) override
    {
        const int call = gathers_++;
        if (call == 0) { // the domains' cube
            REQUIRE(mine.size() == other_bounds_.size());
            all = {mine, other_bounds_};
            return;
        }
        if (call == 1) { // the ranks' least keys
            REQUIRE(mine.size() == sizeof(std::uint64_t));
            all = {mine, std::vector<char>(sizeof other_least_)};
            std::memcpy(all[1].data(), &other_least_, sizeof other_least_);
            return;
        }
        if (call == 3 || call == 4) { // the search for direct peers: the probes, then what was read
            all.assign(2, std::vector<char>(mine.size(), 0));
            all[0] = mine;
            return;
        }
        mine_ = decode_boxes(mine);
        all.assign(2, {});
        all[0] = mine;
        all[1].resize(other_boxes_.size() * sizeof(DomainBox));
        std::memcpy(all[1].data(), other_boxes_.data(), all[1].size());
    }
    void all_to_all(const std::vector<ByteSpan>& send, const ReceiveInto& into) override
    {
        REQUIRE(send.size() == 2);
        CHECK(send[0].size == 0);
        if (all_to_alls_++ % 2 == 1) { // the step's crossers' keys: none leave rank 0, none come from rank 1
            REQUIRE(send[1].size == sizeof(int));
            into(0, 0);
            const int finite = 1;
            std::memcpy(into(1, sizeof finite), &finite, sizeof finite);
            return;
        }
        sent_.assign(send[1].data, send[1].data + send[1].size);
        into(0, 0);
        std::vector<char> let;
        LetFormat compact;
        compact.compact = true;
        compact.origin = mine_.front().box.centre;
        make_let(other_, mine_, criterion_, let, compact);
        if (corrupt_ && let.size() >= sizeof(LetHeader) + sizeof(CompactLetNode)) { // the root's skip at itself
            const std::int32_t self = 0;
            std::memcpy(let.data() + sizeof(LetHeader) + offsetof(CompactLetNode, next), &self, sizeof self);
        }
        std::memcpy(into(1, let.size()), let.data(), let.size());
        ++exchanges_;
    }
    void barrier() override {}
    void record(const LetTraffic& traffic) override { traffic_ = traffic; }
    const Octree& other_;
    std::uint64_t other_least_ = std::uint64_t{1} << 63; // rank 1's least key: by default above every key
    std::vector<char> other_bounds_;
    std::vector<DomainBox> other_boxes_, mine_;
    OpeningCriterion criterion_;
    std::vector<char> sent_;
    int exchanges_ = 0, gathers_ = 0, all_to_alls_ = 0;
    bool corrupt_ = false;
    LetTraffic traffic_;
};

} // namespace

TEST_CASE("LETs made on the GPU are the host's to the byte, and so are the domain's boxes", "[gpu][let]")
{
    const BuildParams build{16, 64};
    const ThreeDomains d(build);
    DeviceLets lets;
    gpu::PinnedBuffer<char> gpu; // where MPI would send from
    for (int j = 0; j < 3; ++j) {
        const Octree& sender = d.trees[static_cast<std::size_t>(j)];
        const DeviceTree device(sender);
        // The boxes from the particles on the device and the structure on the host.
        check_same_boxes(lets.boxes(sender, device.particles.data(), nullptr), domain_boxes(sender));
        for (int k = 0; k < 3; ++k) {
            if (k == j) continue;
            const Octree& receiver = d.trees[static_cast<std::size_t>(k)];
            std::vector<double> scales(receiver.groups.size());
            for (std::size_t g = 0; g < scales.size(); ++g) scales[g] = 0.5 + 0.1 * static_cast<double>(g % 7);
            for (const OpeningCriterion& criterion :
                 {OpeningCriterion::geometric(0.5), OpeningCriterion::geometric(0.9),
                  OpeningCriterion::relative(1e-3)}) {
                const bool relative = criterion.kind == MacKind::relative;
                INFO("domain " << j << " for " << k << ", " << (relative ? "relative" : "geometric") << " "
                               << criterion.parameter());
                const std::vector<DomainBox> boxes = domain_boxes(receiver, 1024, relative ? &scales : nullptr);
                LetFormat compact;
                compact.compact = true;
                compact.origin = boxes.front().box.centre;
                std::vector<char> host;
                make_let(sender, boxes, criterion, host, compact);
                REQUIRE(lets.make(device.source(sender), boxes, criterion, compact.origin, gpu, nullptr) ==
                        host.size());
                const LetBytes h = let_bytes(host.data(), host.size());
                CHECK(h.nodes > 100);
                CHECK(h.particles > 100);
                CHECK(std::memcmp(gpu.data(), host.data(), host.size()) == 0);
            }
        }
    }
    // No boxes: an empty LET, as the host makes one.
    const DeviceTree device(d.trees[0]);
    std::vector<char> host;
    LetFormat compact;
    compact.compact = true;
    make_let(d.trees[0], {}, OpeningCriterion::geometric(0.5), host, compact);
    REQUIRE(lets.make(device.source(d.trees[0]), {}, OpeningCriterion::geometric(0.5), compact.origin, gpu, nullptr) ==
            host.size());
    CHECK(std::memcmp(gpu.data(), host.data(), host.size()) == 0);
}

TEST_CASE("tree-gpu's store on a domain walks the LETs it receives with its own tree", "[gpu][let][resident]")
{
    TreeParams params{0.6, {16, 64}};
    params.lookahead = true; // whole steps on the device build each next tree ahead
    const GravityParams gravity{1.0, 1e-3};
    const ThreeDomains d(params.build);
    ParticleSet mine = d.sets[0];
    // Rank 0 holds the keys below rank 1's least; each domain's tree opens the cells its cut passes
    // through as larger (tree/cut_cells.hpp), rank 1's as the host makes them.
    Octree mine_tree = d.trees[0], other = d.trees[1];
    REQUIRE(enlarge_cut_cells(mine_tree, 0, d.first_key[1]) > 2);
    REQUIRE(enlarge_cut_cells(other, d.first_key[1], d.first_key[2]) > 2);
    HostPlaysRankOne ranks(other, d.beyond_first, params.opening());
    ranks.other_least_ = d.first_key[1];
    TreeGpuEngine engine(params, gravity);
    DeviceParticles* device = engine.device_particles_on_domains(ranks);
    REQUIRE(device != nullptr);
    CHECK(device->time_bins() == nullptr);
    // A step of no length: the forces of the positions as they are.
    ParticleStore store(mine);
    store.place_on(device);
    store.kick_drift(0, 0);
    REQUIRE(store.on_device());
    engine.compute(store);
    REQUIRE(store.kick(0));
    store.restore_order();
    CHECK(ranks.exchanges_ == 1);
    CHECK(ranks.traffic_.bytes_sent == ranks.sent_.size());
    CHECK(ranks.traffic_.nodes_received > 0);
    CHECK(ranks.traffic_.particles_received > 0);

    // What went to rank 1: its LET, made from this rank's tree; and this rank's boxes.
    check_same_boxes(ranks.mine_, domain_boxes(d.trees[0]));
    std::vector<char> host_let;
    LetFormat compact;
    compact.compact = true;
    compact.origin = ranks.other_boxes_.front().box.centre;
    make_let(mine_tree, ranks.other_boxes_, params.opening(), host_let, compact);
    const LetBytes sent = let_bytes(ranks.sent_.data(), ranks.sent_.size());
    const LetBytes expected = let_bytes(host_let.data(), host_let.size());
    // The device's moments round otherwise than the host's: a cell on the edge may go otherwise.
    CHECK(std::abs(static_cast<double>(sent.nodes) - static_cast<double>(expected.nodes)) <= 0.01 * expected.nodes);
    CHECK(std::abs(static_cast<double>(sent.particles) - static_cast<double>(expected.particles)) <=
          0.01 * expected.particles);

    // The forces: tree-cpu's on this domain's forest (its tree, the LET rank 1 sent in full).
    const auto forest_forces = [&](const Octree& ours, const Octree& theirs, TreeCpuEngine& cpu) {
        Octree forest = ours;
        std::vector<char> full;
        make_let(theirs, domain_boxes(forest), params.opening(), full);
        append_let(forest, let_bytes(full.data(), full.size()));
        Forces f;
        cpu.load(forest, {});
        cpu.evaluate_loaded(params.opening(), f);
        return f;
    };
    TreeCpuEngine cpu(params, gravity);
    const Forces reference = forest_forces(mine_tree, other, cpu);
    // The work the domains are cut by: the pairs the list kernels summed, about the forest's on
    // the host (whose double tree opens a few cells otherwise).
    const ListWork device_work = engine.last_work(), host_work = cpu.last_work();
    INFO("pairs on the device " << device_work.cell_pairs << " + " << device_work.particle_pairs << ", tree-cpu's "
                                << host_work.cell_pairs << " + " << host_work.particle_pairs);
    CHECK(host_work.cell_pairs > 0);
    CHECK(host_work.particle_pairs > 0);
    CHECK(std::abs(device_work.cell_pairs / host_work.cell_pairs - 1) < 0.02);
    CHECK(std::abs(device_work.particle_pairs / host_work.particle_pairs - 1) < 0.02);
    const auto n = static_cast<Eigen::Index>(mine.size());
    const std::vector<double> q = percentiles(relative_errors(mine.acc, reference.acc.leftCols(n).eval()), {50, 99.9});
    INFO("acc p50 " << q[0] << " p99.9 " << q[1]);
    CHECK(q[0] < 2e-6);
    CHECK(q[1] < 1e-4);
    // The cut cells at their own sizes would give forces that differ: the test sees them enlarged.
    TreeCpuEngine plain_cpu(params, gravity);
    const Forces plain = forest_forces(d.trees[0], d.trees[1], plain_cpu);
    const double plain_q = percentiles(relative_errors(mine.acc, plain.acc.leftCols(n).eval()), {99.9})[0];
    INFO("acc p99.9 against the cut cells at their own sizes " << plain_q);
    CHECK(plain_q > 1e-4);
    // Without the LET the forces would be far off: the test sees the remote part.
    Forces own;
    TreeCpuEngine(params, gravity).compute(mine.pos, mine.mass, TypesRef{}, own);
    CHECK(percentiles(relative_errors(own.acc, reference.acc.leftCols(n).eval()), {50})[0] > 1e-2);
}

TEST_CASE("a malformed LET from another rank stops the step on the device with its error", "[gpu][let][resident]")
{
    TreeParams params{0.6, {16, 64}};
    params.lookahead = true;
    const GravityParams gravity{1.0, 1e-3};
    const ThreeDomains d(params.build);
    ParticleSet mine = d.sets[0];
    HostPlaysRankOne ranks(d.trees[1], d.beyond_first, params.opening());
    ranks.corrupt_ = true;
    TreeGpuEngine engine(params, gravity);
    DeviceParticles* device = engine.device_particles_on_domains(ranks);
    REQUIRE(device != nullptr);
    ParticleStore store(mine);
    store.place_on(device);
    store.kick_drift(0, 0);
    REQUIRE_THROWS_WITH(engine.compute(store), Catch::Contains("received LET is malformed: a skip"));
}
