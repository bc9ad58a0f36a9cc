// The GPU treecode (Octgrav lineage, DESIGN.md section 1): the host builds the octree, the flat
// tree goes to the GPU once per build in float (tree/float_tree.hpp), and per opening criterion
// (tree/mac.hpp) the GPU computes the opening radii, walks every group with the shared walk.hpp in two passes (count,
// CUB exclusive scan, write) and evaluates the node lists (particle-quadrupole) and leaf lists
// (particle-particle) a warp per group with sources staged through shared memory
// (tree/lane_layout.hpp says how the lanes are arranged). Results come back in caller order.
// A particle's own pair is excluded by index, so potentials carry no self term.
// Host-only header: includes no CUDA.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/force_engine.hpp"
#include "core/tree_engine.hpp"
#include "tree/build.hpp"
#include "tree/interaction_lists.hpp"
#include "tree/tree_sweep.hpp"

namespace grove {

struct TreeGpuStats {
    TreeStats lists;         // mean list lengths and interactions per particle
    double busy_nodes = 0;   // useful fraction of lane-slots in the node evaluation
    double busy_leaves = 0;  // ... in the leaf evaluation
    double busy = 0;         // both, weighted by the work
    double interactions = 0; // particle-node plus particle-particle pairs in total
};

class TreeGpuEngine final : public ForceEngine, public TreeEngine, public TreeSweep {
  public:
    TreeGpuEngine(TreeParams tree, GravityParams gravity);
    ~TreeGpuEngine() override;

    // Host build, upload, and evaluate at the engine's theta.
    using ForceEngine::compute;
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override;
    // On a store on this engine's device (device_particles()): the resident step's forces, left
    // there for the store's kick. Otherwise compute() on the host's arrays, with the forces in the
    // tree's order where the store allows it (the particles then move there while the GPU
    // evaluates) and, with look-ahead, the next tree built from the store's predicted drift.
    void compute(ParticleStore& store) override;
    PhaseTimes last_phase_times() const override;
    ListWork last_work() const override;

    void set_acceleration_estimate(const Eigen::Matrix3Xd& acc) override;
    // Walks and evaluates only the groups of share `index` of `count` (equal particle counts, whole
    // groups); the other particles get zero. Statistics and download_lists then cover the share.
    void set_share(int index, int count) override;
    std::vector<double> last_particle_costs() const override;
    void set_share_costs(const std::vector<double>& costs) override;
    // Whole steps on the device need the look-ahead (the host builds each next structure) and the
    // whole tree (no shares).
    DeviceParticles* device_particles() override;
    // Under the geometric criterion with one softening: the LETs made, exchanged and appended on
    // the device (gpu/device_lets.cuh).
    DeviceParticles* device_particles_on_domains(RankExchange& ranks) override;

    // For sweeps: upload one tree, then evaluate it under several criteria. The relative
    // criterion without an estimate for this N first runs a geometric pass and keeps its result.
    void upload(const Octree& tree);
    void evaluate(const OpeningCriterion& criterion, Forces& out);

    void load(Octree& tree, TypesRef type) override;
    void evaluate_loaded(const OpeningCriterion& criterion, Forces& out) override;
    TreeStats loaded_statistics() const override;

    // The last evaluation's interaction lists, copied back (tests and reports; not timed).
    InteractionLists download_lists() const;
    // The last evaluation's lists evaluated again (tests): whole (segments 1), or each group's
    // lists cut into `segments` stretches whose sums are added in a fixed order, as a block tick's
    // few pieces are evaluated (gpu/evaluate.cuh: ListSplit). Per particle in the tree's order:
    // ax, ay, az, potential, without G. Needs the lists in one batch and, in stretches, groups of
    // at most 32 particles.
    std::vector<float> sum_last_lists(int segments);
    // Walks of the last evaluation: 1 (one pass, into the room the last walk under the same
    // criterion measured), 2 (count, then write), 3 (one pass that overflowed, then both).
    int last_walk_passes() const;
    // Batches of groups the last evaluation walked and evaluated in (tree/list_batches.hpp): 1
    // when the lists of all groups fit the list budget at once.
    int last_list_batches() const;
    DeviceMemory device_memory() const override;
    // Statistics of the last evaluation of `tree` (the tree last uploaded).
    TreeGpuStats statistics(const Octree& tree) const;

    struct Impl; // gpu/tree_engine_impl.cuh

  private:
    void compute_on_host(PositionsRef pos, MassesRef mass, Forces& out, ParticleStore* early);

    std::unique_ptr<Impl> impl_;
};

} // namespace grove
