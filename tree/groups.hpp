// Groups: the maximal cells of at most ncrit particles, contiguous in Morton order, each with the
// bounding box of its particles. A group walks the tree together (tree/walk.hpp).
#pragma once

#include "tree/octree.hpp"

namespace grove {

// The groups' ranges are found by the build, with the nodes (tree/build.cpp); their boxes by this,
// after the build and again whenever the particles have moved (a refit).
void refit_group_boxes(Octree& tree);

// The bounding box of the tree's particles in `range`, padded by a few ulps of the coordinates
// (a group's box; also a domain's boxes, tree/locally_essential.hpp). Its range is `range`.
Group<double> particles_box(const Octree& tree, ParticleRange range);
// The same box from its particles' smallest and largest coordinates (found elsewhere: a GPU).
Group<double> box_of_bounds(const double lo[3], const double hi[3], ParticleRange range);

} // namespace grove
