// Where a particle's Morton key comes from: its position mapped into the keys' cube. The keys
// have 21 bits per axis, so the cube's finest cells are its side / 2^21 wide, and a cell of one key
// cannot be split: where more than nleaf particles share one, their leaf stays overfull and every
// group near it takes their particles one by one. A cube spanned by a few far particles (a Plummer
// sphere's outliers, reaching r ~ 3·10^4 at 2^26 particles; an escaper a run has flung out) makes
// the finest cells as wide as the centre's spacing, and the step's cost grows as N^2 there.
//
// So where the bounding cube is much wider than the bulk, the frame keeps a core around the bulk
// as it is and compresses the distance beyond it logarithmically, per axis: u -> core (1 + ln(|u| /
// core)), continuous with its slope at the core's edge and monotonic, so every key cell is still a
// box in space (long ones outside the core) and the octree's cells still nest. Nothing else reads
// the frame's geometry: a node is measured by its particles' box (tree/node_moments.hpp).
//
// The core: 256 interquartile ranges of the positions (the largest axis's) about their median, both
// from a sample of 1024 particles spread evenly over the array (a quartile moves little with the
// sample, and not at all with a few far particles, where a mean or a deviation would), the
// half-width rounded up to a power of two and the centre to a 256th of it. The core is wide because
// a key cell beyond it is stretched along each compressed axis by |u| / core in space, and the
// opening criterion measures a cell by its longest side: every group then opens the stretched
// cells and leaves of the outskirts, and takes their particles one by one. With a core of 16
// ranges, a Plummer sphere of 2^26 particles walked 5687 node and 6774 particle interactions a
// particle under theta 0.5, where 2^25's unwarped tree walks 4314 and 2619; with 256 ranges, 4530
// and 2557 (bench/results/step.md). The warp is used only where the bounding cube is wider than 64
// half-widths (16384 ranges or more); otherwise the keys are the bounding cube's. Either cube is
// then offset a little, differently at each build (make_key_frame), so that the tree's cells do not
// lie in the same place step after step.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.hpp"
#include "core/rng.hpp"
#include "tree/morton.hpp"

namespace grove {

constexpr double kKeyCoreRanges = 256;
constexpr double kKeyWarpFromCores = 64;
constexpr int kKeyFrameSample = 1024;

// The array index of sample k (0 .. kKeyFrameSample - 1) among n particles.
HOST_DEVICE inline std::int64_t key_frame_sample(int k, std::int64_t n)
{
    return static_cast<std::int64_t>(k) * n / kKeyFrameSample;
}

// The ranks (0-based, in the sorted sample) of the lower quartile, the median and the upper one.
constexpr int kLowerQuartileRank = kKeyFrameSample / 4, kMedianRank = kKeyFrameSample / 2,
              kUpperQuartileRank = 3 * kKeyFrameSample / 4;

struct KeyFrame {
    double lo[3] = {0, 0, 0};     // the cube's corner, in the frame's coordinates
    double side = 0;              // its side
    double scale = 0;             // 2^21 / side
    double centre[3] = {0, 0, 0}; // the core's centre
    double core = 0;              // its half-width; 0: no warp (the coordinates are the positions)

