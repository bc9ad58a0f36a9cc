#include "tree/build.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "tree/morton.hpp"
#include "tree/radix_sort.hpp"

namespace grove {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Smallest cube containing all particles; a degenerate extent (N = 1, coincident points) gets
// side 1 so that keys stay defined.
void bounding_cube(const Eigen::Matrix3Xd& pos, double lo[3], double& side)
{
    double mn[3] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                    std::numeric_limits<double>::max()};
    double mx[3] = {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::lowest(),
                    std::numeric_limits<double>::lowest()};
    const Eigen::Index n = pos.cols();
#pragma omp parallel for reduction(min : mn[:3]) reduction(max : mx[:3])
    for (Eigen::Index i = 0; i < n; ++i)
        for (int d = 0; d < 3; ++d) {
            mn[d] = std::min(mn[d], pos(d, i));
            mx[d] = std::max(mx[d], pos(d, i));
        }
    side = std::max({mx[0] - mn[0], mx[1] - mn[1], mx[2] - mn[2]});
    if (!(side > 0)) side = 1.0;
    side *= 1.0 + 1e-12; // points on the upper faces map inside the cube
    for (int d = 0; d < 3; ++d) lo[d] = mn[d];
}

class TopDownBuilder {
  public:
    TopDownBuilder(Octree& tree, const std::vector<std::uint64_t>& keys, int nleaf)
        : tree_(tree), keys_(keys), nleaf_(nleaf)
    {
    }

    // Appends the node for particles [begin, end) at `level` with integer corner `corner` (in
    // units of level-21 cells), then its children, in pre-order.
    void split(std::int32_t begin, std::int32_t end, int level, const std::uint32_t corner[3])
    {
        const auto index = static_cast<std::size_t>(tree_.next.size());
        const double cell = tree_.box_side / static_cast<double>(1u << level);
        const double half_cells = static_cast<double>(kMortonAxisCells >> level) / 2;
        Vec4<double> centre{};
        centre.x = tree_.box_lo[0] + (corner[0] + half_cells) * tree_.box_side / kMortonAxisCells;
        centre.y = tree_.box_lo[1] + (corner[1] + half_cells) * tree_.box_side / kMortonAxisCells;
        centre.z = tree_.box_lo[2] + (corner[2] + half_cells) * tree_.box_side / kMortonAxisCells;
        const bool leaf = end - begin <= nleaf_ || level == kMaxTreeLevel || keys_[begin] == keys_[end - 1];
        tree_.next.push_back(0);
        tree_.is_leaf.push_back(leaf ? 1 : 0);
        tree_.range.push_back({begin, end});
        tree_.size.push_back(cell);
        tree_.level.push_back(level);
        tree_.cell_centre.push_back(centre);
        if (!leaf) {
            // Keys in [begin, end) share their top 3*level bits, so the octant digit is monotone.
            std::int32_t child_begin = begin;
            for (int octant = 0; octant < 8; ++octant) {
                const auto child_end = static_cast<std::int32_t>(
                    std::partition_point(keys_.begin() + child_begin, keys_.begin() + end,
                                         [&](std::uint64_t k) { return morton_octant(k, level) <= octant; }) -
                    keys_.begin());
                if (child_end > child_begin) {
                    const std::uint32_t step = kMortonAxisCells >> (level + 1);
                    const std::uint32_t child_corner[3] = {corner[0] + ((octant & 1) ? step : 0),
                                                           corner[1] + ((octant & 2) ? step : 0),
                                                           corner[2] + ((octant & 4) ? step : 0)};
                    split(child_begin, child_end, level + 1, child_corner);
                }
                child_begin = child_end;
            }
        }
        tree_.next[index] = static_cast<std::int32_t>(tree_.next.size());
    }

  private:
    Octree& tree_;
    const std::vector<std::uint64_t>& keys_;
    int nleaf_;
};

void accumulate_quadrupole(Quadrupole<double>& q, double m, double dx, double dy, double dz)
{
    const double d2 = dx * dx + dy * dy + dz * dz;
    q.xx += m * (3 * dx * dx - d2);
    q.xy += m * 3 * dx * dy;
    q.xz += m * 3 * dx * dz;
    q.yy += m * (3 * dy * dy - d2);
    q.yz += m * 3 * dy * dz;
    q.zz += m * (3 * dz * dz - d2);
}

