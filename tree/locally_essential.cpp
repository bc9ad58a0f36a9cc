#include "tree/locally_essential.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "core/particles.hpp"
#include "tree/groups.hpp"
#include "tree/let_wire.hpp"
#include "tree/mac.hpp"

namespace grove {

namespace {

static_assert(sizeof(LetNode) == 128, "the full node's wire size (tree/let_wire.hpp)");

CompactLetNode compact_node(const LetNode& n)
{
    CompactLetNode c{};
    c.com[0] = n.com_mass.x;
    c.com[1] = n.com_mass.y;
    c.com[2] = n.com_mass.z;
    c.mass = static_cast<float>(n.com_mass.w);
    const double q[6] = {n.quad.xx, n.quad.xy, n.quad.xz, n.quad.yy, n.quad.yz, n.quad.trace};
    for (int k = 0; k < 6; ++k) c.quad[k] = static_cast<float>(q[k]);
    c.size = static_cast<float>(n.size);
    c.com_offset = static_cast<float>(n.com_offset);
    c.next = n.next;
    c.first = n.first;
    c.leaf_count = n.is_leaf ? n.count : -1;
    return c;
}

LetNode full_node(const CompactLetNode& c)
{
    LetNode n;
    n.com_mass = {c.com[0], c.com[1], c.com[2], c.mass};
    n.quad = {c.quad[0], c.quad[1], c.quad[2], c.quad[3], c.quad[4], c.quad[5]};
    n.size = c.size;
    n.com_offset = c.com_offset;
    n.next = c.next;
    n.first = c.first;
    n.count = c.leaf_count > 0 ? c.leaf_count : 0;
    n.is_leaf = c.leaf_count >= 0;
    return n;
}

Group<double> union_box(const Group<double>* first, const Group<double>* last)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (const Group<double>* g = first; g != last; ++g) {
        const double c[3] = {g->centre.x, g->centre.y, g->centre.z};
        const double h[3] = {g->half_extent.x, g->half_extent.y, g->half_extent.z};
        for (int a = 0; a < 3; ++a) {
            lo[a] = std::min(lo[a], c[a] - h[a]);
            hi[a] = std::max(hi[a], c[a] + h[a]);
        }
    }
    Group<double> box{};
    box.centre = {0.5 * (lo[0] + hi[0]), 0.5 * (lo[1] + hi[1]), 0.5 * (lo[2] + hi[2]), 0};
    box.half_extent = {0.5 * (hi[0] - lo[0]), 0.5 * (hi[1] - lo[1]), 0.5 * (hi[2] - lo[2]), 0};
    return box;
}

// The receiver's float coordinates err by a few ulps (about 1e-7 relative) of its extent, which
// its boxes span; 1e-5 of a box's size, and a floor for a box of one point, lies far beyond that.
Group<double> grown(const Group<double>& box)
{
    const Vec4<double>& h = box.half_extent;
    const double c = std::max({std::fabs(box.centre.x), std::fabs(box.centre.y), std::fabs(box.centre.z)});
    const double margin = 1e-5 * (h.x + h.y + h.z) + 1e-12 * c + std::numeric_limits<double>::min();
    Group<double> g = box;
    g.half_extent = {h.x + margin, h.y + margin, h.z + margin, 0};
    return g;
}

} // namespace

namespace {

// Skip indices of entries taken in pre-order from a tree: entry k's subtree ends where its source
// node's does, at the first entry taken from beyond it.
template <class Entry>
void set_skips(const Octree& tree, const std::vector<std::int32_t>& source, std::vector<Entry>& entries)
{
    for (std::size_t k = 0; k < source.size(); ++k) {
        const std::int32_t end = tree.next[static_cast<std::size_t>(source[k])];
        const auto after = std::lower_bound(source.begin() + static_cast<std::ptrdiff_t>(k) + 1, source.end(), end);
        entries[k].next = static_cast<std::int32_t>(after - source.begin());
    }
}

} // namespace