    // Coordinate of x along `axis` in the frame.
    HOST_DEVICE double coordinate(double x, int axis) const
    {
        if (core == 0) return x;
        const double u = x - centre[axis];
        const double a = fabs(u);
        if (a <= core) return u;
        const double w = core * (1 + log(a / core));
        return u < 0 ? -w : w;
    }
    // Integer cell coordinate (0 .. 2^21 - 1) of x along `axis`.
    HOST_DEVICE std::uint32_t cell(double x, int axis) const
    {
        return morton_cell_coordinate(coordinate(x, axis), lo[axis], scale);
    }
    HOST_DEVICE std::uint64_t key(double x, double y, double z) const
    {
        return morton_key(cell(x, 0), cell(y, 1), cell(z, 2));
    }
};

// Smallest power of two >= v (v > 0).
HOST_DEVICE inline double power_of_two_at_least(double v)
{
    int e = 0;
    const double m = frexp(v, &e); // v = m 2^e, m in [0.5, 1)
    return m == 0.5 ? v : ldexp(1.0, e);
}

// The frame of the cube around mn..mx, not warped: the bounding cube's keys.
HOST_DEVICE inline KeyFrame cube_key_frame(const double mn[3], const double mx[3])
{
    KeyFrame f;
    f.side = key_cube_side(mn, mx);
    for (int d = 0; d < 3; ++d) f.lo[d] = mn[d];
    f.scale = kMortonAxisCells / f.side;
    return f;
}

// The frame domains are cut in (parallel/domains.hpp), not warped, which each domain's tree takes
// too: the tree's cells are then cells of the cut, so that a cell of one domain's tree holds no
// other domain's space, save the few a cut passes through, and its particles' box reaches into no
// other domain. (In a frame of its own, a domain wrapped around another had cells whose boxes
// spanned the inner one, and every cell of the inner domain within them went to the outer one as
// particles.) The cube's side is a power of two at least the box's, its corner on a grid of an
// eighth of the side: it stays the same while the box moves a little, so that trees built a few
// steps after the cut still take the cut's cells (trees in the bounding cube of the particles a
// step after the cut took three times the LET particles of trees in the cut's own cube). A model
// centred on the origin then has its centre on a corner of the cells of every level but the
// coarsest, so the cuts share its dense centre out evenly: the ranks' work came out equal where,
// with the bounding cube, one domain held the centre and 1.3 times the others' work
// (bench/results/several-gpus.md). Non-finite bounds give the bounding cube.
HOST_DEVICE inline KeyFrame domains_key_frame(const double mn[3], const double mx[3])
{
    KeyFrame f = cube_key_frame(mn, mx);
    for (int d = 0; d < 3; ++d)
        if (!(mn[d] - mn[d] == 0 && mx[d] - mx[d] == 0)) return f; // infinite or NaN
    for (double side = power_of_two_at_least(f.side);; side *= 2) {
        const double grid = side / 8;
        bool inside = true;
        for (int d = 0; d < 3; ++d) {
            f.lo[d] = grid * floor(mn[d] / grid);
            inside = inside && mx[d] < f.lo[d] + side;
        }
        if (inside) {
            f.side = side;
            break;
        }
    }
    f.scale = kMortonAxisCells / f.side;
    return f;
}

// SplitMix64's finaliser: every bit of x stirs every bit of the result.
HOST_DEVICE inline std::uint64_t mix_bits(std::uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// How far a one-process frame's cube reaches past the points' own, as a share of their side: the
// cube's corner lies that share times a fraction u (0 <= u < 1 per axis) below theirs.
constexpr double kKeyFrameJitter = 0.125;

// The box's bounds are read in steps of 2^-kKeyFrameQuantumBits of its side (rounded up to a power
// of two) when the offset is drawn from them.
constexpr int kKeyFrameQuantumBits = 24;

// A draw for the frame's offset for points whose bounding box is mn..mx: pseudo-random, from the
// box. A frame that stays put leaves the tree's force errors the same at every step, so
// they add up: the momentum of a galaxy in the bounding cube drifted steadily along the disk's
// axis, as much in block steps as in shared ones (bench/results/step.md). The outermost particles'
// drift moves the box by many of its steps in a step's time, and so the offset at every build:
// the errors of one build are not those of the next, and they walk rather than drift (GADGET-4
// shifts its domain centre at random for the same reason). Taken from the box, not drawn from a
// stream, so that a build repeats to the bit from the same points in any order, on the host and
// the device, and a restart needs no state; from the box in steps, not its bits, so that points
// that differ by their rounding (a prediction and the drift it predicted, a file's floats and
// its doubles) almost always get the same frame.
HOST_DEVICE inline std::uint64_t key_frame_bounds_draw(const double mn[3], const double mx[3])
{
    const double quantum = ldexp(power_of_two_at_least(key_cube_side(mn, mx)), -kKeyFrameQuantumBits);
    std::uint64_t h = 0x6a09e667f3bcc909ull;
    for (int d = 0; d < 3; ++d) {
        h = mix_bits(h ^ double_bits(floor(mn[d] / quantum)));
        h = mix_bits(h ^ double_bits(floor(mx[d] / quantum)));
    }
    return h;
}

// Fractions u (0 <= u < 1), one per axis, from a draw.
HOST_DEVICE inline void fractions_of_draw(std::uint64_t h, double u[3])
{
    for (int d = 0; d < 3; ++d) {
        h = mix_bits(h + 0x9e3779b97f4a7c15ull);
        u[d] = uniform01(h);
    }
}

// The draw from the box as fractions u of the frame's offset.
HOST_DEVICE inline void key_frame_offset_fractions(const double mn[3], const double mx[3], double u[3])
{
    fractions_of_draw(key_frame_bounds_draw(mn, mx), u);
}

// The frame `f` (whose cube spans the points' from f.lo) grown by kKeyFrameJitter of its side and
// shifted by the fractions u of that growth: every point stays inside.
HOST_DEVICE inline void offset_key_frame(KeyFrame& f, const double u[3])
{
    const double reach = kKeyFrameJitter * f.side;
    for (int d = 0; d < 3; ++d) f.lo[d] -= u[d] * reach;
    f.side += reach;
    f.scale = kMortonAxisCells / f.side;
}

// How far the domains' frame moves when the domains are cut anew, as a share of its side: an
// eighth, as one process's frame moves (kKeyFrameJitter). The domains' cube stays put between
// cuts, and so would the force errors its grid leaves (a galaxy's momentum drifted steadily along
// the disk's axis on four domains); moved by pseudo-random fractions of its side at each cut, the
// drift became a walk as small as one process's for any share from an eighth to a 256th. An
// eighth also takes a centred model's centre and its disk's plane away from the corners and faces
// of the cells of every level below the coarsest three, where a 64th left them near those of the
// coarsest six, and the disk's force errors above one process's; the cuts, made to equal work,
// keep the ranks even all the same (bench/results/several-gpus.md).
constexpr double kDomainsFrameJitter = kKeyFrameJitter;

// The domains' cube `cube` (domains_key_frame) moved for cut number `draw` as offset_key_frame
// moves one process's frame, by fractions from the draw: the same on every rank for the same draw.
// Draw 0 is the cube itself. Every point of the cube stays inside.
HOST_DEVICE inline KeyFrame moved_domains_frame(const KeyFrame& cube, std::uint64_t draw)
{
    if (draw == 0) return cube;
    KeyFrame f = cube;
    double u[3];
    fractions_of_draw(mix_bits(0x3c6ef372fe94f82bull ^ draw), u);
    offset_key_frame(f, u);
    return f;
}

// The frame for points whose bounding box is mn..mx, given their sample's median and largest
// interquartile range: the bounding box's cube where the points are compact (or the range is 0),
// the warped cube otherwise; either offset as key_frame_offset_fractions says.
HOST_DEVICE inline KeyFrame make_key_frame(const double mn[3], const double mx[3], const double median[3], double range)
{
    double u[3];
    key_frame_offset_fractions(mn, mx, u);
    const double plain = key_cube_side(mn, mx);
    const double core = range > 0 ? power_of_two_at_least(kKeyCoreRanges * range) : 0;
    if (!(core > 0 && plain > kKeyWarpFromCores * core)) {
        KeyFrame f = cube_key_frame(mn, mx);
        offset_key_frame(f, u);
        return f;
    }
    KeyFrame f;
    f.core = core;
    const double step = core / 256;
    double wlo[3], whi[3];
    for (int d = 0; d < 3; ++d) {
        f.centre[d] = step * nearbyint(median[d] / step);
        wlo[d] = f.coordinate(mn[d], d); // the map is monotonic: the box's corners stay its corners
        whi[d] = f.coordinate(mx[d], d);
    }
    // The core's centre (0 here) a third of the way along every axis before the offset: on the
    // cube's middle, where a cube spanned by outliers on all sides would put it, it would lie on a
    // boundary at every level, and the densest groups would be cut into eight at each (their
    // neighbours' lists grow). The offset then moves it by up to an eighth of the side.
    double side = 0;
    for (int d = 0; d < 3; ++d) side = fmax(side, fmax(-3 * wlo[d], 1.5 * whi[d]));
    f.side = side * (1 + 1e-12);
    for (int d = 0; d < 3; ++d) f.lo[d] = -f.side / 3;
    offset_key_frame(f, u);
    return f;
}

} // namespace grove
