// Softening by particle type: the option's parsing, the pair rule eps_ij^2 = (eps_i^2 + eps_j^2)/2
// in the direct and Hermite engines against a brute-force sum written here, Newton's third law,
// the tree's cells (mass-weighted mean of eps^2 / 2) against the direct sum, and one softening
// left bit for bit as it was.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/force_errors.hpp"
#include "core/softening.hpp"
#include "support/test_support.hpp"
#include "support/tree_order_check.hpp"
#include "tree/direct_cpu.hpp"
#include "tree/hermite_cpu.hpp"
#include "tree/tree_cpu.hpp"

using namespace grove;

namespace {

// Clumped particles whose dense clump is the bulge (type 3) and the rest halo and disk by turns.
ParticleSet three_components(std::size_t n, std::uint64_t seed)
{
    ParticleSet p = test::clustered_particles(n, seed);
    for (std::size_t i = 0; i < n; ++i) p.type[i] = i % 3 == 0 ? 3 : i % 3 == 1 ? 1 : 2;
    return p;
}

GravityParams by_type(double eps, const std::string& lengths)
{
    GravityParams g{1.0, eps};
    parse_softening_types(lengths, g, "--eps-type");
    return g;
}

// The pair rule written out: phi_i = -sum m_j / sqrt(r^2 + (eps_i^2 + eps_j^2) / 2).
Forces brute_force(const ParticleSet& p, const GravityParams& g)
{
    const auto n = static_cast<Eigen::Index>(p.size());
    Forces f{Eigen::Matrix3Xd::Zero(3, n), Eigen::VectorXd::Zero(n)};
    for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index j = 0; j < n; ++j) {
            if (i == j) continue;
            const double ei = g.eps_of(p.type[static_cast<std::size_t>(i)]),
                         ej = g.eps_of(p.type[static_cast<std::size_t>(j)]);
            const Eigen::Vector3d d = p.pos.col(j) - p.pos.col(i);
            const double r = std::sqrt(d.squaredNorm() + (ei * ei + ej * ej) / 2);
            f.acc.col(i) += g.G * p.mass[j] * d / (r * r * r);
            f.pot[i] -= g.G * p.mass[j] / r;
        }
    return f;
}

TreeParams opening(double theta)
{
    TreeParams t;
    t.theta = theta;
    return t;
}

double median_error(const Eigen::Matrix3Xd& acc, const Eigen::Matrix3Xd& ref)
{
    return percentiles(relative_errors(acc, ref), {50})[0];
}

} // namespace

TEST_CASE("softening by type: the option's forms and its errors", "[softening]")
{
    const GravityParams g = by_type(0.05, "halo=0.1,2=0.05,bulge=0.02");
    CHECK(g.eps_of(1) == 0.1);
    CHECK(g.eps_of(2) == 0.05);
    CHECK(g.eps_of(3) == 0.02);
    CHECK(g.eps_of(0) == 0.05); // not named: --eps
    CHECK(g.per_type());
    CHECK(softening_types_text(g) == "1=0.1,3=0.02");   // disk equals eps
    CHECK_FALSE(by_type(0.05, "disk=0.05").per_type()); // one softening after all
    GravityParams back{1.0, 0.05};
    parse_softening_types(softening_types_text(g), back, "x");
    CHECK(back.eps_type[1] == g.eps_type[1]);
    CHECK(back.eps_type[3] == g.eps_type[3]);
    CHECK_THROWS_WITH(by_type(0, "halo"), Catch::Contains("TYPE=LENGTH"));
    CHECK_THROWS_WITH(by_type(0, "dust=1"), Catch::Contains("unknown particle type 'dust'"));
    CHECK_THROWS_WITH(by_type(0, "1=0.1,halo=0.2"), Catch::Contains("type 1 is given twice"));
    CHECK_THROWS_WITH(by_type(0, "1=-1"), Catch::Contains(">= 0"));
    CHECK_THROWS_WITH(by_type(0, "1=1e200"), Catch::Contains("finite"));
    CHECK_THROWS_WITH(by_type(0, "1=0.1x"), Catch::Contains("'0.1x'"));
    CHECK_THROWS_WITH(by_type(0, ""), Catch::Contains("empty"));

    const ParticleSet p = three_components(10, 1);
    const std::vector<double> h = half_squared_softening(g, p.type, p.size(), "e");
    CHECK(h[0] == 0.5 * 0.02 * 0.02);
    CHECK(h[1] == 0.5 * 0.1 * 0.1);
    CHECK(half_squared_softening(GravityParams{1.0, 0.1}, {}, 10, "e").empty());
    CHECK_THROWS_WITH(half_squared_softening(g, {}, 10, "tree-x"),
                      Catch::Contains("tree-x") && Catch::Contains("no types"));
    std::vector<std::uint8_t> bad = p.type;
    bad[4] = 9;
    CHECK_THROWS_WITH(half_squared_softening(g, bad, 10, "e"), Catch::Contains("particle 4 has type 9"));
}

