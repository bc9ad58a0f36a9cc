// Locally essential trees in one process: the particles cut into Morton domains, each domain's
// tree with the other domains' LETs appended, evaluated by the unchanged walk and evaluation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/force_errors.hpp"
#include "core/galaxy_model.hpp"
#include "core/softening.hpp"
#include "support/test_support.hpp"
#include "tree/build.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/hilbert.hpp"
#include "tree/key_frame.hpp"
#include "tree/locally_essential.hpp"
#include "tree/mac.hpp"
#include "tree/softening_moments.hpp"
#include "tree/tree_cpu.hpp"
#include "tree/walk.hpp"

using namespace grove;

namespace {

constexpr auto kHalo = static_cast<std::size_t>(Component::Halo), kBulge = static_cast<std::size_t>(Component::Bulge);

// Domain d of `count`: a contiguous run of the whole set's Morton order, as the ranks hold them.
struct Domains {
    std::vector<Eigen::Matrix3Xd> pos;
    std::vector<Eigen::VectorXd> mass;
    std::vector<std::vector<std::int32_t>> index; // into the whole set
    std::vector<std::vector<std::uint8_t>> type;
};

Domains morton_domains(const ParticleSet& p, int count)
{
    const Octree whole = build_octree(p.pos, p.mass, BuildParams{});
    Domains d;
    const std::size_t n = p.size();
    for (int k = 0; k < count; ++k) {
        const std::size_t begin = n * static_cast<std::size_t>(k) / static_cast<std::size_t>(count);
        const std::size_t end = n * static_cast<std::size_t>(k + 1) / static_cast<std::size_t>(count);
        std::vector<std::int32_t> index;
        for (std::size_t s = begin; s < end; ++s) index.push_back(static_cast<std::int32_t>(whole.order[s]));
        d.pos.push_back(select_columns(p.pos, index));
        Eigen::VectorXd m(static_cast<Eigen::Index>(index.size()));
        for (std::size_t i = 0; i < index.size(); ++i) m[static_cast<Eigen::Index>(i)] = p.mass[index[i]];
        d.mass.push_back(m);
        d.index.push_back(index);
        std::vector<std::uint8_t> type(index.size());
        for (std::size_t i = 0; i < index.size(); ++i) type[i] = p.type[static_cast<std::size_t>(index[i])];
        d.type.push_back(type);
    }
    return d;
}

// Domain k's tree with every other domain's LET appended.
Octree forest_of(const Domains& d, int k, double theta)
{
    const BuildParams build{};
    Octree forest = build_octree(d.pos[static_cast<std::size_t>(k)], d.mass[static_cast<std::size_t>(k)], build);
    const std::vector<DomainBox> boxes = domain_boxes(forest);
    for (std::size_t j = 0; j < d.pos.size(); ++j) {
        if (static_cast<int>(j) == k) continue;
        const Octree other = build_octree(d.pos[j], d.mass[j], build);
        std::vector<char> wire;
        make_let(other, boxes, OpeningCriterion::geometric(theta), wire);
        append_let(forest, let_bytes(wire.data(), wire.size()));
    }
    return forest;
}

// Domain k's tree with every other domain's LET cut under `cut` for its groups' scales, from the
// |a| / G of the whole set (abs_acc, in its order); forest_abs gets the forest's |a| / G, the
// LETs' particles, which no group holds, at 0.
Octree scaled_forest_of(const Domains& d, int k, const OpeningCriterion& cut, const std::vector<double>& abs_acc,
                        std::vector<double>& forest_abs)
{
    const BuildParams build{};
    const auto me = static_cast<std::size_t>(k);
    Octree forest = build_octree(d.pos[me], d.mass[me], build);
    forest_abs.resize(d.index[me].size());
    for (std::size_t i = 0; i < forest_abs.size(); ++i)
        forest_abs[i] = abs_acc[static_cast<std::size_t>(d.index[me][i])];
    std::vector<double> scales(forest.groups.size());
    fill_group_mac_scales(forest.groups, forest.order.data(), forest_abs, scales.data());
    const std::vector<DomainBox> boxes = domain_boxes(forest, 1024, &scales);
    for (std::size_t j = 0; j < d.pos.size(); ++j) {
        if (j == me) continue;
        const Octree other = build_octree(d.pos[j], d.mass[j], build);
        std::vector<char> wire;
        make_let(other, boxes, cut, wire);
        append_let(forest, let_bytes(wire.data(), wire.size()));
    }
    forest_abs.resize(forest.particles.size(), 0.0);
    return forest;
}

// Domain k's tree with every other domain's LET cut under `cut`, softened by type as `gravity`
// has it; forest_types gets the forest's types (its own particles' in their order, then the LETs').
// With abs_acc (the whole set's |a| / G, in its order) the boxes carry their groups' scales, for a
// cut under the relative criterion.
Octree typed_forest_of(const Domains& d, int k, const OpeningCriterion& cut, const GravityParams& gravity,
                       std::vector<std::uint8_t>& forest_types, const std::vector<double>* abs_acc = nullptr)
{
    const BuildParams build{};
    const auto me = static_cast<std::size_t>(k);
    Octree forest = build_octree(d.pos[me], d.mass[me], build);
    std::vector<double> own_abs(d.index[me].size()), scales(forest.groups.size());
    if (abs_acc) {
        for (std::size_t i = 0; i < own_abs.size(); ++i)
            own_abs[i] = (*abs_acc)[static_cast<std::size_t>(d.index[me][i])];
        fill_group_mac_scales(forest.groups, forest.order.data(), own_abs, scales.data());
    }
    const std::vector<DomainBox> boxes = domain_boxes(forest, 1024, abs_acc ? &scales : nullptr);
    for (std::size_t j = 0; j < d.pos.size(); ++j) {
        if (j == me) continue;
        const Octree other = build_octree(d.pos[j], d.mass[j], build);
        SofteningMoments<double> moments;
        make_softening_moments(other, half_squared_softening(gravity, TypesRef(d.type[j]), d.type[j].size(), "test"),
                               moments);
        std::vector<std::uint8_t> sorted(other.particles.size());
        for (std::size_t s = 0; s < sorted.size(); ++s) sorted[s] = d.type[j][other.order[s]];
        const LetSoftening softening{&moments, &sorted};
        std::vector<char> wire;
        make_let(other, boxes, cut, wire, LetFormat{}, &softening);
        append_let(forest, let_bytes(wire.data(), wire.size()));
    }
    forest_types = d.type[me];
    forest_types.insert(forest_types.end(), forest.appended_types.begin(), forest.appended_types.end());
    return forest;
}

// The forces of every particle, domain by domain, in the whole set's order.
Forces domain_forces(const ParticleSet& p, const Domains& d, double theta, double eps)
{
    Forces all;
    all.acc.setZero(3, static_cast<Eigen::Index>(p.size()));
    all.pot.setZero(static_cast<Eigen::Index>(p.size()));
    TreeParams params;
    params.theta = theta;
    TreeCpuEngine engine(params, GravityParams{1.0, eps});
    for (std::size_t k = 0; k < d.pos.size(); ++k) {
        Octree forest = forest_of(d, static_cast<int>(k), theta);
        Forces f;
        engine.evaluate(forest, params.opening(), f);
        for (std::size_t i = 0; i < d.index[k].size(); ++i) {
            all.acc.col(d.index[k][i]) = f.acc.col(static_cast<Eigen::Index>(i));
            all.pot[d.index[k][i]] = f.pot[static_cast<Eigen::Index>(i)];
        }
    }
    return all;
}

// Mass that group g's walk of `forest` sees: accepted nodes and the particles of opened leaves.
struct MassSink {
    const Octree& tree;
    double mass = 0;
    void node(std::int32_t i) { mass += tree.com_mass[static_cast<std::size_t>(i)].w; }
    void leaf(std::int32_t i)
    {
        const ParticleRange r = tree.range[static_cast<std::size_t>(i)];
        for (std::int32_t k = r.begin; k < r.end; ++k) mass += tree.particles[static_cast<std::size_t>(k)].w;
    }
};

} // namespace

