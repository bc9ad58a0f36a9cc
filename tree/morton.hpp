// 63-bit Morton (Z-order) keys: 21 bits per axis, interleaved as ...z1y1x1 z0y0x0, so that the
// top three bits select the octant of the root cell and each further triple one level deeper.
// Sorting particles by key lays every octree cell out as one contiguous range.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"

namespace grove {

constexpr int kMortonBitsPerAxis = 21;
constexpr int kMaxTreeLevel = kMortonBitsPerAxis; // level 21 cells hold one key each
constexpr std::uint32_t kMortonAxisCells = 1u << kMortonBitsPerAxis;

// Spreads the low 21 bits of v so that bit k moves to bit 3k.
HOST_DEVICE inline std::uint64_t spread_bits_21(std::uint32_t v)
{
    std::uint64_t x = v & 0x1fffffu;
    x = (x | x << 32) & 0x001f00000000ffffull;
    x = (x | x << 16) & 0x001f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}

// Inverse of spread_bits_21: gathers bits 0, 3, 6, ... into the low 21 bits.
HOST_DEVICE inline std::uint32_t compact_bits_21(std::uint64_t x)
{
    x &= 0x1249249249249249ull;
    x = (x ^ (x >> 2)) & 0x10c30c30c30c30c3ull;
    x = (x ^ (x >> 4)) & 0x100f00f00f00f00full;
    x = (x ^ (x >> 8)) & 0x001f0000ff0000ffull;
    x = (x ^ (x >> 16)) & 0x001f00000000ffffull;
    x = (x ^ (x >> 32)) & 0x1fffffull;
    return static_cast<std::uint32_t>(x);
}

// Key of integer cell coordinates (each < 2^21): x in bit 0, y in bit 1, z in bit 2 of each triple.
HOST_DEVICE inline std::uint64_t morton_key(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz)
{
    return spread_bits_21(ix) | spread_bits_21(iy) << 1 | spread_bits_21(iz) << 2;
}

// The side of the keys' cube for a bounding box from mn to mx: its longest extent, 1 where that
// is 0 (or not a number), grown by a relative 1e-12 so that points on the upper faces map inside.
// The host build and the resident GPU step both take their cubes from here.
HOST_DEVICE inline double key_cube_side(const double mn[3], const double mx[3])
{
    const double sx = mx[0] - mn[0], sy = mx[1] - mn[1], sz = mx[2] - mn[2];
    const double sxy = sx > sy ? sx : sy;
    double side = sxy > sz ? sxy : sz;
    if (!(side > 0)) side = 1.0;
    return side * (1.0 + 1e-12);
}

// Integer coordinate of x along one axis of a cube starting at `lo`, given scale = 2^21 / side,
// clamped to [0, 2^21 - 1] so that points on the upper faces stay inside. (A multiplication, not
// a division by the side: the key phase is compute-bound on the host.)
HOST_DEVICE inline std::uint32_t morton_cell_coordinate(double x, double lo, double scale)
{
    const double scaled = (x - lo) * scale;
    if (!(scaled > 0)) return 0;
    if (scaled >= static_cast<double>(kMortonAxisCells - 1)) return kMortonAxisCells - 1;
    return static_cast<std::uint32_t>(scaled);
}

// The same keys as morton_key() by table lookup: three 8-bit lookups per axis instead of five
// dependent shift-and-mask steps (bench/results/step.md has what it saved).
class MortonTable {
  public:
    MortonTable()
    {
        for (std::uint32_t v = 0; v < 256; ++v) spread_[v] = spread_bits_21(v);
    }

    std::uint64_t key(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz) const
    {
        return spread(ix) | spread(iy) << 1 | spread(iz) << 2;
    }

  private:
    std::uint64_t spread(std::uint32_t v) const
    {
        return spread_[v & 255u] | spread_[(v >> 8) & 255u] << 24 | spread_[(v >> 16) & 31u] << 48;
    }

    std::uint64_t spread_[256];
};

// The octant (0..7) that `key` occupies below a cell of level `level` (0 = root).
HOST_DEVICE inline int morton_octant(std::uint64_t key, int level)
{
    return static_cast<int>((key >> (3 * (kMaxTreeLevel - 1 - level))) & 7u);
}

} // namespace grove