std::vector<DomainBox> domain_box_cells(const Octree& tree, int count, std::vector<ParticleRange>& ranges)
{
    if (count < 1) throw std::invalid_argument("domain_boxes: count must be >= 1");
    std::vector<DomainBox> boxes;
    std::vector<std::int32_t> source;
    ranges.clear();
    const auto n = static_cast<std::int64_t>(tree.range.empty() ? 0 : tree.range[0].end);
    const std::int64_t most = std::max<std::int64_t>(1, n / count);
    for (std::int32_t i = 0; i < tree.num_nodes();) {
        const auto k = static_cast<std::size_t>(i);
        const ParticleRange r = tree.range[k];
        // A group's box must lie within one of the boxes: never descend below a group.
        const auto group = std::upper_bound(tree.groups.begin(), tree.groups.end(), r.begin,
                                            [](std::int32_t b, const Group<double>& g) { return b < g.range.begin; });
        const bool within_group = group != tree.groups.begin() && std::prev(group)->range.end >= r.end;
        DomainBox b;
        b.bounds_particles = !(r.end - r.begin > most && !tree.is_leaf[k] && !within_group);
        if (r.end > r.begin || !b.bounds_particles) {
            boxes.push_back(b);
            source.push_back(i);
            ranges.push_back(b.bounds_particles ? r : ParticleRange{0, 0});
        }
        i = b.bounds_particles ? tree.next[k] : i + 1; // too many particles: its children instead
    }
    set_skips(tree, source, boxes);
    return boxes;
}

void finish_domain_boxes(std::vector<DomainBox>& boxes)
{
    for (DomainBox& b : boxes)
        if (b.bounds_particles) b.box = grown(b.box);
    for (std::size_t k = boxes.size(); k-- > 0;) {
        if (boxes[k].bounds_particles) continue;
        std::vector<Group<double>> children;
        for (auto c = static_cast<std::int32_t>(k) + 1; c < boxes[k].next;
             c = boxes[static_cast<std::size_t>(c)].next) {
            children.push_back(boxes[static_cast<std::size_t>(c)].box);
            boxes[k].mac_scale = std::max(boxes[k].mac_scale, boxes[static_cast<std::size_t>(c)].mac_scale);
        }
        boxes[k].box = union_box(children.data(), children.data() + children.size());
    }
}

std::vector<DomainBox> domain_boxes(const Octree& tree, int count, const std::vector<double>* group_scales)
{
    if (group_scales && group_scales->size() != tree.groups.size())
        throw std::invalid_argument("domain_boxes: one scale per group");
    std::vector<ParticleRange> ranges;
    std::vector<DomainBox> boxes = domain_box_cells(tree, count, ranges);
    // The cells' boxes from their particles; above them, each box the union of its children's.
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t k = 0; k < boxes.size(); ++k) {
        const ParticleRange r = ranges[k];
        if (!boxes[k].bounds_particles) continue;
        boxes[k].box = particles_box(tree, r);
        if (!group_scales) continue;
        // The groups tile the particles in order: from the one holding the cell's first particle on.
        auto g = std::upper_bound(tree.groups.begin(), tree.groups.end(), r.begin,
                                  [](std::int32_t b, const Group<double>& x) { return b < x.range.begin; });
        if (g != tree.groups.begin()) --g;
        for (; g != tree.groups.end() && g->range.begin < r.end; ++g)
            boxes[k].mac_scale =
                std::max(boxes[k].mac_scale, (*group_scales)[static_cast<std::size_t>(g - tree.groups.begin())]);
    }
    finish_domain_boxes(boxes);
    return boxes;
}

