// The tree over the ranks' domains (docs/parallel-design.md): each rank holds only its own
// particles. It builds their tree, walks it once for every other rank's bounding box and sends
// that rank the LET it needs (tree/locally_essential.hpp), appends the LETs it receives to its
// own tree and lets a tree engine (tree-cpu, or tree-gpu on its host pipeline) evaluate its own
// groups on that forest. compute() takes this rank's particles only and gives their forces from
// everyone's. Correct for any split of the particles; fast when each rank's particles are a
// compact Peano-Hilbert domain (parallel/domains.hpp), which is what keeps the LETs thin.
// Where the tree engine can (tree-gpu under the geometric criterion with one softening), a run's
// steps live on each rank's GPU instead (device_particles()): the particles stay there between
// steps, and the boxes, the LETs' walks and their append are made there too; only the boxes and
// the LETs cross the bus and MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/engine_registry.hpp"
#include "core/force_engine.hpp"
#include "core/particles.hpp"
#include "core/rank_exchange.hpp"
#include "core/tree_engine.hpp"
#include "parallel/communicator.hpp"
#include "parallel/domains.hpp"
#include "tree/acceleration_estimate.hpp"
#include "tree/build.hpp"
#include "tree/key_frame.hpp"
#include "tree/locally_essential.hpp"
#include "tree/octree.hpp"
#include "tree/tree_sweep.hpp"

namespace grove {

class CommunicatorExchange;

class DomainTreeEngine final : public ForceEngine, public TreeEngine {
  public:
    // `engine`: a tree engine made with `tree` and `gravity` (the relative criterion on tree-cpu
    // only; throws std::invalid_argument otherwise, and for an engine that is not one). Under
    // softening by type every rank's LETs carry their cells' softening and their particles' types.
    DomainTreeEngine(std::unique_ptr<ForceEngine> engine, const TreeParams& tree, const GravityParams& gravity,
                     const Communicator& comm);
    ~DomainTreeEngine() override;
    using ForceEngine::compute;
    // Every rank calls it with its own particles; `type` is read where the softening is per type.
    // Under the relative criterion the |a| of these particles come from set_acceleration_estimate
    // or, where none covers them, from a geometric evaluation over the domains at kFirstPassTheta
    // first.
    void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) override;
    // The same under another criterion of the same kind's family (a sweep of theta or alpha values;
    // the relative one on tree-cpu only, as for the engine's own).
    void compute_with(const OpeningCriterion& criterion, PositionsRef pos, MassesRef mass, TypesRef type, Forces& out);
    // The store's accelerations (the last step's, moved with the particles between domains) are
    // the relative criterion's estimate. Where the store may reorder, its particles then follow
    // this rank's tree (ParticleStore::take_forces_in_order).
    // On a store placed on the device (device_particles()) and loaded there, the tree engine's
    // step on its device, which exchanges the LETs itself.
    void compute(ParticleStore& store) override;
    // tree-gpu's store on its device, exchanging LETs with the other ranks at each computation;
    // null for other engines and settings (their steps run on the host's arrays, as before).
    DeviceParticles* device_particles() override;
    // The domains are cut by their particles (parallel/domains.hpp), not by shares of one tree.
    void set_share(int index, int count) override;
    std::vector<double> last_particle_costs() const override { return {}; }
    void set_share_costs(const std::vector<double>& /*costs*/) override {}
    DeviceMemory device_memory() const override;
    void set_acceleration_estimate(const Eigen::Matrix3Xd& acc) override { estimate_.set(acc, gravity_.G); }
    // build, LETs (their walks), exchange, append, then the engine's own phases.
    // On the device, the tree engine's step's phases (LETs and all).
    PhaseTimes last_phase_times() const override { return device_step_ ? engine_->last_phase_times() : times_; }
    // The engine's count of its evaluation (its lists hold the received LETs too).
    ListWork last_work() const override { return engine_->last_work(); }
    const LetTraffic& last_traffic() const { return traffic_; }
    // Interaction counts of this rank's groups in the last compute(): means over its groups and
    // over its own particles (the LETs' particles feel nothing).
    TreeStats last_statistics() const;
    std::size_t last_particle_count() const { return last_n_; } // this rank's, in the last compute()
    // This rank's particles of the last compute() in the order of its tree: entry k is where the
    // particle now k-th lay in the caller's order. A caller that holds its particles so (as a run
    // does, through its ParticleStore) hands the next build nearly sorted keys.
    std::vector<std::size_t> last_tree_order() const;
    OpeningCriterion criterion() const { return tree_.opening(); }
    // The frame the caller cut the domains in (the same on every rank), which each domain's tree
    // then takes, so that its cells are the cut's; none: the cube of the particles where they are
    // (domains_cube), the frame of a cut in the cube itself.
    void set_domains_frame(const std::optional<KeyFrame>& frame) { frame_ = frame; }
    // This rank's keys in the last cut (first .. end - 1), whose cells the trees open as larger
    // (tree/cut_cells.hpp); none known: no cell is.
    void set_domain_keys(const DomainKeys& keys) { domain_keys_ = keys; }
    // Seconds per particle of this rank's last compute(), the exchange aside: what its particles
    // cost, from which the next domains are cut (parallel/domains.hpp).
    double last_cost_per_particle() const { return cost_per_particle_; }

