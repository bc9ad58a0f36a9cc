#include "parallel/domain_tree.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "core/resize_keeping_memory.hpp"
#include "core/softening.hpp"
#include "core/tree_engine.hpp"
#include "core/wall_clock.hpp"
#include "parallel/domains.hpp"
#include "tree/cpu_engines.hpp"
#include "tree/cut_cells.hpp"
#include "tree/locally_essential.hpp"
#include "tree/mac.hpp"
#include "tree/tree_cpu.hpp"

namespace grove {

// The communicator's collectives as a device's engine asks for them (core/rank_exchange.hpp),
// with what its LETs' exchange carried.
class CommunicatorExchange final : public RankExchange {
  public:
    explicit CommunicatorExchange(const Communicator& comm) : comm_(comm) {}
    LetTraffic traffic;
    int ranks() const override { return comm_.size(); }
    int rank() const override { return comm_.rank(); }
    void all_gather(const std::vector<char>& mine, std::vector<std::vector<char>>& all) override
    {
        send_.assign(static_cast<std::size_t>(comm_.size()), mine);
        comm_.all_to_all(send_, all);
    }
    void all_to_all(const std::vector<ByteSpan>& send, const ReceiveInto& into) override
    {
        comm_.all_to_all(send, into);
    }
    void barrier() override { comm_.barrier(); }
    void record(const LetTraffic& t) override { traffic = t; }

  private:
    const Communicator& comm_;
    std::vector<std::vector<char>> send_;
};

DomainTreeEngine::~DomainTreeEngine() = default;

DomainTreeEngine::DomainTreeEngine(std::unique_ptr<ForceEngine> engine, const TreeParams& tree,
                                   const GravityParams& gravity, const Communicator& comm)
    : ForceEngine(engine->name() + " on " + std::to_string(comm.size()) + " domains"), engine_(std::move(engine)),
      sweep_(dynamic_cast<TreeSweep*>(engine_.get())), tree_(tree), gravity_(gravity), comm_(comm)
{
    if (!sweep_) throw std::invalid_argument("domains: " + engine_->name() + " is not a tree engine");
    check_criterion(tree.opening());
    if (!(tree.theta > 0)) throw std::invalid_argument("domains: theta must be > 0");
}

void DomainTreeEngine::check_criterion(const OpeningCriterion& criterion) const
{
    if (criterion.kind == MacKind::relative && !dynamic_cast<TreeCpuEngine*>(engine_.get()))
        throw std::invalid_argument("domains: the relative criterion runs on tree-cpu (--engine tree-cpu); on " +
                                    engine_->name() + " use the geometric one (--mac geometric, --theta)");
}

DeviceParticles* DomainTreeEngine::device_particles()
{
    if (device_) return device_;
    TreeEngine* tree = as_tree_engine(*engine_);
    if (!tree) return nullptr;
    ranks_ = std::make_unique<CommunicatorExchange>(comm_);
    device_ = tree->device_particles_on_domains(*ranks_);
    if (!device_) ranks_.reset();
    return device_;
}

void DomainTreeEngine::set_share(int /*index*/, int /*count*/)
{
    throw std::logic_error("domains: the work is split by the domains, not in shares");
}

DeviceMemory DomainTreeEngine::device_memory() const
{
    const TreeEngine* tree = as_tree_engine(*engine_);
    return tree ? tree->device_memory() : DeviceMemory{};
}

void DomainTreeEngine::compute(ParticleStore& store)
{
    if (device_ && store.device() == device_ && store.on_device()) {
        engine_->compute(store); // the step on the device, LETs and all
        device_step_ = true;
        traffic_ = ranks_->traffic;
        last_n_ = 0; // its tree's order and counts stay on the device
        cost_per_particle_ = 0;
        return;
    }
    device_step_ = false;
    ParticleSet& p = store.host();
    if (tree_.mac == MacKind::relative && p.has_forces()) estimate_.set(p.acc, gravity_.G);
    // Where the store lets them, the particles follow this rank's tree (its first n particles),
    // so that the next build sorts nearly sorted keys and gathers them in sequence; the tree does
    // not depend on their order (tree/build.hpp), so neither do the forces.
    const bool follow = store.may_reorder() && p.size() > 0;
    compute_with(tree_.opening(), p.pos, p.mass, gravity_.per_type() ? store.types() : TypesRef{}, store_forces_,
                 follow ? Order::tree : Order::caller);
    if (!follow) {
        store.take_forces(store_forces_);
        return;
    }
    handed_order_.assign(forest_.order.begin(), forest_.order.begin() + static_cast<std::ptrdiff_t>(p.size()));
    store.take_forces_in_order(store_forces_, handed_order_);
}

void DomainTreeEngine::compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out)
{
    compute_with(tree_.opening(), pos, mass, type, out);
}