namespace {

// What a walk of part of the tree took: the source node of each LET node, the nodes, the
// particles (each node's `first` counting from this piece's first particle).
struct LetPiece {
    std::vector<std::int32_t> source;
    std::vector<LetNode> nodes;
    std::vector<Vec4<double>> particles;
    std::vector<std::uint8_t> types; // softened by type: the particles' types
};

// Walks the tree's nodes [begin, end) for the boxes. With `tasks`, an opened cell of at most
// `split` particles is not walked but left as a task (its index in the piece, source -1 - task).
void walk_for_boxes(const Octree& tree, std::int32_t begin, std::int32_t end, const std::vector<DomainBox>& boxes,
                    const OpeningCriterion& criterion, const LetSoftening* softening, LetPiece& piece,
                    std::vector<std::int32_t>* tasks, std::int32_t split)
{
    const bool relative = criterion.kind == MacKind::relative;
    const double theta = criterion.geometric_theta(); // under the relative criterion, its bound
    for (std::int32_t i = begin; i < end;) {
        const auto k = static_cast<std::size_t>(i);
        const double r_rel2 = relative ? relative_radius2(tree.size[k], tree.com_mass[k].w, criterion.alpha) : 0.0;
        double r_open2 = opening_radius2(tree.size[k], tree.com_offset[k], theta);
        if (softening) r_open2 = std::max(r_open2, softening->moments->radius2[k]); // as the receiver's cells
        const bool opened =
            must_open_for(boxes.data(), static_cast<std::int32_t>(boxes.size()), tree.com_mass[k], r_open2, r_rel2);
        const ParticleRange r = tree.range[k];
        if (opened && tasks && !tree.is_leaf[k] && r.end - r.begin <= split) {
            piece.source.push_back(-1 - static_cast<std::int32_t>(tasks->size()));
            piece.nodes.emplace_back();
            tasks->push_back(i);
            i = tree.next[k];
            continue;
        }
        LetNode n;
        n.com_mass = tree.com_mass[k];
        n.quad = tree.quad[k];
        n.is_leaf = 1; // a terminal cell is a leaf without particles, which no group opens
        if (opened) {
            n.size = tree.size[k];
            n.com_offset = tree.com_offset[k];
            n.is_leaf = tree.is_leaf[k];
            if (n.is_leaf) {
                n.count = r.end - r.begin;
                n.first = n.count > 0 ? static_cast<std::int32_t>(piece.particles.size()) : 0;
                piece.particles.insert(piece.particles.end(), tree.particles.begin() + r.begin,
                                       tree.particles.begin() + r.end);
                if (softening)
                    piece.types.insert(piece.types.end(), softening->sorted_types->begin() + r.begin,
                                       softening->sorted_types->begin() + r.end);
            }
        }
        piece.nodes.push_back(n);
        piece.source.push_back(i);
        i = opened ? i + 1 : tree.next[k];
    }
}

} // namespace

// The LET in walk order: the top's nodes one by one, each task's piece in its place.
struct LetSegment {
    const LetPiece* piece;
    std::size_t node, nodes, particle, particles; // in the piece
    std::size_t node_at = 0, particle_at = 0;     // in the LET
};

struct LetMaker::Scratch {
    LetPiece top; // the top of the tree walked here, the cells below it by the threads
    std::vector<std::int32_t> tasks;
    std::vector<LetPiece> below;
    std::vector<LetSegment> segments;
    std::vector<LetNode> nodes;
    std::vector<std::int32_t> source;
};

LetMaker::LetMaker() : s_(std::make_unique<Scratch>()) {}
LetMaker::~LetMaker() = default;

