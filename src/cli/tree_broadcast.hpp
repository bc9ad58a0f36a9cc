// One rank's host tree copied to every rank of a job, the alternative to each rank building the
// same tree from the same particles (parallel/distributed_engine.hpp builds on each rank); grove bench
// scaling times both.
#pragma once

#include "parallel/communicator.hpp"
#include "tree/octree.hpp"

namespace grove {

// After the call every rank's `tree` equals root's: its arrays (not the per-criterion ones, which
// set_opening_criterion computes), keys, cell centres and bounding cube.
void broadcast_tree(Octree& tree, const Communicator& comm, int root = 0);

} // namespace grove
