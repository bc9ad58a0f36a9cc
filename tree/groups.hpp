// Groups: the maximal cells of at most ncrit particles, contiguous in Morton order, each with the
// bounding box of its particles. A group walks the tree together (tree/walk.hpp).
#pragma once

#include "tree/octree.hpp"

namespace grove {

// The groups' ranges are found by the build, with the nodes (tree/build.cpp); their boxes by this,
// after the build and again whenever the particles have moved (a refit).
void refit_group_boxes(Octree& tree);

} // namespace grove