void LetMaker::make(const Octree& tree, const std::vector<DomainBox>& boxes, const OpeningCriterion& criterion,
                    std::vector<char>& out, const LetFormat& format, const LetSoftening* softening)
{
    if (softening &&
        (!softening->moments || !softening->sorted_types || softening->moments->node.size() != tree.next.size() ||
         softening->moments->radius2.size() != tree.next.size() ||
         softening->sorted_types->size() != tree.particles.size()))
        throw std::invalid_argument("make_let: softening by type for another tree");
    if (criterion.kind == MacKind::geometric && !(criterion.theta > 0))
        throw std::invalid_argument("make_let: theta must be > 0");
    if (criterion.kind == MacKind::relative && !(criterion.alpha > 0))
        throw std::invalid_argument("make_let: alpha must be > 0");
    Scratch& s = *s_;
    const auto clear = [](LetPiece& piece) {
        piece.source.clear();
        piece.nodes.clear();
        piece.particles.clear();
        piece.types.clear();
    };
    clear(s.top);
    s.tasks.clear();
    if (!boxes.empty() && tree.num_nodes() > 0) {
        const auto split = static_cast<std::int32_t>(std::max<std::size_t>(4096, tree.particles.size() / 256));
        walk_for_boxes(tree, 0, tree.num_nodes(), boxes, criterion, softening, s.top, &s.tasks, split);
    }
    if (s.below.size() < s.tasks.size()) s.below.resize(s.tasks.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t t = 0; t < s.tasks.size(); ++t) {
        clear(s.below[t]);
        walk_for_boxes(tree, s.tasks[t], tree.next[static_cast<std::size_t>(s.tasks[t])], boxes, criterion, softening,
                       s.below[t], nullptr, 0);
    }
    // Every piece's nodes and particles go straight to where they belong in `out`.
    s.segments.clear();
    std::size_t num_nodes = 0, num_particles = 0;
    for (std::size_t k = 0; k < s.top.nodes.size(); ++k) {
        const std::int32_t from = s.top.source[k];
        const LetPiece* task = from < 0 ? &s.below[static_cast<std::size_t>(-1 - from)] : nullptr;
        LetSegment g = task ? LetSegment{task, 0, task->nodes.size(), 0, task->particles.size()}
                            : LetSegment{&s.top, k, 1, static_cast<std::size_t>(s.top.nodes[k].first),
                                         static_cast<std::size_t>(s.top.nodes[k].count)};
        g.node_at = num_nodes;
        g.particle_at = num_particles;
        num_nodes += g.nodes;
        num_particles += g.particles;
        s.segments.push_back(g);
    }
    const bool compact = format.compact, by_type = softening != nullptr;
    const LetHeader h{num_nodes,
                      num_particles,
                      compact ? 1u : 0u,
                      by_type ? 1u : 0u,
                      {format.origin.x, format.origin.y, format.origin.z}};
    const std::size_t at = out.size();
    const LetLayout layout = let_layout(num_nodes, num_particles, compact, by_type);
    out.resize(at + layout.end);
    std::memcpy(out.data() + at, &h, sizeof h);
    char* nodes_out = out.data() + at + layout.nodes;
    char* particles_out = out.data() + at + layout.particles;
    char* softening_out = out.data() + at + layout.softening;
    char* types_out = out.data() + at + layout.types;
    s.nodes.resize(num_nodes);
    s.source.resize(num_nodes);
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t k = 0; k < s.segments.size(); ++k) {
        const LetSegment& g = s.segments[k];
        for (std::size_t j = 0; j < g.nodes; ++j) {
            LetNode n = g.piece->nodes[g.node + j];
            if (n.count > 0) n.first = static_cast<std::int32_t>(g.particle_at + (n.first - g.particle));
            s.nodes[g.node_at + j] = n;
            s.source[g.node_at + j] = g.piece->source[g.node + j];
        }
        const Vec4<double>* from = g.piece->particles.data() + g.particle;
        if (by_type && g.particles > 0)
            std::memcpy(types_out + g.particle_at, g.piece->types.data() + g.particle, g.particles);
        if (!compact) {
            if (g.particles > 0)
                std::memcpy(particles_out + g.particle_at * sizeof(Vec4<double>), from,
                            g.particles * sizeof(Vec4<double>));
            continue;
        }
        for (std::size_t j = 0; j < g.particles; ++j) {
            const float p[4] = {static_cast<float>(from[j].x - format.origin.x),
                                static_cast<float>(from[j].y - format.origin.y),
                                static_cast<float>(from[j].z - format.origin.z), static_cast<float>(from[j].w)};
            std::memcpy(particles_out + (g.particle_at + j) * sizeof p, p, sizeof p);
        }
    }
    set_skips(tree, s.source, s.nodes);
    if (by_type) {
        // A terminal cell goes with no radius: every group accepted it, and it has nothing to open.
#pragma omp parallel for schedule(static)
        for (std::int64_t k = 0; k < static_cast<std::int64_t>(num_nodes); ++k) {
            const auto u = static_cast<std::size_t>(k);
            const auto i = static_cast<std::size_t>(s.source[u]);
            const bool terminal = s.nodes[u].is_leaf && s.nodes[u].count == 0;
            const double v[2] = {softening->moments->node[i], terminal ? 0.0 : softening->moments->radius2[i]};
            if (!compact) {
                std::memcpy(softening_out + u * sizeof v, v, sizeof v);
                continue;
            }
            const float f[2] = {static_cast<float>(v[0]), static_cast<float>(v[1])};
            std::memcpy(softening_out + u * sizeof f, f, sizeof f);
        }
    }
    if (!compact) {
        std::memcpy(nodes_out, s.nodes.data(), num_nodes * sizeof(LetNode));
        return;
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(num_nodes); ++k) {
        const CompactLetNode c = compact_node(s.nodes[static_cast<std::size_t>(k)]);
        std::memcpy(nodes_out + static_cast<std::size_t>(k) * sizeof c, &c, sizeof c);
    }
}

