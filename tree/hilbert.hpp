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

#include "core/host_device.hpp"
#include "tree/morton.hpp"

namespace grove {

// The key of integer cell coordinates (each < 2^21), by Skilling's transposition.
HOST_DEVICE inline std::uint64_t hilbert_key_by_transposition(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz)
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

// The Peano-Hilbert key of the cell a Morton key names (the same cell coordinates): where a GPU
// holds the Morton keys its tree is built from, the domains' owners of its particles follow.
HOST_DEVICE inline std::uint64_t hilbert_key_of_morton(std::uint64_t key)
{
    return hilbert_key_by_transposition(compact_bits_21(key), compact_bits_21(key >> 1), compact_bits_21(key >> 2));
}

// The owner of a key among ranks cut at `first` (ranks + 1 ascending keys, first[0] = 0 and
// first[ranks] above every key): the r with first[r] <= key < first[r + 1].
HOST_DEVICE inline int key_range_owner(const std::uint64_t* first, int ranks, std::uint64_t key)
{
    int lo = 0, hi = ranks; // first[lo] <= key < first[hi]
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (first[mid] <= key)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

// The same keys read from a table per state of the curve, three levels' nine bits at a time by
// the three octants (seven lookups, each waiting on the state the last one gave).
class HilbertTable {
  public:
    HilbertTable(); // derived from hilbert_key_by_transposition
    std::uint64_t key(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz) const
    {
        static_assert(kMortonBitsPerAxis % 3 == 0, "three levels a lookup");
        // Three bits of one axis spread to every third bit, the highest level's first.
        static constexpr std::uint16_t spread[8] = {0, 1, 8, 9, 64, 65, 72, 73};
        std::uint64_t key = 0;
        unsigned state = 0;
        for (int level = kMortonBitsPerAxis - 3; level >= 0; level -= 3) {
            const unsigned octants =
                spread[(ix >> level) & 7u] | spread[(iy >> level) & 7u] << 1 | spread[(iz >> level) & 7u] << 2;
            const std::uint16_t triple = triples_[state * 512 + octants];
            key = key << 9 | (triple & 511u);
            state = triple >> 9;
        }
        return key;
    }
    int states() const { return static_cast<int>(steps_.size() / 8); }

  private:
    std::vector<std::uint8_t> steps_;    // [state * 8 + octant]: the level's three bits | next state << 3
    std::vector<std::uint16_t> triples_; // [state * 512 + three octants, highest first]: nine bits | state << 9
};

// The key of integer cell coordinates (each < 2^21), from one table made on first use.
std::uint64_t hilbert_key(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz);

} // namespace grove
