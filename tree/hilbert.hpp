// 63-bit Peano-Hilbert keys of the same 21-bit cell coordinates as the Morton keys (tree/morton.hpp):
// the curve visits every octree cell as one contiguous range of keys, as the Morton curve does, and
// consecutive keys are cells that share a face, so that a range of keys is a more compact region
// (fewer cells on its surface) than a Morton range of the same size.
//
// The curve is defined by Skilling's algorithm (J. Skilling, "Programming the Hilbert curve", AIP
// Conf. Proc. 707, 381, 2004: the coordinates turned into the "transposed" index in place, whose
// bits interleaved give the key). It is self-similar: below any cell the curve is the whole curve
// turned and mirrored one of a few ways, so a key can also be read from a table of those ways
// (states) by the cells' octants, level by level: the way the domains key every particle at every
// step (hilbert_key). The table is derived from Skilling's keys themselves, and checked against
// them.
#pragma once

#include <cstdint>
#include <vector>

#include "tree/morton.hpp"

namespace grove {

// The key of integer cell coordinates (each < 2^21), by Skilling's transposition.
inline std::uint64_t hilbert_key_by_transposition(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz)
{
    std::uint32_t x[3] = {ix, iy, iz};
    constexpr std::uint32_t top = 1u << (kMortonBitsPerAxis - 1);
    // Undo the rotations and reflections of the cells above each level.
    for (std::uint32_t q = top; q > 1; q >>= 1) {
        const std::uint32_t p = q - 1;
        for (int i = 0; i < 3; ++i) {
            if (x[i] & q) {
                x[0] ^= p; // invert the lower bits of the first axis
            } else {       // exchange the lower bits of the first axis and this one
                const std::uint32_t t = (x[0] ^ x[i]) & p;
                x[0] ^= t;
                x[i] ^= t;
            }
        }
    }
    // Gray encode.
    x[1] ^= x[0];
    x[2] ^= x[1];
    std::uint32_t t = 0;
    for (std::uint32_t q = top; q > 1; q >>= 1)
        if (x[2] & q) t ^= q - 1;
    for (std::uint32_t& c : x) c ^= t;
    // Each level's triple, the first axis's bit the highest.
    return morton_key(x[2], x[1], x[0]);
}

// The same keys read from a table per state of the curve: the top level's three bits by octant,
// then two levels' six bits at a time by the pair of octants (ten lookups instead of twenty).
class HilbertTable {
  public:
    HilbertTable(); // derived from hilbert_key_by_transposition
    std::uint64_t key(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz) const
    {
        static_assert(kMortonBitsPerAxis % 2 == 1, "one level, then pairs of levels");
        constexpr int top = kMortonBitsPerAxis - 1;
        const std::uint8_t first = steps_[((ix >> top) & 1u) | ((iy >> top) & 1u) << 1 | ((iz >> top) & 1u) << 2];
        std::uint64_t key = first & 7u;
        unsigned state = first >> 3;
        for (int level = top - 1; level > 0; level -= 2) {
            const unsigned x = (ix >> (level - 1)) & 3u, y = (iy >> (level - 1)) & 3u, z = (iz >> (level - 1)) & 3u;
            const unsigned upper = (x >> 1) | (y >> 1) << 1 | (z >> 1) << 2,
                           lower = (x & 1u) | (y & 1u) << 1 | (z & 1u) << 2;
            const std::uint16_t pair = pairs_[state * 64 + (upper << 3 | lower)];
            key = key << 6 | (pair & 63u);
            state = pair >> 6;
        }
        return key;
    }
    int states() const { return static_cast<int>(steps_.size() / 8); }

  private:
    std::vector<std::uint8_t> steps_;  // [state * 8 + octant]: the level's three bits | next state << 3
    std::vector<std::uint16_t> pairs_; // [state * 64 + upper octant * 8 + lower]: six bits | state << 6
};

// The key of integer cell coordinates (each < 2^21), from one table made on first use.
std::uint64_t hilbert_key(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz);

} // namespace grove