void make_let(const Octree& tree, const std::vector<DomainBox>& boxes, const OpeningCriterion& criterion,
              std::vector<char>& out, const LetFormat& format, const LetSoftening* softening)
{
    LetMaker().make(tree, boxes, criterion, out, format, softening);
}

LetBytes let_bytes_of_header(const LetHeader& h, const char* data, std::size_t size)
{
    const auto bad = [](const std::string& why) { return std::runtime_error("received LET is malformed: " + why); };
    constexpr std::uint64_t kMax = std::numeric_limits<std::int32_t>::max();
    if (h.nodes > kMax || h.particles > kMax) throw bad("more than 2^31 nodes or particles");
    if (h.compact > 1 || h.by_type > 1) throw bad("an unknown form");
    const bool compact = h.compact == 1, by_type = h.by_type == 1;
    if (size != let_layout(h.nodes, h.particles, compact, by_type).end)
        throw bad("its length does not match its counts");
    return {data, h.nodes, h.particles, {compact, {h.origin[0], h.origin[1], h.origin[2], 0}}, by_type};
}

LetBytes let_bytes(const char* data, std::size_t size)
{
    LetHeader h{};
    if (size < sizeof h) throw std::runtime_error("received LET is malformed: shorter than its header");
    std::memcpy(&h, data, sizeof h);
    const LetBytes let = let_bytes_of_header(h, data, size);
    const bool by_type = let.by_type;
    const auto n = static_cast<std::int64_t>(let.nodes), np = static_cast<std::int64_t>(let.particles);
    // Every node checked by all threads (a rank receives millions a step); the worst fault named.
    int fault = kLetSound;
#pragma omp parallel for schedule(static) reduction(max : fault)
    for (std::int64_t k = 0; k < n; ++k) {
        const LetNode a = let.node(static_cast<std::size_t>(k));
        fault = std::max(fault, let_node_fault(k, n, np, a.next, a.is_leaf != 0, a.first, a.count));
        if (!by_type) continue;
        const LetNodeSoftening soft = let.node_softening(static_cast<std::size_t>(k));
        if (!(soft.half >= 0) || !(soft.radius2 >= 0) || !std::isfinite(soft.half) || !std::isfinite(soft.radius2))
            fault = std::max<int>(fault, kLetBadSoftening);
    }
    if (by_type)
#pragma omp parallel for schedule(static) reduction(max : fault)
        for (std::int64_t k = 0; k < np; ++k)
            if (let.particle_type(static_cast<std::size_t>(k)) >= kNumParticleTypes)
                fault = std::max<int>(fault, kLetBadType);
    if (fault != kLetSound)
        throw std::runtime_error(std::string("received LET is malformed: ") + let_fault_text(fault));
    return let;
}

LetNode LetBytes::node(std::size_t k) const
{
    const char* at =
        data + let_layout(nodes, particles, format.compact, by_type).nodes + k * let_node_bytes(format.compact);
    if (!format.compact) {
        LetNode n;
        std::memcpy(&n, at, sizeof n);
        return n;
    }
    CompactLetNode c;
    std::memcpy(&c, at, sizeof c);
    return full_node(c);
}

Vec4<double> LetBytes::particle(std::size_t k) const
{
    const char* at =
        data + let_layout(nodes, particles, format.compact, by_type).particles + k * let_particle_bytes(format.compact);
    if (!format.compact) {
        Vec4<double> p;
        std::memcpy(&p, at, sizeof p);
        return p;
    }
    float p[4];
    std::memcpy(p, at, sizeof p);
    return {format.origin.x + p[0], format.origin.y + p[1], format.origin.z + p[2], p[3]};
}

LetNodeSoftening LetBytes::node_softening(std::size_t k) const
{
    const char* at = data + let_layout(nodes, particles, format.compact, by_type).softening +
                     k * let_node_softening_bytes(format.compact);
    if (!format.compact) {
        double v[2];
        std::memcpy(v, at, sizeof v);
        return {v[0], v[1]};
    }
    float f[2];
    std::memcpy(f, at, sizeof f);
    return {f[0], f[1]};
}

