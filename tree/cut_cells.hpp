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
#include "tree/hilbert.hpp"
#include "tree/morton.hpp"
#include "tree/node_moments.hpp"
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

// Calls on_cut(k) for each node k of `tree` whose cell reaches outside the Peano-Hilbert keys
// first .. end - 1, and returns how many. `keys` are the tree's particles' Morton keys in its order
// (tree.keys, or those a structure was built from), made in the frame the domains were cut in.
// The cut cells are ancestors of the range's ends: the pre-order walk goes down into a cut cell's
// children and over every other cell's subtree, a few dozen nodes of any tree.
template <class OnCut>
std::size_t for_each_cut_cell(const Octree& tree, const std::uint64_t* keys, std::uint64_t first, std::uint64_t end,
                              OnCut&& on_cut)
{
    if (keys == nullptr || end <= first) return 0;
    const std::uint64_t last = end - 1;
    std::size_t count = 0;
    const std::int32_t nodes = tree.num_nodes();
    for (std::int32_t i = 0; i < nodes;) {
        const auto k = static_cast<std::size_t>(i);
        const ParticleRange r = tree.range[k];
        const bool cut =
            r.end > r.begin && cell_reaches_outside(hilbert_key_of_morton(keys[static_cast<std::size_t>(r.begin)]),
                                                    cell_level(tree.cell_centre[k].w, tree.frame.side), first, last);
        if (!cut) {
            i = tree.next[k];
            continue;
        }
        on_cut(k);
        ++count;
        ++i; // its first child, or after a leaf the next node
    }
    return count;
}

// Multiplies the size (the opening criterion's l, which the LETs made from the tree carry too) of
// every node of a domain's tree whose cell reaches outside the domain's Peano-Hilbert keys
// first .. end - 1 by `factor`; returns how many. The tree was built in the frame the domains were
// cut in, with its keys. The range is the cut's, not the ends of the particles' own keys: between a
// cut and the next evaluation the particles drift, and those that crossed the cut would mark their
// own ancestors instead of the cut's. (The resident GPU tree marks the same cells when it stages a
// structure, and its refit enlarges them.)
inline std::size_t enlarge_cut_cells(Octree& tree, std::uint64_t first, std::uint64_t end,
                                     double factor = kCutCellSizeFactor)
{
    return for_each_cut_cell(tree, tree.keys.empty() ? nullptr : tree.keys.data(), first, end,
                             [&](std::size_t k) { tree.size[k] *= factor; });
}

} // namespace grove
