#include "tree/node_levels.hpp"

#include <algorithm>
#include <stdexcept>

namespace grove {

void node_levels(const std::int32_t* next, const std::uint8_t* is_leaf, std::int32_t m, NodeLevels& out)
{
    // Depth by one pass in pre-order: the open ancestors of node i are those whose subtree has not
    // ended before i. A serial pass over the nodes (N/20 of them), cheap beside the build.
    std::vector<std::int32_t> depth(static_cast<std::size_t>(m));
    std::vector<std::int32_t> open;
    int deepest = -1; // of the internal nodes
    for (std::int32_t i = 0; i < m; ++i) {
        while (!open.empty() && next[open.back()] <= i) open.pop_back();
        if (next[i] <= i || next[i] > m || (!open.empty() && next[i] > next[open.back()]) ||
            (is_leaf[i] != 0) != (next[i] == i + 1))
            throw std::invalid_argument("tree: skip indices that do not nest");
        depth[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(open.size());
        if (!is_leaf[i]) deepest = std::max(deepest, depth[static_cast<std::size_t>(i)]);
        open.push_back(i);
    }
    // Level 0: every leaf; level 1 + k: the internal nodes k levels above the deepest internal ones.
    const auto level = [&](std::int32_t i) {
        return is_leaf[i] ? 0 : 1 + deepest - depth[static_cast<std::size_t>(i)];
    };
    const int levels = m > 0 ? deepest + 2 : 0; // a lone leaf: one level
    out.begin.assign(static_cast<std::size_t>(levels) + 1, 0);
    for (std::int32_t i = 0; i < m; ++i) ++out.begin[static_cast<std::size_t>(level(i)) + 1];
    for (int k = 0; k < levels; ++k)
        out.begin[static_cast<std::size_t>(k) + 1] += out.begin[static_cast<std::size_t>(k)];
    out.nodes.resize(static_cast<std::size_t>(m));
    std::vector<std::int32_t> fill(out.begin);
    for (std::int32_t i = 0; i < m; ++i)
        out.nodes[static_cast<std::size_t>(fill[static_cast<std::size_t>(level(i))]++)] = i;
}

} // namespace grove