std::uint8_t LetBytes::particle_type(std::size_t k) const
{
    const char* at = data + let_layout(nodes, particles, format.compact, by_type).types + k;
    std::uint8_t t;
    std::memcpy(&t, at, 1);
    return t;
}

namespace {

// Every node and particle array of the tree (tree/tree_arrays.hpp: not the groups, which stay the
// tree's own, nor the arrays set per criterion) and the cell centres, reserved or resized to m
// nodes and n particles.
// Room for `count`, and an eighth more where the array must move: a rank's forest grows by a
// few particles at some steps (its domain follows the particles, the LETs vary), and a move of
// every array into new memory at each of them made the LETs' append take half a second at 2^24
// particles a rank.
template <class Array> void reserve_with_headroom(Array& array, std::size_t count)
{
    if (count > array.capacity()) array.reserve(count + count / 8);
}

template <bool kReserve> void size_forest(Octree& forest, std::size_t m, std::size_t n)
{
    for_each_array(forest, [&](auto& array, const TreeArrayInfo& info) {
        if (info.per_theta || info.extent == Extent::groups) return;
        const std::size_t count = info.extent == Extent::nodes ? m : n;
        if constexpr (kReserve)
            reserve_with_headroom(array, count);
        else
            array.resize(count);
    });
    if constexpr (kReserve)
        reserve_with_headroom(forest.cell_centre, m);
    else
        forest.cell_centre.resize(m, Vec4<double>{0, 0, 0, 0});
}

} // namespace

void reserve_for_lets(Octree& forest, std::size_t nodes, std::size_t particles)
{
    size_forest<true>(forest, forest.next.size() + nodes, forest.particles.size() + particles);
    reserve_with_headroom(forest.appended_half, forest.appended_half.size() + nodes);
    reserve_with_headroom(forest.appended_radius2, forest.appended_radius2.size() + nodes);
    reserve_with_headroom(forest.appended_types, forest.appended_types.size() + particles);
}

void append_let(Octree& forest, const LetBytes& let)
{
    const std::size_t m0 = forest.next.size(), n0 = forest.particles.size();
    const std::size_t m = m0 + let.nodes, n = n0 + let.particles;
    if (n > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()) ||
        m > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw std::runtime_error("append_let: the tree and its LETs exceed 2^31 particles or nodes");
    size_forest<false>(forest, m, n);
    const std::size_t given0 = forest.appended_half.size(), types0 = forest.appended_types.size();
    forest.appended_half.resize(given0 + let.nodes, NAN);
    forest.appended_radius2.resize(given0 + let.nodes, NAN);
    forest.appended_types.resize(types0 + let.particles, 0);
    const auto base_node = static_cast<std::int32_t>(m0), base_particle = static_cast<std::int32_t>(n0);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(let.nodes); ++k) {
        const LetNode a = let.node(static_cast<std::size_t>(k));
        const std::size_t i = m0 + static_cast<std::size_t>(k);
        forest.next[i] = base_node + a.next;
        forest.is_leaf[i] = static_cast<std::uint8_t>(a.is_leaf);
        forest.range[i] = {base_particle + a.first, base_particle + a.first + a.count};
        forest.com_mass[i] = a.com_mass;
        forest.quad[i] = a.quad;
        forest.size[i] = a.size;
        forest.com_offset[i] = a.com_offset;
        if (!let.by_type) continue;
        const LetNodeSoftening soft = let.node_softening(static_cast<std::size_t>(k));
        forest.appended_half[given0 + static_cast<std::size_t>(k)] = soft.half;
        forest.appended_radius2[given0 + static_cast<std::size_t>(k)] = soft.radius2;
    }
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(let.particles); ++k) {
        const std::size_t j = n0 + static_cast<std::size_t>(k);
        forest.particles[j] = let.particle(static_cast<std::size_t>(k));
        forest.order[j] = static_cast<std::uint32_t>(j);
        if (let.by_type)
            forest.appended_types[types0 + static_cast<std::size_t>(k)] =
                let.particle_type(static_cast<std::size_t>(k));
    }
}

} // namespace grove