TEST_CASE("every group of every domain sees the whole mass through its tree and the LETs", "[tree][let]")
{
    const ParticleSet p = make_galaxy(6000, 4, GalaxyParams{});
    const double total = p.mass.sum();
    for (const int count : {2, 5}) {
        const Domains d = morton_domains(p, count);
        for (const double theta : {0.3, 0.75}) {
            for (int k = 0; k < count; ++k) {
                INFO(count << " domains, theta " << theta << ", domain " << k);
                Octree forest = forest_of(d, k, theta);
                set_opening_radii(forest, theta);
                const OctreeView<double> view = forest.view();
                REQUIRE(view.num_groups > 0);
                for (std::int32_t g = 0; g < view.num_groups; ++g) {
                    MassSink sink{forest};
                    walk_group_into(view, g, sink);
                    REQUIRE(sink.mass == Approx(total).epsilon(1e-12));
                }
            }
        }
    }
}

TEST_CASE("forces over LETs: the direct sum where every cell opens, the one tree's accuracy at theta", "[tree][let]")
{
    const ParticleSet p = make_galaxy(5000, 7, GalaxyParams{});
    const double eps = 0.05;
    Forces exact;
    DirectCpuEngine(GravityParams{1.0, eps}).compute(p.pos, p.mass, exact);
    const Domains d = morton_domains(p, 4);

    // theta that small opens every cell: the LETs carry every particle.
    const Forces all_open = domain_forces(p, d, 1e-4, eps);
    const auto open_errors = relative_errors(all_open.acc, exact.acc);
    CHECK(*std::max_element(open_errors.begin(), open_errors.end()) < 1e-12);

    // At theta 0.5 and 0.75 the errors are the one tree's: the LETs' cells were accepted for a
    // whole domain's box, so no group sees a coarser cell than its own walk would accept.
    TreeParams params;
    for (const double theta : {0.5, 0.75}) {
        INFO("theta " << theta);
        params.theta = theta;
        Forces one;
        TreeCpuEngine(params, GravityParams{1.0, eps}).compute(p.pos, p.mass, one);
        const auto e1 = percentiles(relative_errors(one.acc, exact.acc), {50, 99});
        const auto ek = percentiles(relative_errors(domain_forces(p, d, theta, eps).acc, exact.acc), {50, 99});
        CHECK(ek[0] < 1.05 * e1[0]);
        CHECK(ek[1] < 1.05 * e1[1]);
        CHECK(ek[0] > 0.3 * e1[0]); // an approximation still, not the direct sum
    }
}