// Leaves sum their particles; internal nodes combine their children with the parallel-axis
// theorem, deepest level first so that children are always done before parents.
void compute_moments(Octree& tree)
{
    const std::vector<Vec4<double>>& centres = tree.cell_centre;
    const std::int32_t num_nodes = tree.num_nodes();
    tree.com_mass.assign(static_cast<std::size_t>(num_nodes), Vec4<double>{0, 0, 0, 0});
    tree.quad.assign(static_cast<std::size_t>(num_nodes), Quadrupole<double>{});
    int max_level = 0;
    for (int l : tree.level) max_level = std::max(max_level, l);
    std::vector<std::vector<std::int32_t>> internal_by_level(static_cast<std::size_t>(max_level + 1));
    std::vector<std::int32_t> leaves;
    for (std::int32_t i = 0; i < num_nodes; ++i) {
        if (tree.is_leaf[i])
            leaves.push_back(i);
        else
            internal_by_level[static_cast<std::size_t>(tree.level[i])].push_back(i);
    }
    auto finish_com = [&](std::int32_t i, double mx, double my, double mz, double m) {
        auto& cm = tree.com_mass[i];
        if (m > 0)
            cm = {mx / m, my / m, mz / m, m};
        else
            cm = {centres[i].x, centres[i].y, centres[i].z, 0};
    };
#pragma omp parallel for schedule(dynamic, 64)
    for (std::size_t k = 0; k < leaves.size(); ++k) {
        const std::int32_t i = leaves[k];
        double m = 0, mx = 0, my = 0, mz = 0;
        for (std::int32_t p = tree.range[i].begin; p < tree.range[i].end; ++p) {
            const auto& q = tree.particles[p];
            m += q.w;
            mx += q.w * q.x;
            my += q.w * q.y;
            mz += q.w * q.z;
        }
        finish_com(i, mx, my, mz, m);
        const auto cm = tree.com_mass[i];
        for (std::int32_t p = tree.range[i].begin; p < tree.range[i].end; ++p) {
            const auto& q = tree.particles[p];
            accumulate_quadrupole(tree.quad[i], q.w, q.x - cm.x, q.y - cm.y, q.z - cm.z);
        }
    }
    for (int level = max_level; level >= 0; --level) {
        const auto& nodes = internal_by_level[static_cast<std::size_t>(level)];
#pragma omp parallel for schedule(dynamic, 16)
        for (std::size_t k = 0; k < nodes.size(); ++k) {
            const std::int32_t i = nodes[k];
            double m = 0, mx = 0, my = 0, mz = 0;
            for (std::int32_t c = i + 1; c < tree.next[i]; c = tree.next[c]) {
                const auto& cc = tree.com_mass[c];
                m += cc.w;
                mx += cc.w * cc.x;
                my += cc.w * cc.y;
                mz += cc.w * cc.z;
            }
            finish_com(i, mx, my, mz, m);
            const auto cm = tree.com_mass[i];
            auto& q = tree.quad[i];
            for (std::int32_t c = i + 1; c < tree.next[i]; c = tree.next[c]) {
                const auto& qc = tree.quad[c];
                q.xx += qc.xx;
                q.xy += qc.xy;
                q.xz += qc.xz;
                q.yy += qc.yy;
                q.yz += qc.yz;
                q.zz += qc.zz;
                const auto& cc = tree.com_mass[c];
                accumulate_quadrupole(q, cc.w, cc.x - cm.x, cc.y - cm.y, cc.z - cm.z);
            }
        }
    }
    tree.com_offset.resize(static_cast<std::size_t>(num_nodes));
    for (std::int32_t i = 0; i < num_nodes; ++i) {
        const auto& cm = tree.com_mass[i];
        tree.com_offset[i] =
            std::sqrt((cm.x - centres[i].x) * (cm.x - centres[i].x) + (cm.y - centres[i].y) * (cm.y - centres[i].y) +
                      (cm.z - centres[i].z) * (cm.z - centres[i].z));
    }
}

// Maximal cells of at most ncrit particles, in pre-order (hence Morton order); a leaf holding more
// (coincident particles, or nleaf > ncrit) is cut into consecutive chunks of ncrit.
void make_groups(Octree& tree, int ncrit)
{
    std::vector<ParticleRange> ranges;
    for (std::int32_t i = 0; i < tree.num_nodes();) {
        const auto r = tree.range[i];
        if (r.end - r.begin <= ncrit || tree.is_leaf[i]) {
            for (std::int32_t b = r.begin; b < r.end; b += ncrit) ranges.push_back({b, std::min(b + ncrit, r.end)});
            i = tree.next[i];
        } else {
            ++i;
        }
    }
    tree.groups.resize(ranges.size());
#pragma omp parallel for schedule(static)
    for (std::size_t g = 0; g < ranges.size(); ++g) {
        double mn[3] = {std::numeric_limits<double>::max(), std::numeric_limits<double>::max(),
                        std::numeric_limits<double>::max()};
        double mx[3] = {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::lowest(),
                        std::numeric_limits<double>::lowest()};
        for (std::int32_t p = ranges[g].begin; p < ranges[g].end; ++p) {
            const double x[3] = {tree.particles[p].x, tree.particles[p].y, tree.particles[p].z};
            for (int d = 0; d < 3; ++d) {
                mn[d] = std::min(mn[d], x[d]);
                mx[d] = std::max(mx[d], x[d]);
            }
        }
        auto& group = tree.groups[g];
        group.range = ranges[g];
        // Half widths padded by a few ulps of the coordinates, so that rounding never puts a
        // particle outside its own box (the walk relies on it to open the group's own cells).
        double c[3], h[3];
        for (int d = 0; d < 3; ++d) {
            c[d] = (mn[d] + mx[d]) / 2;
            h[d] =
                (mx[d] - mn[d]) / 2 + 4 * std::numeric_limits<double>::epsilon() * (std::abs(mn[d]) + std::abs(mx[d]));
        }
        group.centre = {c[0], c[1], c[2], 0};
        group.half_extent = {h[0], h[1], h[2], 0};
    }
}

} // namespace

