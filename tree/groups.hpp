// Groups: the maximal cells of at most ncrit particles, contiguous in Morton order, each with the
// bounding box of its particles. A group walks the tree together (tree/walk.hpp).
#pragma once

#include <vector>

#include "tree/octree.hpp"
#include "tree/segments.hpp"

namespace grove {

// Counted per segment, scanned, then written with their boxes (with_boxes = false: ranges only,
// for a tree that a refit completes); a leaf holding more than ncrit particles is cut into
// consecutive chunks.
void make_groups(Octree& tree, int ncrit, std::vector<Segment>& segments, bool with_boxes = true);

// New boxes for the existing groups after the particles moved (a refit).
void refit_group_boxes(Octree& tree);

} // namespace grove