TEST_CASE("LETs under the relative criterion: the forces of the other domains' whole trees, bit for bit", "[tree][let]")
{
    // A LET holds what every group of the receiving domain needs: a group walking it takes the
    // same cells, in the same order, as walking the sender's whole tree (a LET whose every cell is
    // opened), so its forces are the same to the last bit.
    const ParticleSet p = make_galaxy(5000, 7, GalaxyParams{});
    const GravityParams gravity{1.0, 0.05};
    Forces exact;
    DirectCpuEngine(gravity).compute(p.pos, p.mass, exact);
    std::vector<double> abs_acc(p.size());
    for (Eigen::Index i = 0; i < exact.acc.cols(); ++i) abs_acc[static_cast<std::size_t>(i)] = exact.acc.col(i).norm();
    const double total = p.mass.sum();
    const Domains d = morton_domains(p, 4);
    for (const double alpha : {1e-4, 3e-3}) {
        const OpeningCriterion criterion = OpeningCriterion::relative(alpha);
        TreeParams params;
        params.mac = MacKind::relative;
        params.alpha = alpha;
        std::size_t terminal = 0, cells = 0;
        for (int k = 0; k < 4; ++k) {
            INFO("alpha " << alpha << ", domain " << k);
            Forces f[2];
            for (int whole = 0; whole < 2; ++whole) {
                std::vector<double> forest_abs;
                Octree forest =
                    scaled_forest_of(d, k, whole ? OpeningCriterion::geometric(1e-9) : criterion, abs_acc, forest_abs);
                if (!whole) {
                    cells += forest.next.size();
                    for (std::size_t i = 0; i < forest.next.size(); ++i)
                        terminal += forest.is_leaf[i] && forest.range[i].end == forest.range[i].begin;
                    const OctreeView<double> view =
                        set_opening_criterion(forest, forest.view(), criterion, forest.groups, forest_abs);
                    for (std::int32_t g = 0; g < view.num_groups; ++g) {
                        MassSink sink{forest};
                        walk_group_into(view, g, sink);
                        REQUIRE(sink.mass == Approx(total).epsilon(1e-12));
                    }
                }
                Eigen::Matrix3Xd estimate =
                    Eigen::Matrix3Xd::Zero(3, static_cast<Eigen::Index>(forest.particles.size()));
                const auto& index = d.index[static_cast<std::size_t>(k)];
                for (std::size_t i = 0; i < index.size(); ++i)
                    estimate.col(static_cast<Eigen::Index>(i)) = exact.acc.col(index[i]);
                TreeCpuEngine engine(params, gravity);
                engine.set_acceleration_estimate(estimate);
                engine.evaluate(forest, criterion, f[whole]);
            }
            const auto n = static_cast<Eigen::Index>(d.index[static_cast<std::size_t>(k)].size());
            CHECK(f[0].acc.leftCols(n) == f[1].acc.leftCols(n));
            CHECK(f[0].pot.head(n) == f[1].pot.head(n));
        }
        CHECK(terminal > cells / 20); // the LETs were cut, not sent whole
    }
    // The relative criterion needs alpha > 0, and the boxes one scale per group.
    const Octree a = build_octree(d.pos[0], d.mass[0], BuildParams{});
    const Octree b = build_octree(d.pos[1], d.mass[1], BuildParams{});
    std::vector<char> wire;
    CHECK_THROWS_AS(make_let(a, domain_boxes(b), OpeningCriterion::relative(0.0), wire), std::invalid_argument);
    const std::vector<double> too_few(b.groups.size() - 1, 1.0);
    CHECK_THROWS_AS(domain_boxes(b, 1024, &too_few), std::invalid_argument);
}

