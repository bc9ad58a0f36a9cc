// The treecode on the CPU in double precision: the host build, the shared walk in two passes with
// an exclusive scan between them, and an OpenMP evaluation of the node lists (particle-quadrupole)
// and leaf lists (particle-particle). The reference for the GPU tree engine, and a usable engine
// on machines without a GPU.
#pragma once

#include <vector>

#include "src/force_engine.hpp"
#include "tree/build.hpp"

namespace grove {

// Interaction lists of every group, concatenated: group g's nodes are
// node_list[node_offset[g] .. node_offset[g+1]) and likewise for leaves.
struct InteractionLists {
    std::vector<std::int64_t> node_offset; // [num_groups + 1]
    std::vector<std::int64_t> leaf_offset; // [num_groups + 1]
    std::vector<std::int32_t> node_list;
    std::vector<std::int32_t> leaf_list;
};

// Count pass, exclusive scan, write pass over all groups of `tree` (its r_open2 must be set).
InteractionLists build_interaction_lists(const Octree& tree);

// Mean interaction counts of the last evaluation.
struct TreeStats {
    double nodes_per_group = 0, leaves_per_group = 0;
    double node_interactions_per_particle = 0; // particle-quadrupole interactions
    double leaf_interactions_per_particle = 0; // particle-particle interactions
    std::int64_t num_groups = 0, num_nodes = 0;
};

TreeStats list_statistics(const Octree& tree, const InteractionLists& lists);

class TreeCpuEngine final : public ForceEngine {
  public:
    TreeCpuEngine(TreeParams tree, GravityParams gravity);
    std::string name() const override { return "tree-cpu"; }
    void compute(const Eigen::Matrix3Xd& pos, const Eigen::VectorXd& mass, Forces& out) override;
    PhaseTimes last_phase_times() const override { return times_; }
    const TreeStats& last_stats() const { return stats_; }

    // Evaluates forces for an already built tree (for theta sweeps that re-walk one tree).
    void evaluate(Octree& tree, double theta, Forces& out);

  private:
    TreeParams tree_params_;
    GravityParams gravity_;
    PhaseTimes times_;
    TreeStats stats_;
    Octree tree_; // kept so that repeated builds reuse its storage
};

} // namespace grove