  private:
    // The order of the forces given back: the caller's, or that of this rank's tree (forest_.order).
    enum class Order { caller, tree };
    // Throws std::invalid_argument for a criterion this engine's tree engine cannot distribute.
    void check_criterion(const OpeningCriterion& criterion) const;
    void compute_with(const OpeningCriterion& criterion, PositionsRef pos, MassesRef mass, TypesRef type, Forces& out,
                      Order order);
    // One evaluation under `criterion`: build, boxes (with their groups' scales under the
    // relative criterion), LETs, exchange, the forest's evaluation.
    void compute_under(const OpeningCriterion& criterion, PositionsRef pos, MassesRef mass, TypesRef type, Forces& out,
                       Order order);
    // Softening by type: the own tree's moments of h and its particles' types in its order, for
    // the LETs sent; the forest's types (the own particles', then the LETs'), for its evaluation.
    void prepare_let_softening(TypesRef type);

    std::unique_ptr<ForceEngine> engine_;
    TreeSweep* sweep_;
    std::unique_ptr<CommunicatorExchange> ranks_; // the communicator's, for a device that exchanges the LETs
    DeviceParticles* device_ = nullptr;
    bool device_step_ = false; // the last computation was a step on the device
    TreeParams tree_;
    GravityParams gravity_;
    AccelerationEstimate estimate_; // |a| / G of this rank's particles, in their order
    Forces store_forces_;
    std::vector<std::uint32_t> handed_order_; // the order the store's particles follow (its scratch after)
    const Communicator& comm_;
    Octree forest_;                          // this rank's tree, the received LETs after it
    SofteningMoments<double> own_softening_; // softening by type: the own tree's
    std::vector<std::uint8_t> sorted_types_, forest_types_;
    std::vector<std::vector<char>> send_, received_; // the LETs by rank, kept with their capacity
    LetMaker let_maker_;
    Forces forest_forces_;
    PhaseTimes times_;
    LetTraffic traffic_;
    double cost_per_particle_ = 0;
    std::size_t last_n_ = 0;
    std::optional<KeyFrame> frame_;
    std::optional<DomainKeys> domain_keys_;
};

// The engine for a configuration: a tree engine made by `make` (the registry's factory) with its
// tree parameters and gravity.
std::unique_ptr<DomainTreeEngine> make_domain_tree_engine(std::unique_ptr<ForceEngine> engine,
                                                          const EngineConfig& config, const Communicator& comm);

// Forces on every rank's `part` of a set (its part of a file): the parts move to their domains,
// `mine` becomes this rank's domain (as migrate orders it) and `out` its forces.
void compute_own_domain(DomainTreeEngine& engine, const ParticleSet& part, ParticleSet& mine, Forces& out,
                        const Communicator& comm);

// Forces on a set that every rank holds whole (grove accuracy under mpirun): each rank takes an
// equal slab, the slabs move to their domains, the engine computes, and every rank gets every
// force back in the set's order.
void compute_on_domains(DomainTreeEngine& engine, const ParticleSet& p, Forces& out, const Communicator& comm);
// The same under `criterion` (DomainTreeEngine::compute_with).
void compute_on_domains(DomainTreeEngine& engine, const OpeningCriterion& criterion, const ParticleSet& p, Forces& out,
                        const Communicator& comm);

} // namespace grove