TEST_CASE("a LET is a shell: the share of a domain it carries falls as the domains grow", "[tree][let]")
{
    // The particles sent go as the domain's surface, n^(2/3): a falling share of n.
    auto share_sent = [](std::size_t n) {
        const ParticleSet p = make_galaxy(n, 2, GalaxyParams{});
        const Domains d = morton_domains(p, 2);
        const Octree a = build_octree(d.pos[0], d.mass[0], BuildParams{});
        const Octree b = build_octree(d.pos[1], d.mass[1], BuildParams{});
        std::vector<char> wire;
        make_let(a, domain_boxes(b), OpeningCriterion::geometric(0.5), wire);
        const LetBytes let = let_bytes(wire.data(), wire.size());
        CHECK(let.nodes < static_cast<std::size_t>(a.num_nodes()));
        double mass = 0; // the top-level nodes of a LET hold the domain's mass
        for (std::size_t k = 0; k < let.nodes; k = static_cast<std::size_t>(let.node(k).next))
            mass += let.node(k).com_mass.w;
        CHECK(mass == Approx(d.mass[0].sum()).epsilon(1e-12));
        return static_cast<double>(let.particles) / static_cast<double>(a.particles.size());
    };
    const double small = share_sent(20000), large = share_sent(160000);
    CHECK(large < 0.8 * small);
    CHECK(large < 0.6);
}

// Peano-Hilbert domains cut in the domains' frame, each domain's tree built in that frame (as the
// ranks build theirs) or in its own: the other domains' particles that lie inside a domain's boxes
// (those of its cells' particles), which its LETs then bring as particles.
std::size_t particles_inside_other_boxes(const ParticleSet& p, int count, bool in_domains_frame)
{
    const auto n = p.size();
    double mn[3], mx[3];
    for (int d = 0; d < 3; ++d) {
        mn[d] = p.pos.row(d).minCoeff();
        mx[d] = p.pos.row(d).maxCoeff();
    }
    const KeyFrame cube = domains_key_frame(mn, mx);
    std::vector<std::uint64_t> key(n);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<Eigen::Index>(i);
        key[i] = hilbert_key(cube.cell(p.pos(0, c), 0), cube.cell(p.pos(1, c), 1), cube.cell(p.pos(2, c), 2));
    }
    std::vector<std::size_t> by_key(n);
    std::iota(by_key.begin(), by_key.end(), std::size_t{0});
    std::stable_sort(by_key.begin(), by_key.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
    std::vector<int> owner(n);
    for (std::size_t k = 0; k < n; ++k) owner[by_key[k]] = static_cast<int>(k * static_cast<std::size_t>(count) / n);
    std::size_t inside = 0;
    for (int d = 0; d < count; ++d) {
        std::vector<std::int32_t> mine;
        for (std::size_t i = 0; i < n; ++i)
            if (owner[i] == d) mine.push_back(static_cast<std::int32_t>(i));
        const Eigen::Matrix3Xd pos = select_columns(p.pos, mine);
        Eigen::VectorXd mass(static_cast<Eigen::Index>(mine.size()));
        for (std::size_t k = 0; k < mine.size(); ++k) mass[static_cast<Eigen::Index>(k)] = p.mass[mine[k]];
        Octree tree;
        build_octree_into(tree, pos, mass, BuildParams{}, nullptr, BuildContent::full,
                          in_domains_frame ? &cube : nullptr);
        for (const DomainBox& b : domain_boxes(tree)) {
            if (!b.bounds_particles) continue;
            for (std::size_t i = 0; i < n; ++i) {
                const auto c = static_cast<Eigen::Index>(i);
                inside += owner[i] != d && std::abs(p.pos(0, c) - b.box.centre.x) <= b.box.half_extent.x &&
                          std::abs(p.pos(1, c) - b.box.centre.y) <= b.box.half_extent.y &&
                          std::abs(p.pos(2, c) - b.box.centre.z) <= b.box.half_extent.z;
            }
        }
    }
    return inside;
}

