#include "tree/cut_cells.hpp"

#include "tree/hilbert.hpp"
#include "tree/node_moments.hpp"

namespace grove {

std::size_t enlarge_cut_cells(Octree& tree, std::uint64_t first, std::uint64_t end, double factor)
{
    if (tree.keys.empty() || end <= first) return 0;
    const std::uint64_t last = end - 1;
    std::size_t count = 0;
    const std::int32_t nodes = tree.num_nodes();
    for (std::int32_t i = 0; i < nodes; ++i) {
        const auto k = static_cast<std::size_t>(i);
        const ParticleRange r = tree.range[k];
        if (r.end <= r.begin) continue;
        const int level = cell_level(tree.cell_centre[k].w, tree.frame.side);
        const std::uint64_t key = hilbert_key_of_morton(tree.keys[static_cast<std::size_t>(r.begin)]);
        if (!cell_reaches_outside(key, level, first, last)) continue;
        tree.size[k] *= factor;
        ++count;
    }
    return count;
}

} // namespace grove
