#include "parallel/domain_tree.hpp"

#include <stdexcept>
#include <vector>

#include "core/wall_clock.hpp"
#include "tree/locally_essential.hpp"

namespace grove {

DomainTreeEngine::DomainTreeEngine(std::unique_ptr<ForceEngine> engine, const TreeParams& tree,
                                   const GravityParams& gravity, const Communicator& comm)
    : ForceEngine(engine->name() + " on " + std::to_string(comm.size()) + " domains"), engine_(std::move(engine)),
      sweep_(dynamic_cast<TreeSweep*>(engine_.get())), tree_(tree), comm_(comm)
{
    if (!sweep_) throw std::invalid_argument("domains: " + engine_->name() + " is not a tree engine");
    if (tree.mac != MacKind::geometric)
        throw std::invalid_argument("domains: the LETs are cut with the geometric criterion (--mac geometric, "
                                    "--theta); the relative one is not distributed yet");
    if (gravity.per_type())
        throw std::invalid_argument("domains: one softening length for all particles (--eps); softening by type "
                                    "(--eps-type) is not distributed yet");
    if (!(tree.theta > 0)) throw std::invalid_argument("domains: theta must be > 0");
}

void DomainTreeEngine::compute(PositionsRef pos, MassesRef mass, TypesRef, Forces& out)
{
    const auto start = WallClock::now();
    BuildTimes build;
    build_octree_into(forest_, pos, mass, tree_.build, &build);
    const double build_seconds = seconds_since(start);
    const auto n = static_cast<std::size_t>(pos.cols());
    const auto ranks = static_cast<std::size_t>(comm_.size()), me = static_cast<std::size_t>(comm_.rank());

    // Every domain's boxes (six values each), then each other domain's LET.
    auto phase = WallClock::now();
    const std::vector<Group<double>> mine = domain_boxes(forest_);
    std::vector<double> flat;
    for (const Group<double>& b : mine)
        flat.insert(flat.end(),
                    {b.centre.x, b.centre.y, b.centre.z, b.half_extent.x, b.half_extent.y, b.half_extent.z});
    const double my_count = static_cast<double>(mine.size());
    std::vector<double> counts(ranks);
    comm_.all_gather(&my_count, 1, std::vector<std::size_t>(ranks, 1), counts.data());
    std::vector<std::size_t> sizes(ranks), offset(ranks + 1, 0);
    for (std::size_t r = 0; r < ranks; ++r) {
        sizes[r] = 6 * static_cast<std::size_t>(counts[r]);
        offset[r + 1] = offset[r] + sizes[r];
    }
    std::vector<double> all(offset[ranks]);
    comm_.all_gather(flat.data(), flat.size(), sizes, all.data());
    std::vector<std::vector<char>> send(ranks);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t r = 0; r < ranks; ++r) {
        if (r == me || n == 0 || sizes[r] == 0) continue;
        std::vector<Group<double>> theirs(sizes[r] / 6);
        for (std::size_t k = 0; k < theirs.size(); ++k) {
            const double* b = &all[offset[r] + 6 * k];
            theirs[k].centre = {b[0], b[1], b[2], 0};
            theirs[k].half_extent = {b[3], b[4], b[5], 0};
        }
        append_bytes(make_let(forest_, theirs, tree_.theta), send[r]);
    }
    const double let_seconds = seconds_since(phase);

    phase = WallClock::now();
    const std::vector<std::vector<char>> received = comm_.all_to_all(send);
    const double exchange_seconds = seconds_since(phase);

    phase = WallClock::now();
    traffic_ = {};
    for (std::size_t r = 0; r < ranks; ++r) {
        if (r == me) continue;
        traffic_.bytes_sent += send[r].size();
        traffic_.bytes_received += received[r].size();
        if (received[r].empty()) continue;
        const LocallyEssentialTree let = let_from_bytes(received[r].data(), received[r].size());
        traffic_.nodes_received += let.nodes.size();
        traffic_.particles_received += let.particles.size();
        append_let(forest_, let);
    }
    const double append_seconds = seconds_since(phase);

    times_ = {{"build", build_seconds},
              {"LET walks", let_seconds},
              {"exchange", exchange_seconds},
              {"append", append_seconds}};
    out.acc.resize(3, static_cast<Eigen::Index>(n));
    out.pot.resize(static_cast<Eigen::Index>(n));
    interactions_per_particle_ = 0;
    if (n == 0) return;
    sweep_->load(forest_, TypesRef{});
    sweep_->evaluate_loaded(tree_.opening(), forest_forces_);
    // The local particles are the forest's first n, numbered by order[] in the caller's order.
    out.acc = forest_forces_.acc.leftCols(static_cast<Eigen::Index>(n));
    out.pot = forest_forces_.pot.head(static_cast<Eigen::Index>(n));
    const TreeStats s = sweep_->loaded_statistics(); // per particle of the whole forest
    interactions_per_particle_ = (s.node_interactions_per_particle + s.leaf_interactions_per_particle) *
                                 static_cast<double>(forest_.particles.size()) / static_cast<double>(n);
    for (const auto& p : engine_->last_phase_times()) times_.push_back(p);
}

} // namespace grove
