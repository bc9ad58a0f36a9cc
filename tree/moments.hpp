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
// top afterwards. With grow_cells (a refit of moved particles, tree/refit.hpp) each cell is first
// re-centred on the bounding box of its particles and grown to hold them (moments.cpp,
// refit_cell), so that the opening criterion stays conservative.
void compute_moments(Octree& tree, const std::vector<Segment>& segments, bool grow_cells = false);

// What finish_node (tree/node_moments.hpp) reads and writes of a host tree whose moment arrays
// are sized; boxes: a refit's scratch (one per node), or null.
MomentArrays moment_arrays(Octree& tree, NodeBox* boxes);

} // namespace grove