TEST_CASE("a domain's tree in the domains' frame: its boxes reach into no other domain but where a cut passes",
          "[tree][let][domains]")
{
    const ParticleSet p = make_galaxy(32768, 1, GalaxyParams{});
    const std::size_t own_frames = particles_inside_other_boxes(p, 4, false);
    const std::size_t domains_frame = particles_inside_other_boxes(p, 4, true);
    INFO("other domains' particles inside a domain's boxes: " << domains_frame << " in the domains' frame, "
                                                              << own_frames << " in the trees' own frames");
    CHECK(domains_frame < p.size() / 100);
    CHECK(5 * domains_frame < own_frames);
}

// A rank's LetMaker makes a LET at every step into the memory of the last: what it makes must not
// depend on what it made before (a larger tree, then a smaller one, then the larger again).
TEST_CASE("a LetMaker used again makes the LETs make_let makes", "[tree][let]")
{
    const ParticleSet p = make_galaxy(40000, 4, GalaxyParams{});
    const Domains d = morton_domains(p, 3);
    const Octree large = build_octree(d.pos[0], d.mass[0], BuildParams{});
    const Octree small = build_octree(d.pos[1].leftCols(3000), d.mass[1].head(3000), BuildParams{});
    const std::vector<DomainBox> boxes = domain_boxes(build_octree(d.pos[2], d.mass[2], BuildParams{}));
    LetMaker maker;
    for (const Octree* tree : {&large, &small, &large}) {
        for (const double theta : {0.4, 0.7}) {
            std::vector<char> fresh, again;
            make_let(*tree, boxes, OpeningCriterion::geometric(theta), fresh);
            maker.make(*tree, boxes, OpeningCriterion::geometric(theta), again);
            CHECK(again == fresh);
        }
    }
}

TEST_CASE("a malformed LET is refused, never appended", "[tree][let]")
{
    const ParticleSet p = make_galaxy(3000, 3, GalaxyParams{});
    const Domains d = morton_domains(p, 2);
    const Octree a = build_octree(d.pos[0], d.mass[0], BuildParams{});
    const Octree b = build_octree(d.pos[1], d.mass[1], BuildParams{});
    std::vector<char> wire;
    make_let(a, domain_boxes(b), OpeningCriterion::geometric(0.5), wire);
    CHECK_NOTHROW(let_bytes(wire.data(), wire.size()));
    CHECK_THROWS_WITH(let_bytes(wire.data(), wire.size() - 1), Catch::Contains("length"));
    CHECK_THROWS_WITH(let_bytes(wire.data(), 8), Catch::Contains("header"));
    const LetBytes let = let_bytes(wire.data(), wire.size());
    const std::size_t header = wire.size() - let.nodes * sizeof(LetNode) - let.particles * sizeof(Vec4<double>);
    std::vector<char> broken = wire;
    LetNode first;
    std::memcpy(&first, broken.data() + header, sizeof first);
    first.next = 1 << 30;
    std::memcpy(broken.data() + header, &first, sizeof first);
    CHECK_THROWS_WITH(let_bytes(broken.data(), broken.size()), Catch::Contains("skip index"));
    // The header's form is 0 (full) or 1 (compact), the third of its 8-byte words.
    broken = wire;
    const std::uint64_t unknown = 2;
    std::memcpy(broken.data() + 16, &unknown, sizeof unknown);
    CHECK_THROWS_WITH(let_bytes(broken.data(), broken.size()), Catch::Contains("form"));
    // A compact LET read as a full one's length, or cut short, is refused.
    std::vector<char> compact;
    make_let(a, domain_boxes(b), OpeningCriterion::geometric(0.5), compact, LetFormat{true, {0, 0, 0, 0}});
    CHECK_NOTHROW(let_bytes(compact.data(), compact.size()));
    CHECK_THROWS_WITH(let_bytes(compact.data(), compact.size() - 4), Catch::Contains("length"));
    broken = compact;
    const std::uint64_t full = 0;
    std::memcpy(broken.data() + 16, &full, sizeof full);
    CHECK_THROWS_WITH(let_bytes(broken.data(), broken.size()), Catch::Contains("length"));
    CHECK_THROWS_AS(make_let(a, domain_boxes(b), OpeningCriterion::geometric(0.0), wire), std::invalid_argument);
    CHECK_THROWS_AS(domain_boxes(b, 0), std::invalid_argument);
}