void DomainTreeEngine::compute_with(const OpeningCriterion& criterion, PositionsRef pos, MassesRef mass, TypesRef type,
                                    Forces& out)
{
    compute_with(criterion, pos, mass, type, out, Order::caller);
}

void DomainTreeEngine::compute_with(const OpeningCriterion& criterion, PositionsRef pos, MassesRef mass, TypesRef type,
                                    Forces& out, Order order)
{
    check_criterion(criterion);
    if (criterion.kind == MacKind::relative) {
        // Every rank takes the first pass when any lacks an estimate: the LETs are exchanged by all.
        double lacking = estimate_.covers(static_cast<std::size_t>(pos.cols())) || pos.cols() == 0 ? 0 : 1;
        comm_.max(&lacking, 1);
        if (lacking > 0) {
            compute_under(OpeningCriterion::geometric(kFirstPassTheta), pos, mass, type, out, Order::caller);
            estimate_.set(out.acc, gravity_.G);
        }
    }
    compute_under(criterion, pos, mass, type, out, order);
}

void DomainTreeEngine::prepare_let_softening(TypesRef type)
{
    const std::size_t n = forest_.particles.size();
    make_softening_moments(forest_, half_squared_softening(gravity_, type, n, name()), own_softening_);
    sorted_types_.resize(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(n); ++k)
        sorted_types_[static_cast<std::size_t>(k)] = type[forest_.order[static_cast<std::size_t>(k)]];
}

