// How the parallel build cuts the pre-order node array: shared by the build, the moments and the
// groups, which all work segment by segment. Internal to tree/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tree/tree_arrays.hpp"

namespace grove {

// One piece of the pre-order node array. The top of the tree (cells with more than
// `subtree_limit` particles) is split serially into single-node segments; every cell below it is
// the root of a subtree segment that one thread builds, finishes and cuts into groups. Since
// subtree_limit >= ncrit, no group spans two segments.
struct Segment {
    std::int32_t begin, end;     // particles
    int level;                   // of the segment's root cell
    bool top;                    // a single node of the serial top
    std::size_t end_segment;     // top nodes: the segment that follows the node's subtree
    std::int32_t first_node = 0; // position in the node arrays
    std::int32_t num_nodes = 0;
    std::int32_t first_group = 0;
    std::int32_t num_groups = 0;
};

// One node as the build stages it in a thread's buffer before the scan of the subtrees' sizes
// places it: `next` counted from its subtree's root, the cell's centre with its side in w.
struct StagedNode {
    Vec4<double> centre;
    ParticleRange range;
    std::int32_t next;
    bool leaf;
};

// What one thread of the build stages: its subtrees' nodes and their groups' particle ranges.
struct BuildStaging {
    std::vector<StagedNode> nodes;
    std::vector<ParticleRange> groups;
};

} // namespace grove