// The compact form (for float engines): about half the bytes, and a forest that gives the full
// form's forces to float rounding, as the ranks of tree-gpu send and receive them.
TEST_CASE("a compact LET: half the bytes, the full LET's forest to float rounding", "[tree][let]")
{
    const ParticleSet p = make_galaxy(20000, 5, GalaxyParams{});
    const Domains d = morton_domains(p, 3);
    const double theta = 0.5, total = p.mass.sum();
    Octree full = build_octree(d.pos[0], d.mass[0], BuildParams{});
    Octree compact = full;
    const std::vector<DomainBox> boxes = domain_boxes(full);
    const LetFormat format{true, boxes.front().box.centre};
    std::size_t full_bytes = 0, compact_bytes = 0;
    LetMaker maker;
    for (std::size_t j = 1; j < 3; ++j) {
        const Octree other = build_octree(d.pos[j], d.mass[j], BuildParams{});
        std::vector<char> a, b, again;
        make_let(other, boxes, OpeningCriterion::geometric(theta), a);
        make_let(other, boxes, OpeningCriterion::geometric(theta), b, format);
        maker.make(other, boxes, OpeningCriterion::geometric(theta), again, format);
        CHECK(again == b);
        const LetBytes la = let_bytes(a.data(), a.size()), lb = let_bytes(b.data(), b.size());
        REQUIRE(lb.format.compact);
        REQUIRE(la.nodes == lb.nodes);
        REQUIRE(la.particles == lb.particles);
        REQUIRE(la.particles > 0);
        full_bytes += a.size();
        compact_bytes += b.size();
        // Structure, centres of mass and terminal cells exact; the rest to float rounding.
        for (std::size_t k = 0; k < la.nodes; ++k) {
            const LetNode x = la.node(k), y = lb.node(k);
            REQUIRE(y.next == x.next);
            REQUIRE(y.is_leaf == x.is_leaf);
            REQUIRE(y.first == x.first);
            REQUIRE(y.count == x.count);
            REQUIRE(y.com_mass.x == x.com_mass.x);
            REQUIRE(y.com_mass.y == x.com_mass.y);
            REQUIRE(y.com_mass.z == x.com_mass.z);
            REQUIRE((y.size == 0) == (x.size == 0));
            REQUIRE(y.com_mass.w == Approx(x.com_mass.w).epsilon(1e-7));
            REQUIRE(y.size == Approx(x.size).epsilon(1e-7));
        }
        for (std::size_t k = 0; k < la.particles; ++k) {
            const Vec4<double> x = la.particle(k), y = lb.particle(k);
            const double from_origin = std::max(
                {std::fabs(x.x - format.origin.x), std::fabs(x.y - format.origin.y), std::fabs(x.z - format.origin.z)});
            REQUIRE(std::fabs(y.x - x.x) <= 6e-8 * from_origin);
            REQUIRE(std::fabs(y.y - x.y) <= 6e-8 * from_origin);
            REQUIRE(std::fabs(y.z - x.z) <= 6e-8 * from_origin);
            REQUIRE(y.w == Approx(x.w).epsilon(1e-7));
        }
        append_let(full, la);
        append_let(compact, lb);
    }
    INFO("LET bytes: full " << full_bytes << ", compact " << compact_bytes);
    CHECK(compact_bytes < 0.6 * full_bytes);
    // Every group still sees the whole mass, and the forces are the full forest's to float rounding.
    set_opening_radii(compact, theta);
    const OctreeView<double> view = compact.view();
    for (std::int32_t g = 0; g < view.num_groups; ++g) {
        MassSink sink{compact};
        walk_group_into(view, g, sink);
        REQUIRE(sink.mass == Approx(total).epsilon(1e-6));
    }
    TreeParams params;
    params.theta = theta;
    TreeCpuEngine engine(params, GravityParams{1.0, 0.05});
    Forces a, b;
    engine.evaluate(full, params.opening(), a);
    engine.evaluate(compact, params.opening(), b);
    const auto n = static_cast<Eigen::Index>(d.index[0].size());
    const std::vector<double> q =
        percentiles(relative_errors(b.acc.leftCols(n).eval(), a.acc.leftCols(n).eval()), {50, 100});
    INFO("compact against full: p50 " << q[0] << ", largest " << q[1]);
    CHECK(q[0] < 1e-7);
    CHECK(q[1] < 3e-5);
    CHECK(q[1] > 0); // the compact form did round
}