void DomainTreeEngine::compute_under(const OpeningCriterion& criterion, PositionsRef pos, MassesRef mass, TypesRef type,
                                     Forces& out, Order order)
{
    const auto start = WallClock::now();
    // On several domains the tree takes the cube the domains are cut in, so that its cells' boxes
    // stay within its domain and the LETs the others send it stay thin: the frame the caller cut in,
    // or the cube of the particles where they are now, which is the last cut's while they moved
    // little since (a run cuts after each step on this path).
    const KeyFrame cube = frame_ ? *frame_ : domains_cube(pos, comm_);
    build_octree_into(forest_, pos, mass, tree_.build, nullptr, BuildContent::full, comm_.size() > 1 ? &cube : nullptr);
    if (comm_.size() > 1 && domain_keys_) enlarge_cut_cells(forest_, domain_keys_->first, domain_keys_->second);
    const double build_seconds = seconds_since(start);
    const auto n = static_cast<std::size_t>(pos.cols());
    last_n_ = n;
    const auto ranks = static_cast<std::size_t>(comm_.size()), me = static_cast<std::size_t>(comm_.rank());
    const bool relative = criterion.kind == MacKind::relative;

    // Every domain's boxes (with its groups' scales under the relative criterion), then each other
    // domain's LET.
    auto phase = WallClock::now();
    constexpr std::size_t kValues = 9; // per box: centre, half widths, skip, bounds_particles, scale
    std::vector<double> flat;
    std::vector<double> scales;
    if (relative && n > 0) {
        scales.resize(forest_.groups.size());
        fill_group_mac_scales(forest_.groups, forest_.order.data(), estimate_.magnitudes(), scales.data());
    }
    if (ranks > 1) // one domain has no one to describe itself to
        for (const DomainBox& b : domain_boxes(forest_, 1024, relative ? &scales : nullptr))
            flat.insert(flat.end(), {b.box.centre.x, b.box.centre.y, b.box.centre.z, b.box.half_extent.x,
                                     b.box.half_extent.y, b.box.half_extent.z, static_cast<double>(b.next),
                                     static_cast<double>(b.bounds_particles), b.mac_scale});
    std::vector<std::size_t> sizes;
    const std::vector<double> all = comm_.all_gather(flat, sizes);
    std::vector<std::size_t> offset(ranks + 1, 0);
    for (std::size_t r = 0; r < ranks; ++r) offset[r + 1] = offset[r] + sizes[r];
    send_.resize(ranks);
    for (auto& buffer : send_) buffer.clear(); // kept, with their capacity, for the next call
    // A float engine takes the LETs compact, each particle about the receiver's centre.
    LetFormat format;
    format.compact = !dynamic_cast<TreeCpuEngine*>(engine_.get());
    const bool by_type = gravity_.per_type() && n > 0;
    if (by_type) prepare_let_softening(type);
    const LetSoftening let_softening{&own_softening_, &sorted_types_};
    for (std::size_t r = 0; r < ranks; ++r) { // each LET walked by all threads (LetMaker)
        if (r == me || n == 0 || sizes[r] == 0) continue;
        std::vector<DomainBox> theirs(sizes[r] / kValues);
        for (std::size_t k = 0; k < theirs.size(); ++k) {
            const double* b = &all[offset[r] + kValues * k];
            theirs[k].box.centre = {b[0], b[1], b[2], 0};
            theirs[k].box.half_extent = {b[3], b[4], b[5], 0};
            theirs[k].next = static_cast<std::int32_t>(b[6]);
            theirs[k].bounds_particles = static_cast<std::int32_t>(b[7]);
            theirs[k].mac_scale = b[8];
        }
        format.origin = theirs.front().box.centre;
        let_maker_.make(forest_, theirs, criterion, send_[r], format, by_type ? &let_softening : nullptr);
    }
    const double let_seconds = seconds_since(phase);

    phase = WallClock::now();
    comm_.all_to_all(send_, received_);
    const double exchange_seconds = seconds_since(phase);

    phase = WallClock::now();
    traffic_ = {};
    std::vector<LetBytes> lets;
    std::size_t let_nodes = 0, let_particles = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
        if (r == me) continue;
        traffic_.bytes_sent += send_[r].size();
        traffic_.bytes_received += received_[r].size();
        if (received_[r].empty()) continue;
        lets.push_back(let_bytes(received_[r].data(), received_[r].size()));
        let_nodes += lets.back().nodes;
        let_particles += lets.back().particles;
    }
    traffic_.nodes_received = let_nodes;
    traffic_.particles_received = let_particles;
    reserve_for_lets(forest_, let_nodes, let_particles);
    for (const LetBytes& let : lets) append_let(forest_, let);
    const double append_seconds = seconds_since(phase);

    times_ = {{"build", build_seconds},
              {"LET walks", let_seconds},
              {"exchange", exchange_seconds},
              {"append", append_seconds}};
    resize_keeping_memory(out.acc, static_cast<Eigen::Index>(n)); // n moves a little each step
    resize_keeping_memory(out.pot, static_cast<Eigen::Index>(n));
    if (n == 0) {
        cost_per_particle_ = 0;
        return;
    }
    phase = WallClock::now();
    if (by_type) { // the own particles' types in the caller's order (order[] numbers them so), then the LETs'
        forest_types_.assign(forest_.particles.size(), 0);
        for (std::size_t i = 0; i < n; ++i) forest_types_[i] = type[i];
        std::copy(forest_.appended_types.begin(), forest_.appended_types.end(), forest_types_.begin() + n);
    }
    sweep_->load(forest_, by_type ? TypesRef(forest_types_) : TypesRef{});
    if (relative) { // the estimate of the forest's own particles; the LETs' belong to no group
        Eigen::Matrix3Xd acc = Eigen::Matrix3Xd::Zero(3, static_cast<Eigen::Index>(forest_.particles.size()));
        const std::vector<double>& a = estimate_.magnitudes();
        for (std::size_t i = 0; i < n; ++i) acc(0, static_cast<Eigen::Index>(i)) = a[i] * gravity_.G;
        engine_->set_acceleration_estimate(acc);
    }
    times_.push_back({"load", seconds_since(phase)});
    sweep_->evaluate_loaded(criterion, forest_forces_);
    for (const auto& p : engine_->last_phase_times()) times_.push_back(p);
    // The local particles are the forest's first n, their forces in the caller's order (the
    // forest's order[] numbers them so). Copied by all threads: one thread's copy of 2^23 forces
    // takes tens of milliseconds.
    const auto count = static_cast<std::int64_t>(n);
    const bool tree_order = order == Order::tree;
