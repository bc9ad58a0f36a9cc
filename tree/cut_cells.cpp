#include "tree/cut_cells.hpp"

#include "tree/hilbert.hpp"
#include "tree/node_moments.hpp"

namespace grove {

std::size_t enlarge_cut_cells(Octree& tree, std::uint64_t first, std::uint64_t end, double factor)
{
    if (tree.keys.empty() || end <= first) return 0;
    const std::uint64_t last = end - 1;
    // The cut cells are ancestors of the range's ends: the pre-order walk goes down into a cut
    // cell's children and over every other cell's subtree, a few dozen nodes of any tree.
    std::size_t count = 0;
    const std::int32_t nodes = tree.num_nodes();
    for (std::int32_t i = 0; i < nodes;) {
        const auto k = static_cast<std::size_t>(i);
        const ParticleRange r = tree.range[k];
        const bool cut =
            r.end > r.begin && cell_reaches_outside(hilbert_key_of_morton(tree.keys[static_cast<std::size_t>(r.begin)]),
                                                    cell_level(tree.cell_centre[k].w, tree.frame.side), first, last);
        if (!cut) {
            i = tree.next[k];
            continue;
        }
        tree.size[k] *= factor;
        ++count;
        ++i; // its first child, or after a leaf the next node
    }
    return count;
}

} // namespace grove