TEST_CASE("LETs softened by type: the other domains' whole trees' forces bit for bit, one tree's errors", "[tree][let]")
{
    // Each LET node comes with its mean h and the radius its spread of h opens it within, each
    // particle with its type; the sender opens what that radius asks, so a group walking a LET
    // takes what it takes from the sender's whole tree, and its forces are the same bits.
    const ParticleSet p = make_galaxy(5000, 7, GalaxyParams{});
    GravityParams gravity{1.0, 0.05};
    gravity.eps_type[kHalo] = 0.1;
    gravity.eps_type[kBulge] = 0.02;
    REQUIRE(gravity.per_type());
    Forces exact;
    DirectCpuEngine(gravity).compute(p.pos, p.mass, TypesRef(p.type), exact);
    const Domains d = morton_domains(p, 4);
    for (const double theta : {0.5, 0.75}) {
        TreeParams params;
        params.theta = theta;
        Forces all;
        all.acc.setZero(3, static_cast<Eigen::Index>(p.size()));
        std::size_t terminal = 0, cells = 0;
        for (int k = 0; k < 4; ++k) {
            INFO("theta " << theta << ", domain " << k);
            Forces f[2];
            for (int whole = 0; whole < 2; ++whole) {
                std::vector<std::uint8_t> types;
                Octree forest =
                    typed_forest_of(d, k, OpeningCriterion::geometric(whole ? 1e-9 : theta), gravity, types);
                if (!whole) {
                    cells += forest.next.size();
                    for (std::size_t i = 0; i < forest.next.size(); ++i)
                        terminal += forest.is_leaf[i] && forest.range[i].end == forest.range[i].begin;
                }
                TreeCpuEngine engine(params, gravity);
                engine.load(forest, TypesRef(types));
                engine.evaluate_loaded(params.opening(), f[whole]);
            }
            const auto& index = d.index[static_cast<std::size_t>(k)];
            const auto n = static_cast<Eigen::Index>(index.size());
            CHECK(f[0].acc.leftCols(n) == f[1].acc.leftCols(n));
            CHECK(f[0].pot.head(n) == f[1].pot.head(n));
            for (std::size_t i = 0; i < index.size(); ++i)
                all.acc.col(index[i]) = f[0].acc.col(static_cast<Eigen::Index>(i));
        }
        CHECK(terminal > cells / 20); // the LETs were cut, not sent whole
        Forces one;
        TreeCpuEngine(params, gravity).compute(p.pos, p.mass, TypesRef(p.type), one);
        const auto e1 = percentiles(relative_errors(one.acc, exact.acc), {50, 99});
        const auto ek = percentiles(relative_errors(all.acc, exact.acc), {50, 99});
        INFO("theta " << theta << ": one tree p50 " << e1[0] << " p99 " << e1[1] << ", domains " << ek[0] << " "
                      << ek[1]);
        CHECK(ek[0] < 1.05 * e1[0]);
        CHECK(ek[1] < 1.05 * e1[1]);
        CHECK(ek[0] > 0.3 * e1[0]);
    }
    // Under the relative criterion too: the boxes carry their groups' scales, the cells their
    // softening, and a group's forces over the LETs are those over the whole trees, to the bit.
    std::vector<double> abs_acc(p.size());
    for (Eigen::Index i = 0; i < exact.acc.cols(); ++i)
        abs_acc[static_cast<std::size_t>(i)] = exact.acc.col(i).norm() / gravity.G;
    TreeParams relative;
    relative.mac = MacKind::relative;
    relative.alpha = 1e-3;
    for (int k = 0; k < 4; ++k) {
        INFO("relative, domain " << k);
        Forces f[2];
        for (int whole = 0; whole < 2; ++whole) {
            std::vector<std::uint8_t> types;
            Octree forest = typed_forest_of(d, k, whole ? OpeningCriterion::geometric(1e-9) : relative.opening(),
                                            gravity, types, &abs_acc);
            const auto& index = d.index[static_cast<std::size_t>(k)];
            Eigen::Matrix3Xd estimate = Eigen::Matrix3Xd::Zero(3, static_cast<Eigen::Index>(forest.particles.size()));
            for (std::size_t i = 0; i < index.size(); ++i)
                estimate.col(static_cast<Eigen::Index>(i)) = exact.acc.col(index[i]);
            TreeCpuEngine engine(relative, gravity);
            engine.set_acceleration_estimate(estimate);
            engine.load(forest, TypesRef(types));
            engine.evaluate_loaded(relative.opening(), f[whole]);
        }
        const auto n = static_cast<Eigen::Index>(d.index[static_cast<std::size_t>(k)].size());
        CHECK(f[0].acc.leftCols(n) == f[1].acc.leftCols(n));
        CHECK(f[0].pot.head(n) == f[1].pot.head(n));
    }
}