TEST_CASE("softening by type: direct-cpu and Hermite give the pair rule and conserve momentum", "[softening]")
{
    const ParticleSet p = three_components(300, 3);
    const GravityParams g = by_type(0.01, "halo=0.02,disk=0.005,bulge=0.002");
    const Forces ref = brute_force(p, g);
    Forces f;
    DirectCpuEngine direct(g);
    direct.compute(p.pos, p.mass, p.type, f);
    CHECK((f.acc - ref.acc).norm() <= 1e-12 * ref.acc.norm());
    CHECK((f.pot - ref.pot).norm() <= 1e-12 * ref.pot.norm());
    Eigen::Vector3d total = Eigen::Vector3d::Zero();
    double scale = 0;
    for (Eigen::Index i = 0; i < f.acc.cols(); ++i) {
        total += p.mass[i] * f.acc.col(i);
        scale += p.mass[i] * f.acc.col(i).norm();
    }
    CHECK(total.norm() <= 1e-13 * scale);
    // The softening matters here: one length for all gives other forces.
    Forces one;
    DirectCpuEngine(GravityParams{1.0, 0.01}).compute(p.pos, p.mass, one);
    CHECK((one.acc - ref.acc).norm() > 1e-2 * ref.acc.norm());
    // A subset, and types missing.
    Forces some;
    direct.compute_subset(p.pos, p.mass, p.type, {5, 17}, some);
    CHECK(some.acc.col(1) == f.acc.col(17));
    CHECK_THROWS_WITH(direct.compute(p.pos, p.mass, f), Catch::Contains("no types"));

    // Hermite's acceleration and potential at the start are the same sums.
    HermiteCpuEngine hermite(g);
    HermiteState s;
    s.x = p.pos;
    s.v = p.vel;
    s.a = s.j = Eigen::Matrix3Xd::Zero(3, p.pos.cols());
    s.t = Eigen::VectorXd::Zero(p.pos.cols());
    s.mass = p.mass;
    s.type = p.type;
    hermite.set_state(s);
    HermiteForces h;
    hermite.evaluate(0.0, test::all_indices(p.size()), h);
    CHECK((h.acc - ref.acc).norm() <= 1e-12 * ref.acc.norm());
    CHECK((h.pot - ref.pot).norm() <= 1e-12 * ref.pot.norm());
    s.type.clear();
    CHECK_THROWS_WITH(hermite.set_state(s), Catch::Contains("no types"));
}

TEST_CASE("softening by type: one length for every type stays bit for bit the one-softening path", "[softening]")
{
    const ParticleSet p = three_components(2000, 4);
    const GravityParams one{1.0, 0.01}, same = by_type(0.01, "halo=0.01,disk=0.01,bulge=0.01");
    REQUIRE_FALSE(same.per_type());
    Forces a, b, c, d;
    DirectCpuEngine(one).compute(p.pos, p.mass, a);
    DirectCpuEngine(same).compute(p.pos, p.mass, p.type, b);
    CHECK(a.acc == b.acc);
    CHECK(a.pot == b.pot);
    TreeCpuEngine(TreeParams{}, one).compute(p.pos, p.mass, c);
    TreeCpuEngine(TreeParams{}, same).compute(p.pos, p.mass, p.type, d);
    CHECK(c.acc == d.acc);
    CHECK(c.pot == d.pot);
}

