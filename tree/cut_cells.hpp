// The cells of a domain's tree that the domains' cut passes through. A domain holds a contiguous
// range of Peano-Hilbert keys, so the only cells of its tree that reach past its own particles'
// keys are the ancestors of its two ends: a dozen or so, but where the domains meet at a galaxy's
// dense centre they are pieces of the centre's coarse cells. A piece's centre of mass lies off
// the centre's mass, and a far particle that accepts the pieces' quadrupoles, where one process
// accepts the whole cell's (whose mass sits at its centre of mass), errs more: four domains in a
// moving frame gave the halo's median force error 7.5 % above one process's in the same frame
// (bench/results/several-gpus.md). Such a cell is opened as if it were kCutCellSizeFactor times its
// size: its whole children then serve the far field, and the four domains' medians came to 0.91 of
// one process's for 0.5 % more interactions (single evaluations in a moved frame).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/host_device.hpp"
#include "tree/morton.hpp"
#include "tree/octree.hpp"

namespace grove {

constexpr double kCutCellSizeFactor = 1.5;

// Whether the cell at `level` (0: the root) that holds the Peano-Hilbert key `key` holds keys
// outside lo..hi (both included).
HOST_DEVICE inline bool cell_reaches_outside(std::uint64_t key, int level, std::uint64_t lo, std::uint64_t hi)
{
    const int shift = 3 * (kMortonBitsPerAxis - level);
    const std::uint64_t first = (key >> shift) << shift;
    const std::uint64_t last = first + ((std::uint64_t{1} << shift) - 1);
    return first < lo || last > hi;
}

// Multiplies the size (the opening criterion's l, which the LETs made from the tree carry too) of
// every node of a domain's tree whose cell reaches outside the domain's Peano-Hilbert keys
// first .. end - 1 by `factor`; returns how many. The tree was built in the frame the domains were
// cut in, with its keys. The range is the cut's, not the ends of the particles' own keys: between a
// cut and the next evaluation the particles drift, and those that crossed the cut would mark their
// own ancestors instead of the cut's.
std::size_t enlarge_cut_cells(Octree& tree, std::uint64_t first, std::uint64_t end, double factor = kCutCellSizeFactor);

} // namespace grove