#pragma omp parallel for schedule(static)
    for (std::int64_t k = 0; k < count; ++k) {
        const auto i = tree_order ? static_cast<std::int64_t>(forest_.order[static_cast<std::size_t>(k)]) : k;
        out.acc.col(k) = forest_forces_.acc.col(i);
        out.pot[k] = forest_forces_.pot[i];
    }
    cost_per_particle_ = (seconds_since(start) - exchange_seconds) / static_cast<double>(n);
}

std::vector<std::size_t> DomainTreeEngine::last_tree_order() const
{
    return {forest_.order.begin(), forest_.order.begin() + static_cast<std::ptrdiff_t>(last_n_)};
}

TreeStats DomainTreeEngine::last_statistics() const
{
    if (last_n_ == 0) return {};               // nothing loaded: no groups, no particles
    TreeStats s = sweep_->loaded_statistics(); // per particle of the forest, the LETs' included
    const double forest_per_own = static_cast<double>(forest_.particles.size()) / static_cast<double>(last_n_);
    s.node_interactions_per_particle *= forest_per_own;
    s.leaf_interactions_per_particle *= forest_per_own;
    return s;
}

std::unique_ptr<DomainTreeEngine> make_domain_tree_engine(std::unique_ptr<ForceEngine> engine,
                                                          const EngineConfig& config, const Communicator& comm)
{
    return std::make_unique<DomainTreeEngine>(std::move(engine), tree_params(config), config.gravity, comm);
}

namespace {

// A single evaluation's domains, cut in the cube moved by a draw from the particles' bounds as a
// run's are (and as one process's frame moves at every build): in the cube itself a galaxy's
// centre lies on a corner of every coarse cell, whose pieces err more. The engine's trees take
// the frame.
HilbertDomains cut_for_evaluation(DomainTreeEngine& engine, PositionsRef pos, const Communicator& comm)
{
    const KeyFrame frame = moved_domains_cube(pos, comm);
    HilbertDomains domains = HilbertDomains::cut(pos, {}, comm, nullptr, &frame);
    engine.set_domains_frame(frame);
    engine.set_domain_keys(domains.domain_keys(comm.rank()));
    return domains;
}

} // namespace

void compute_own_domain(DomainTreeEngine& engine, const ParticleSet& part, ParticleSet& mine, Forces& out,
                        const Communicator& comm)
{
    const HilbertDomains domains = cut_for_evaluation(engine, part.pos, comm);
    mine = migrate(part, domains.owners(part.pos), comm);
    engine.compute_with(engine.criterion(), mine.pos, mine.mass, TypesRef(mine.type), out);
}

void compute_on_domains(DomainTreeEngine& engine, const ParticleSet& p, Forces& out, const Communicator& comm)
{
    compute_on_domains(engine, engine.criterion(), p, out, comm);
}

void compute_on_domains(DomainTreeEngine& engine, const OpeningCriterion& criterion, const ParticleSet& p, Forces& out,
                        const Communicator& comm)
{
    const std::size_t n = p.size(), ranks = static_cast<std::size_t>(comm.size()),
                      me = static_cast<std::size_t>(comm.rank());
    const std::size_t begin = n * me / ranks, end = n * (me + 1) / ranks;
    const ParticleSet slab = particle_range(p, begin, end);
    std::vector<double> origin(end - begin); // the index in p, exact in a double below 2^53
    for (std::size_t i = begin; i < end; ++i) origin[i - begin] = static_cast<double>(i);
    const HilbertDomains domains = cut_for_evaluation(engine, slab.pos, comm);
    const ParticleSet mine = migrate(slab, domains.owners(slab.pos), comm, {&origin});
    Forces local;
    engine.compute_with(criterion, mine.pos, mine.mass, TypesRef(mine.type), local);
    out.acc.setZero(3, static_cast<Eigen::Index>(n));
    out.pot.setZero(static_cast<Eigen::Index>(n));
    for (std::size_t j = 0; j < mine.size(); ++j) {
        const auto i = static_cast<Eigen::Index>(origin[j]);
        out.acc.col(i) = local.acc.col(static_cast<Eigen::Index>(j));
        out.pot[i] = local.pot[static_cast<Eigen::Index>(j)];
    }
    comm.sum(out.acc.data(), 3 * n); // each force from the one rank that holds its particle
    comm.sum(out.pot.data(), n);
}

} // namespace grove