TEST_CASE("softening by type: tree-cpu against the direct sum, its cells softened by their mean", "[softening][tree]")
{
    const ParticleSet p = three_components(6000, 5);
    const GravityParams g = by_type(0.01, "halo=0.02,disk=0.005,bulge=0.002");
    Forces ref;
    DirectCpuEngine(g).compute(p.pos, p.mass, p.type, ref);
    for (const double theta : {0.3, 0.6}) {
        INFO("theta " << theta);
        Forces f;
        TreeCpuEngine(opening(theta), g).compute(p.pos, p.mass, p.type, f);
        const double e = median_error(f.acc, ref.acc), e_pot = percentiles(relative_errors(f.pot, ref.pot), {50})[0];
        // The usual tree error: that of a tree with one softening, the worst of the types' lengths.
        double worst = 0, worst_pot = 0;
        for (const double eps : {0.02, 0.005, 0.002}) {
            Forces one, one_ref;
            DirectCpuEngine(GravityParams{1.0, eps}).compute(p.pos, p.mass, one_ref);
            TreeCpuEngine(opening(theta), GravityParams{1.0, eps}).compute(p.pos, p.mass, one);
            worst = std::max(worst, median_error(one.acc, one_ref.acc));
            worst_pot = std::max(worst_pot, percentiles(relative_errors(one.pot, one_ref.pot), {50})[0]);
        }
        INFO("median errors by type " << e << " " << e_pot << ", one softening (worst) " << worst << " " << worst_pot);
        CHECK(e < 1.15 * worst);
        CHECK(e_pot < 1.15 * worst_pot);
    }
    // Opened further, the tree converges on the pair rule's direct sum.
    Forces small;
    TreeCpuEngine(opening(0.1), g).compute(p.pos, p.mass, p.type, small);
    CHECK(median_error(small.acc, ref.acc) < 1e-5);
}

TEST_CASE("softening by type: cells mixing lengths far apart are opened, and the tree keeps its error",
          "[softening][tree]")
{
    // A clump far smaller than the halo's softening, halo and bulge particles mixed: a cell's mean
    // h alone would err by tens of per cent here (its spread of h is of the order of d^2).
    ParticleSet p = test::random_particles(8000, 61);
    std::mt19937_64 rng(62);
    std::normal_distribution<double> g(0.0, 0.05);
    for (std::size_t i = 0; i < p.size(); ++i) {
        p.pos.col(static_cast<Eigen::Index>(i)) << g(rng), g(rng), g(rng);
        p.type[i] = i % 2 ? 1 : 3;
    }
    const GravityParams gt = by_type(0.01, "halo=0.1,bulge=0.002");
    Forces ref, f, one_ref, one;
    DirectCpuEngine(gt).compute(p.pos, p.mass, p.type, ref);
    TreeCpuEngine tree(opening(0.5), gt);
    tree.compute(p.pos, p.mass, p.type, f);
    const GravityParams g_one{1.0, 0.002};
    DirectCpuEngine(g_one).compute(p.pos, p.mass, one_ref);
    TreeCpuEngine(opening(0.5), g_one).compute(p.pos, p.mass, one);
    const auto e = percentiles(relative_errors(f.acc, ref.acc), {50, 99});
    const auto e_one = percentiles(relative_errors(one.acc, one_ref.acc), {50, 99});
    INFO("by type p50 " << e[0] << " p99 " << e[1] << "; one softening " << e_one[0] << " " << e_one[1]);
    CHECK(e[0] < 2 * e_one[0]);
    CHECK(e[1] < 2 * e_one[1]);
    // The cells opened for it: more interactions than one softening's walk, at most all of them.
    CHECK(tree.last_stats().leaf_interactions_per_particle <= static_cast<double>(p.size()));
}

TEST_CASE("softening by type: tree-cpu's forces in its own order carry the types along", "[softening][tree][order]")
{
    test::check_forces_in_own_order(three_components(5000, 13), [](const TreeParams& params) {
        return std::make_unique<TreeCpuEngine>(params, by_type(0.01, "halo=0.02,disk=0.005,bulge=0.002"));
    });
}
