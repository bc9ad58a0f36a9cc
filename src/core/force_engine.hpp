// The one interface every force engine implements: positions and masses in, accelerations and
// potentials out. Integrators and commands see only this; what only tree engines offer beyond it
// is core/tree_engine.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "core/array_views.hpp"
#include "core/particle_store.hpp"

namespace grove {

struct GravityParams {
    double G = 1.0;   // gravitational constant in the snapshot's units
    double eps = 0.0; // Plummer softening length (0 allowed)
    // Softening lengths by GADGET type (core/softening.hpp); a negative entry means eps. While
    // every type's length is eps, the engines take their one-softening path, unchanged.
    std::array<double, kNumParticleTypes> eps_type = {-1, -1, -1, -1, -1, -1};

    double eps_of(int type) const
    {
        const double e = eps_type[static_cast<std::size_t>(type)];
        return e >= 0 ? e : eps;
    }
    bool per_type() const
    {
        for (int t = 0; t < kNumParticleTypes; ++t)
            if (eps_of(t) != eps) return true;
        return false;
    }
};

struct Forces {
    Eigen::Matrix3Xd acc; // 3 x N accelerations
    Eigen::VectorXd pot;  // N potentials (G included; a particle's own term excluded)
};

// Named wall-clock phases of the last evaluation, in seconds, in the order they ran.
using PhaseTimes = std::vector<std::pair<std::string, double>>;

// What a force computation summed: target-cell pairs (monopole and quadrupole) and
// target-particle pairs.
struct ListWork {
    double cell_pairs = 0, particle_pairs = 0;
    // The lists' entries (cells, leaves) and the groups that walked: with the pairs they say how
    // many targets shared each entry, which sets how full the kernels' lanes run.
    double cell_entries = 0, leaf_entries = 0, groups = 0;
    // A cell's pair costs the list kernels about this many particle pairs' time
    // (bench/results/several-gpus.md).
    static constexpr double kCellPairCost = 2.3;
    // In particle pairs.
    double total() const { return kCellPairCost * cell_pairs + particle_pairs; }
};

// The phase of an evaluation that was lost and made again (a GPU walk whose lists outgrew the room
// it was given), its name followed by why: an engine that reports it has also reported the phases
// of the evaluation it kept.
inline constexpr char kLostEvaluationPhase[] = "evaluated again";

// Adds `seconds` to the phase `name` of `sums` (appended where it has none); returns its index.
inline std::size_t add_phase(PhaseTimes& sums, const std::string& name, double seconds)
{
    for (std::size_t k = 0; k < sums.size(); ++k)
        if (sums[k].first == name) {
            sums[k].second += seconds;
            return k;
        }
    sums.emplace_back(name, seconds);
    return sums.size() - 1;
}

class ForceEngine {
  public:
    explicit ForceEngine(std::string name) : name_(std::move(name)) {}
    virtual ~ForceEngine() = default;
    ForceEngine(const ForceEngine&) = delete;
    ForceEngine& operator=(const ForceEngine&) = delete;
    const std::string& name() const { return name_; }

    // Every particle feels every other; `out` is resized to N, in the order of pos. `type` gives the
    // particles' types, which an engine reads only where the softening is per type (and then
    // needs: core/softening.hpp throws for a missing one).
    virtual void compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out) = 0;
    void compute(PositionsRef pos, MassesRef mass, Forces& out) { compute(pos, mass, TypesRef{}, out); }
    // The forces of a store's particles, computed where the store keeps them. An engine with an
    // order of its own (a tree's Morton order) may hand them back in that order where the store
    // allows it, and then reads the store's accelerations (the last step's) and last drift.
    // By default: compute() on the host's arrays.
    virtual void compute(ParticleStore& store);
    // Forces on the particles `targets` (indices into pos) from all particles; out has
    // targets.size() columns. Direct engines implement it (the accuracy reference for a sample);
    // the default throws std::runtime_error naming the engine.
    virtual void compute_subset(PositionsRef pos, MassesRef mass, TypesRef type,
                                const std::vector<std::int32_t>& targets, Forces& out);
    void compute_subset(PositionsRef pos, MassesRef mass, const std::vector<std::int32_t>& targets, Forces& out)
    {
        compute_subset(pos, mass, TypesRef{}, targets, out);
    }
    // Whether compute_subset works (it costs less than compute for few targets): the direct
    // engines and tree-cpu.
    virtual bool computes_subsets() const { return false; }
    // The accelerations of each particle's last forces (3 x N, G included, in the order of the
    // positions the next compute() or compute_subset() gets), which the tree's relative criterion
    // reads; other engines ignore them. compute(store) reads the store's instead. Given from the
    // caller's arrays, so that a restarted run makes the same decisions as an uninterrupted one.
    virtual void set_acceleration_estimate(const Eigen::Matrix3Xd& /*acc*/) {}
    virtual PhaseTimes last_phase_times() const { return {}; }
    // The pairs the last force computation summed, where the engine counts them (the trees);
    // nothing where it does not. Counted, not timed, so that a run that divides its work by them
    // does the same again.
    virtual ListWork last_work() const { return {}; }

  private:
    std::string name_;
    Forces scratch_; // compute(store)'s forces before the store takes them
};

inline void ForceEngine::compute(ParticleStore& store)
{
    ParticleSet& p = store.host();
    compute(p.pos, p.mass, store.types(), scratch_);
    store.take_forces(scratch_);
}

inline void ForceEngine::compute_subset(PositionsRef, MassesRef, TypesRef, const std::vector<std::int32_t>&, Forces&)
{
    throw std::runtime_error("engine " + name() + " computes forces only for all particles");
}

} // namespace grove
