// The treecode on the CPU in double precision: the host build, the shared walk in two passes with
// an exclusive scan between them, and an OpenMP evaluation of the node lists (particle-quadrupole)
// and leaf lists (particle-particle), with one softening or softening by type. The reference for the GPU tree engine,
// and a usable engine on machines without a GPU.
#pragma once

#include <vector>

#include "core/force_engine.hpp"
#include "core/tree_engine.hpp"
#include "tree/acceleration_estimate.hpp"
#include "tree/build.hpp"
#include "tree/interaction_lists.hpp"
#include "tree/refit.hpp"
#include "tree/softening_moments.hpp"
#include "tree/tree_sweep.hpp"

namespace grove {

class TreeCpuEngine final : public ForceEngine, public TreeEngine, public TreeSweep {
  public:
    TreeCpuEngine(TreeParams tree, GravityParams gravity);
    using ForceEngine::compute;
    using ForceEngine::compute_subset;
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override;
    // Forces on the particles `targets` only: the whole tree, walked by the groups that hold one
    // of them and summed for them alone (the block time steps' due particles). The relative
    // criterion needs the last accelerations (set_acceleration_estimate).
    void compute_subset(PositionsRef pos, MassesRef mass, TypesRef type, const std::vector<std::int32_t>& targets,
                        Forces& out) override;
    bool computes_subsets() const override { return true; }
    // The forces in the tree's Morton order where the store allows it (a fresh build's; a refit
    // keeps the order handed over before); with look-ahead, the next tree built from the store's
    // prediction of the next drift.
    void compute(ParticleStore& store) override;
    PhaseTimes last_phase_times() const override { return times_; }
    const TreeStats& last_stats() const { return stats_; }
    ListWork last_work() const override { return work_; }
    // Batches the last evaluation walked and evaluated in (tree/list_batches.hpp; 1 when every
    // group's lists fit TreeParams::list_memory at once).
    int last_list_batches() const { return last_batches_; }

    void set_acceleration_estimate(const Eigen::Matrix3Xd& acc) override { estimate_.set(acc, gravity_.G); }
    // Evaluates only the groups of share `index` of `count` (equal particle counts, whole groups).
    void set_share(int index, int count) override;
    std::vector<double> last_particle_costs() const override { return last_costs_; }
    void set_share_costs(const std::vector<double>& costs) override { share_costs_ = costs; }

    // Evaluates forces for an already built tree under `criterion` (its per-criterion arrays are
    // set here). The relative criterion without an estimate for this N first runs a geometric
    // pass and keeps its accelerations as the estimate.
    void evaluate(Octree& tree, const OpeningCriterion& criterion, Forces& out);

    void load(Octree& tree, TypesRef type) override;
    void evaluate_loaded(const OpeningCriterion& criterion, Forces& out) override;
    TreeStats loaded_statistics() const override { return stats_; }

  private:
    // compute()'s evaluation of the tree just built or refitted, with its phase times.
    void evaluate_with_lookahead(PositionsRef pos, MassesRef mass, const BuildTimes& build, bool tree_order,
                                 Forces& out);
    void evaluate_into(Octree& tree, const OpeningCriterion& criterion, Forces& out, bool tree_order);
    // The tree's opening radii (and view) for the criterion, with the softening moments by type.
    OctreeView<double> opened_view(Octree& tree, const OpeningCriterion& criterion);
    // List entries a batch may hold: TreeParams::list_memory, or a quarter of what this process may use.
    std::int64_t list_budget_entries(std::int64_t total_entries) const;

    TreeParams tree_params_;
    GravityParams gravity_;
    PhaseTimes times_;
    TreeStats stats_;
    ListWork work_;
    Octree tree_; // kept so that repeated builds reuse its storage
    TreeUpdater updater_;
    Octree* loaded_ = nullptr;
    AccelerationEstimate estimate_;
    int share_index_ = 0, share_count_ = 1;
    int last_batches_ = 0;
    std::vector<double> share_costs_, last_costs_; // set_share_costs; this share's, last evaluation
    Forces first_pass_forces_;                     // the relative criterion's first pass
    Forces forces_;                                // compute(store)'s, before the store takes them
    std::vector<double> half_eps2_;                // softening by type: h per particle (compute's order)
    SofteningMoments<double> softening_;           // and of the evaluated tree
};

} // namespace grove
