// The nodes of a pre-order tree grouped by depth, deepest level first. Finishing the nodes one
// level after another, each level in parallel (the resident GPU pipeline's moments), does every
// child before its parent.
#pragma once

#include <cstdint>
#include <vector>

namespace grove {

struct NodeLevels {
    std::vector<std::int32_t> nodes; // every node once, the deepest level first
    std::vector<std::int32_t> begin; // level k (k = 0 the deepest) is nodes[begin[k], begin[k + 1])
    int count() const { return begin.empty() ? 0 : static_cast<int>(begin.size()) - 1; }
};

// From the skip indices of m nodes in pre-order (node i's subtree is [i, next[i])).
void node_levels(const std::int32_t* next, std::int32_t m, NodeLevels& out);

} // namespace grove
