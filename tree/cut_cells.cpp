#include "tree/cut_cells.hpp"

#include <algorithm>
#include <limits>

#include "tree/hilbert.hpp"
#include "tree/node_moments.hpp"

namespace grove {

std::size_t enlarge_cut_cells(Octree& tree, double factor)
{
    const auto n = static_cast<std::int64_t>(tree.keys.size());
    if (n == 0) return 0;
    std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
    for (std::int64_t i = 0; i < n; ++i) {
        const std::uint64_t key = hilbert_key_of_morton(tree.keys[static_cast<std::size_t>(i)]);
        lo = std::min(lo, key);
        hi = std::max(hi, key);
    }
    std::size_t count = 0;
    const std::int32_t nodes = tree.num_nodes();
    for (std::int32_t i = 0; i < nodes; ++i) {
        const auto k = static_cast<std::size_t>(i);
        const ParticleRange r = tree.range[k];
        if (r.end <= r.begin) continue;
        const int level = cell_level(tree.cell_centre[k].w, tree.frame.side);
        const std::uint64_t key = hilbert_key_of_morton(tree.keys[static_cast<std::size_t>(r.begin)]);
        if (!cell_reaches_outside(key, level, lo, hi)) continue;
        tree.size[k] *= factor;
        ++count;
    }
    return count;
}

} // namespace grove
