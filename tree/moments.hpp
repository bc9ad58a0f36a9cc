// Multipole moments of every node, bottom-up: mass, centre of mass, traceless quadrupole and the
// offset delta = |centre of mass - cell centre| that the opening criterion (tree/mac.hpp) adds.
#pragma once

#include <vector>

#include "tree/node_moments.hpp"
#include "tree/octree.hpp"
#include "tree/segments.hpp"

namespace grove {

// Leaves sum their particles; internal nodes their children as point masses plus the children's
// own quadrupoles (parallel-axis theorem). Each subtree segment is done by one thread, the serial
// top afterwards. Every node's size and centre become those of its particles' bounding box
// (node_moments.hpp, finish_node), for a build and a refit alike.
void compute_moments(Octree& tree, const std::vector<Segment>& segments);

// What finish_node (tree/node_moments.hpp) reads and writes of a host tree whose moment arrays
// are sized; boxes: scratch, one per node.
MomentArrays moment_arrays(Octree& tree, NodeBox* boxes);

} // namespace grove