Octree build_octree(const Eigen::Matrix3Xd& pos, const Eigen::VectorXd& mass, const TreeParams& params,
                    BuildTimes* times)
{
    Octree tree;
    build_octree_into(tree, pos, mass, params, times);
    return tree;
}

void build_octree_into(Octree& tree, const Eigen::Matrix3Xd& pos, const Eigen::VectorXd& mass, const TreeParams& params,
                       BuildTimes* times)
{
    BuildTimes local_times;
    BuildTimes& t = times ? *times : local_times;
    t = BuildTimes{};
    if (params.nleaf < 1 || params.ncrit < 1) throw std::invalid_argument("tree: nleaf and ncrit must be >= 1");
    if (pos.cols() != mass.size()) throw std::invalid_argument("tree: positions and masses differ in length");
    if (pos.cols() >= std::numeric_limits<std::int32_t>::max())
        throw std::invalid_argument("tree: at most 2^31 - 1 particles are supported");
    if (!pos.allFinite() || !mass.allFinite()) throw std::invalid_argument("tree: non-finite position or mass");

    for (auto* v : {&tree.next, &tree.level}) v->clear();
    tree.is_leaf.clear();
    tree.range.clear();
    tree.size.clear();
    tree.cell_centre.clear();
    tree.groups.clear();
    tree.particles.clear();
    tree.order.clear();
    tree.keys.clear();
    tree.com_mass.clear();
    tree.quad.clear();
    tree.com_offset.clear();
    tree.r_open2.clear();
    const auto n = static_cast<std::int32_t>(pos.cols());
    if (n == 0) return;

    auto start = Clock::now();
    bounding_cube(pos, tree.box_lo, tree.box_side);
    std::vector<std::uint64_t>& keys = tree.keys;
    keys.resize(static_cast<std::size_t>(n));
    tree.order.resize(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
    for (std::int32_t i = 0; i < n; ++i) {
        keys[i] = morton_key(morton_cell_coordinate(pos(0, i), tree.box_lo[0], tree.box_side),
                             morton_cell_coordinate(pos(1, i), tree.box_lo[1], tree.box_side),
                             morton_cell_coordinate(pos(2, i), tree.box_lo[2], tree.box_side));
        tree.order[i] = static_cast<std::uint32_t>(i);
    }
    t.keys = seconds_since(start);

    start = Clock::now();
    radix_sort_pairs(keys, tree.order);
    tree.particles.resize(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static)
    for (std::int32_t k = 0; k < n; ++k) {
        const auto i = static_cast<Eigen::Index>(tree.order[k]);
        tree.particles[k] = {pos(0, i), pos(1, i), pos(2, i), mass[i]};
    }
    t.sort = seconds_since(start);

    start = Clock::now();
    TopDownBuilder builder(tree, keys, params.nleaf);
    const std::uint32_t root_corner[3] = {0, 0, 0};
    builder.split(0, n, 0, root_corner);
    t.build = seconds_since(start);

    start = Clock::now();
    compute_moments(tree);
    t.moments = seconds_since(start);

    start = Clock::now();
    make_groups(tree, params.ncrit);
    t.groups = seconds_since(start);
    set_opening_radii(tree, params.theta);
}

void set_opening_radii(Octree& tree, double theta)
{
    if (!(theta > 0)) throw std::invalid_argument("tree: theta must be > 0");
    tree.r_open2.resize(tree.next.size());
    for (std::size_t i = 0; i < tree.next.size(); ++i) {
        tree.r_open2[i] = opening_radius2(tree.size[i], tree.com_offset[i], theta);
    }
}

OctreeView<double> Octree::view() const
{
    OctreeView<double> v;
    v.num_nodes = num_nodes();
    v.num_particles = static_cast<std::int32_t>(particles.size());
    v.num_groups = static_cast<std::int32_t>(groups.size());
    v.next = next.data();
    v.is_leaf = is_leaf.data();
    v.range = range.data();
    v.com_mass = com_mass.data();
    v.quad = quad.data();
    v.r_open2 = r_open2.data();
    v.particles = particles.data();
    v.groups = groups.data();
    return v;
}

} // namespace grove
