// 63-bit Peano-Hilbert keys of the same 21-bit cell coordinates as the Morton keys (tree/morton.hpp):
// the curve visits every octree cell as one contiguous range of keys, as the Morton curve does, and
// consecutive keys are cells that share a face, so that a range of keys is a more compact region
// (fewer cells on its surface) than a Morton range of the same size. Skilling's algorithm
// (J. Skilling, "Programming the Hilbert curve", AIP Conf. Proc. 707, 381, 2004): the coordinates
// are turned into the "transposed" index in place, whose bits interleaved give the key.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "tree/morton.hpp"

namespace grove {

// The key of integer cell coordinates (each < 2^21).
HOST_DEVICE inline std::uint64_t hilbert_key(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz)
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

} // namespace grove
