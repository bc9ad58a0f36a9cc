// What the accuracy sweep (grove accuracy) needs of a tree engine beyond ForceEngine: evaluate one
// built tree under several opening criteria (theta or alpha values). TreeCpuEngine and TreeGpuEngine implement it;
// callers reach it from a registry-made engine with dynamic_cast.
#pragma once

#include "core/force_engine.hpp"
#include "tree/interaction_lists.hpp"
#include "tree/mac.hpp"
#include "tree/octree.hpp"

namespace grove {

class TreeSweep {
  public:
    virtual ~TreeSweep() = default;
    // Takes a built tree for the evaluations that follow (the GPU engine uploads it; the CPU
    // engine keeps a reference, so the tree must outlive them and sets its opening radii).
    // `type`: the types of the particles the tree was built from, in their order; read only where
    // the softening is per type.
    virtual void load(Octree& tree, TypesRef type) = 0;
    // The relative criterion reads the engine's acceleration estimate (set_acceleration_estimate,
    // else a first pass that it keeps); evaluate_loaded never replaces an estimate, so every
    // criterion of a sweep sees the same one.
    virtual void evaluate_loaded(const OpeningCriterion& criterion, Forces& out) = 0;
    // Interaction counts of the last evaluation of the loaded tree.
    virtual TreeStats loaded_statistics() const = 0;
};

} // namespace grove