TEST_CASE("a LET softened by type keeps its cells' softening and its particles' types, in both forms", "[tree][let]")
{
    const ParticleSet p = make_galaxy(4000, 3, GalaxyParams{});
    GravityParams gravity{1.0, 0.05};
    gravity.eps_type[kBulge] = 0.02;
    const Domains d = morton_domains(p, 2);
    const Octree a = build_octree(d.pos[0], d.mass[0], BuildParams{});
    const Octree b = build_octree(d.pos[1], d.mass[1], BuildParams{});
    SofteningMoments<double> moments;
    make_softening_moments(a, half_squared_softening(gravity, TypesRef(d.type[0]), d.type[0].size(), "test"), moments);
    std::vector<std::uint8_t> sorted(a.particles.size());
    for (std::size_t s = 0; s < sorted.size(); ++s) sorted[s] = d.type[0][a.order[s]];
    const LetSoftening softening{&moments, &sorted};
    std::vector<char> plain, full, compact;
    make_let(a, domain_boxes(b), OpeningCriterion::geometric(0.5), plain);
    make_let(a, domain_boxes(b), OpeningCriterion::geometric(0.5), full, LetFormat{}, &softening);
    LetFormat small;
    small.compact = true;
    make_let(a, domain_boxes(b), OpeningCriterion::geometric(0.5), compact, small, &softening);
    const LetBytes x = let_bytes(plain.data(), plain.size()), y = let_bytes(full.data(), full.size()),
                   z = let_bytes(compact.data(), compact.size());
    CHECK_FALSE(x.by_type);
    REQUIRE(y.by_type);
    REQUIRE(z.by_type);
    REQUIRE(z.nodes == y.nodes);
    REQUIRE(z.particles == y.particles);
    CHECK(y.nodes >= x.nodes); // cells of mixed lengths may open further
    CHECK(full.size() ==
          plain.size() + (y.nodes - x.nodes) * 112 + (y.particles - x.particles) * 32 + y.nodes * 16 + y.particles);
    bool mixed = false, bulge = false;
    for (std::size_t k = 0; k < y.nodes; ++k) {
        const LetNodeSoftening s = y.node_softening(k), c = z.node_softening(k);
        CHECK(c.half == Approx(s.half).epsilon(1e-6));
        CHECK(c.radius2 == Approx(s.radius2).epsilon(1e-6));
        const LetNode node = y.node(k);
        if (node.is_leaf && node.count == 0) CHECK(s.radius2 == 0); // a terminal cell opens for no one
        mixed = mixed || s.radius2 > 0;
    }
    for (std::size_t k = 0; k < y.particles; ++k) {
        CHECK(y.particle_type(k) == z.particle_type(k));
        bulge = bulge || static_cast<std::size_t>(y.particle_type(k)) == kBulge;
    }
    CHECK(bulge);
    CHECK(mixed); // some cells sent open for their spread of h
    // Appended, they are the forest's: a forest of one softening refuses them by type, and a LET
    // without them in a forest softened by type is refused when the moments are made.
    Octree forest = build_octree(d.pos[1], d.mass[1], BuildParams{});
    append_let(forest, z);
    REQUIRE(forest.appended_half.size() == z.nodes);
    CHECK(forest.appended_types.size() == z.particles);
    std::vector<std::uint8_t> types = d.type[1];
    types.insert(types.end(), forest.appended_types.begin(), forest.appended_types.end());
    SofteningMoments<double> received;
    make_softening_moments(forest, half_squared_softening(gravity, TypesRef(types), types.size(), "test"), received);
    const std::size_t own = static_cast<std::size_t>(forest.num_nodes()) - z.nodes;
    CHECK(received.node[own] == static_cast<double>(static_cast<float>(moments.node[0])));
    Octree without = build_octree(d.pos[1], d.mass[1], BuildParams{});
    append_let(without, x);
    CHECK_THROWS_WITH(make_softening_moments(
                          without, half_squared_softening(gravity, TypesRef(types), types.size(), "test"), received),
                      Catch::Contains("without its cells' softening"));
    // Cut short, or with a type out of range, it is refused.
    CHECK_THROWS_WITH(let_bytes(compact.data(), compact.size() - 1), Catch::Contains("length"));
    compact.back() = 9;
    CHECK_THROWS_WITH(let_bytes(compact.data(), compact.size()), Catch::Contains("type out of range"));
}
