// The nodes of a pre-order tree in levels that can be finished one after another, each level in
// parallel (the resident GPU pipeline's moments): first every leaf (they depend on nothing, and
// one level keeps the device busy), then the internal nodes by depth, deepest first. Every child
// comes on a level before its parent's.
#pragma once

#include <cstdint>
#include <vector>

namespace grove {

struct NodeLevels {
    std::vector<std::int32_t> nodes; // every node once, level by level
    std::vector<std::int32_t> begin; // level k is nodes[begin[k], begin[k + 1])
    int count() const { return begin.empty() ? 0 : static_cast<int>(begin.size()) - 1; }
};

// From the skip indices and leaf flags of m nodes in pre-order (node i's subtree is [i, next[i])).
// Throws std::invalid_argument for skip indices that do not nest or disagree with the flags.
void node_levels(const std::int32_t* next, const std::uint8_t* is_leaf, std::int32_t m, NodeLevels& out);

} // namespace grove
