// Multipole moments of every node, bottom-up: mass, centre of mass, traceless quadrupole and the
// offset delta = |centre of mass - cell centre| that the opening criterion (tree/mac.hpp) adds.
#pragma once

#include <vector>

#include "tree/octree.hpp"
#include "tree/segments.hpp"

namespace grove {

// Leaves sum their particles; internal nodes their children as point masses plus the children's
// own quadrupoles (parallel-axis theorem). Each subtree segment is done by one thread, the serial
// top afterwards.
void compute_moments(Octree& tree, const std::vector<Segment>& segments);

} // namespace grove
