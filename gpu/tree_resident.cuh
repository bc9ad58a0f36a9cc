// A particle store's device side for tree-gpu (core/device_particles.hpp): positions, velocities,
// masses and forces stay in device memory, in the Morton order of the current tree, and the
// store's step operations run here. A leapfrog step (integrators/leapfrog.cpp) on the GPU's stream:
//   kick_drift(): v += a h, x += v dt, everything gathered into the order of the tree the host
//     built during the last step;
//   compute(): the Morton keys of the positions predicted one step further (made from the state
//     and the last forces as the keys need them, not stored), sorted on the device (their order
//     becomes the next step's gather); the sorted keys go to the host on a second stream while the
//     device refits the tree to the exact positions (moments from the leaves up, tree/node_moments.hpp),
//     packs the float tree, and the walk and the lists are queued (tree_engine_impl.cuh);
//   kick(): v += a h in place with the new forces, queued behind the lists; meanwhile the host
//     builds the next tree's structure from the sorted keys and stages it for upload, then waits
//     for the GPU.
// Nothing per step crosses the bus but the keys (8 bytes a particle) and the next structure (about
// 2 bytes a particle).
// Hierarchical time steps (core/device_time_bins.hpp, tree_resident_bins.cu) keep each particle's
// bin here too. A tick drifts everyone and walks only the groups that hold a due particle; the
// tree is rebuilt (from a structure the host built during an earlier such tick) where many
// particles are due, and refitted to the drifted positions at the other ticks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "core/background_task.hpp"
#include "core/device_particles.hpp"
#include "core/device_time_bins.hpp"
#include "core/force_engine.hpp"
#include "core/key_ranges.hpp"
#include "core/rank_exchange.hpp"
#include "core/slot_plan.hpp"
#include "core/step_update.hpp"
#include "core/wall_clock.hpp"
#include "gpu/device_buffer.cuh"
#include "gpu/device_lets.cuh"
#include "gpu/ipc_peers.cuh"
#include "gpu/tree_engine_impl.cuh"
#include "gpu/tree_gpu.h"
#include "tree/key_frame.hpp"
#include "tree/node_moments.hpp"
#include "tree/octree.hpp"

namespace grove {

// The box of a set of points, and whether they are all finite (the key frame's reduction).
struct PointBounds {
    double lo[3], hi[3];
    int finite;
};

// The keys' frame of a structure (tree/key_frame.hpp), and whether every point was finite.
struct KeyBox {
    KeyFrame frame;
    int finite;
};

// The positions a new structure is built from, made where they are needed (the key box and the
// keys) instead of stored: each particle drifted by `drift` after a kick by `kick` with the forces
// in `sums` (sums[order[k]] are particle k's, or sums[k] without an order): a shared step's
// prediction kicks and drifts by its dt, a loaded state's first structure by the step's half kick
// and dt. Without sums the velocities drift alone (a block tick's), and without a drift the
// positions are taken as they are.
struct Prediction {
    const Vec4<double>* body;
    const Vec4<double>* vel;
    const float4* sums;
    const std::uint32_t* order;
    double G, kick, drift;
    __device__ Vec4<double> operator()(int k) const
    {
        const Vec4<double> x = body[k];
        if (drift == 0) return {x.x, x.y, x.z, 0};
        const Vec4<double> v = vel[k];
        if (!sums) return {drifted(x.x, v.x, drift), drifted(x.y, v.y, drift), drifted(x.z, v.z, drift), 0};
        const float4 s = sums[order ? order[k] : k]; // as acceleration_of converts them
        const Vec4<double> a{G * s.x, G * s.y, G * s.z, 0};
        return {drifted(x.x, kicked(v.x, a.x, kick), drift), drifted(x.y, kicked(v.y, a.y, kick), drift),
                drifted(x.z, kicked(v.z, a.z, kick), drift), 0};
    }
};

// A particle that crosses from one domain to another, whole: GPU to GPU where the ranks' GPUs map
// each other's memory, else through MPI.
struct CrosserRecord {
    Vec4<double> body, vel;
    float4 sums;
    std::uint64_t id;
    std::uint8_t type;
    std::uint8_t unused[3];
    float cost; // its last evaluation's, for the next cut of the domains
};
static_assert(sizeof(CrosserRecord) == 96, "a crosser's record is 96 bytes");

// The arrays of the state that a crosser takes with it (gpu/crosser_records.cuh).
struct StateArrays {
    Vec4<double>* body;
    Vec4<double>* vel;
    float4* sums;
    std::uint32_t* caller;
    std::uint64_t* id;
    std::uint8_t* type;
    float* cost; // null where the costs are not kept
};

class TreeGpuResident final : public DeviceParticles, public DeviceTimeBins {
  public:
    explicit TreeGpuResident(TreeGpuEngine::Impl& engine);
    ~TreeGpuResident() override;
    void load(const ParticleSet& particles, TypesRef types) override;
    void kick_drift(double h, double dt) override;
    bool kick(double h) override;
    void store(ParticleSet& particles) override;
    bool diagnostics(const std::vector<double>& fractions, Diagnostics& out) override;
    void unload() override;
    // The forces of particles that have none (a run's start), evaluated here rather than by the
    // host pipeline, whose tree and copies on the host would be the run's largest: into p in its
    // order, with potentials. The state is dropped after, and the first step loads it afresh (the
    // caller may change the particles in between).
    void evaluate_start(ParticleSet& p, TypesRef types);
    bool loaded() const override { return loaded_; }
    // The forces of the positions of the last kick_drift() (or, in block steps, of the due
    // particles' groups after the last drift()), left on the device for kick() or close(); the
    // engine's phase times become this step's.
    void compute();

    // The particles are this rank's domain (docs/parallel-design.md): each evaluation exchanges
    // LETs with the other ranks through `ranks` (which outlives the store) and walks them with the
    // own tree. Null: the particles are all there are. Shared steps only (no time bins), under the
    // geometric criterion with one softening. The LETs for ranks on this host whose GPUs map each
    // other's memory go GPU to GPU (gpu/ipc_peers.cuh), the rest through MPI from pinned memory.
    void set_ranks(RankExchange* ranks)
    {
        ranks_ = ranks;
        peers_connected_ = false;
    }

    // Block steps (either criterion: the relative one scales each walked group by its due
    // particles' smallest |a|).
    DeviceTimeBins* time_bins() override;
    BinCounts open_all(const BinRule& rule) override;
    void drift(double dt, Tick tick, long long due) override;
    BinCounts close(bool reopen) override;
    std::vector<std::uint8_t> bins_in_load_order() override;
    EnclosedMassProfile profile() const override { return profile_; }
    BinCounts continue_within(const BinRule& rule, const std::vector<std::uint8_t>& bins,
                              const EnclosedMassProfile& profile) override;

  private:
    // The predictions' Morton keys sorted on the second stream and sent to the host; `pred` makes
    // them. The evaluation, which replaces the forces a prediction reads, waits for the keys.
    void launch_key_sort(const Prediction& pred);
    // Its two halves: the keys (and the index of each) made at the start of spare_; then `count`
    // of them sorted, of which the first `structure` go to the host for the next structure (the
    // rest are leavers', marked to sort last).
    void launch_keys(const Prediction& pred);
    void sort_keys(int count, int structure);
    // Each step's crossers on several domains (tree_resident_crossers.cu): the particles whose
    // predicted keys leave this domain's key range move to their owners with the step's end, so
    // that every domain's tree holds its own particles at every step and the LETs stay thin.
    // find_domains_cut(): at load, the ranges (each rank's from the least key it holds, the same
    // on every rank; called by all). crossers_each_step(): whether this step's keys move them.
    // exchange_crossing_keys(): in compute(), once the keys are made: the leavers' keys to their
    // owners, the arrivals' placed among the own, and the sort launched (every rank calls it; where
    // any rank's predictions are not finite, nobody moves). exchange_crossing_records(): in kick(),
    // once the step is done: the leavers' state to their owners, the arrivals' into the slots the
    // sorted keys gave them.
    void find_domains_cut(const ParticleSet& p);
    bool crossers_each_step() const;
    // The domains cut anew on the GPUs (tree_resident_recut.cu) by a store that moves crossers: at
    // the second step after a load, then every domain_recut_steps() steps (recut_at,
    // core/rank_exchange.hpp), in a frame moved at each cut. recut_due() counts the step and says
    // whether this one cuts; move_domains_frame(), before the keys are made, takes this cut's
    // frame; cut_domains_anew(), once they are made, finds the new key ranges from every rank's
    // samples of them (weighted by the particles' last costs), after which exchange_crossing_keys()
    // moves every particle the new ranges give another domain. launch_particle_costs(), after each
    // evaluation, gives each particle its group's list lengths as its cost, in the sums' order.
    // exchange_recut_keys() and exchange_recut_records() take the places of the crossers' two
    // exchanges at a cut anew, where most particles change domain: every particle's key goes to its
    // owner (the own ones too), grouped by owner on the device and GPU to GPU between direct peers,
    // and each domain's particles then lie in the order of the ranks they came from.
    bool recut_due();
    void move_domains_frame();
    bool cut_domains_anew(); // false: the samples left a rank without particles; no cut this time
    void launch_particle_costs();
    void exchange_recut_keys();
    void exchange_recut_records();
    // The state's arrays as the crossers' kernels take them.
    StateArrays state_arrays();
    void exchange_crossing_keys();
    void exchange_crossing_records();
    // The positions gathered into the order of the structure just applied (order_) and drifted by
    // dt, after gather_kernel put the velocities in it (kicked by h with the last forces in a shared
    // step; with their bins and forces in a block tick).
    void gather_and_drift(double h, double dt, bool block_tick);
    // The refit of the live structure to the positions, and the float particles and nodes.
    void launch_refit();
    // The float groups of every group of the live structure, for a whole evaluation.
    void launch_pack_groups();
    // Their relative-criterion scales from the engine's sums (particle k's at order[k], or at k
    // without an order: group_scales_kernel).
    void launch_group_scales(const std::uint32_t* order);
    // Between the refit and the walk, on domains: this domain's boxes to every rank, each other
    // domain's LET made here and sent, the received ones appended to the float tree.
    void append_lets(const OpeningCriterion& criterion);
    // How far ahead of `tick` a rebuild predicts the positions its staged structure is built from.
    double structure_lead(Tick tick, double dt) const;
    // compute() in block steps: the refit, the due groups, their walk queued.
    void compute_due_groups();
    // The bins kernel (resident_bin_kernels.cuh) over all particles, and the counts it makes.
    BinCounts launch_bins(Tick tick, bool close, bool open);
    // Room for the bins, the particles' types on the device, and the rule: before the bins of a
    // dt_max are opened or taken back.
    void prepare_bins(const BinRule& rule);
    // The radii about `centre` enclosing each fraction of the mass (the host's `count` values, out
    // to the host's `radii`), by a sort of the radii with their masses in spare_.
    void lagrangian_radii(const Vec4<double>& centre, const double* fractions, std::size_t count, double* radii);
    // The enclosed mass about the centre of mass for the dynamical time's cap (core/time_bins.hpp).
    EnclosedMassProfile enclosed_mass_profile();

    // The steps' sums without potentials get them (from the last step's lists), once.
    void make_potentials();
    // stage_from_sorted_keys() timed, its parts in build_times_ (beside the GPU's work), and
    // those times reported with the step's phases.
    void build_next_structure();
    // The same build on lookahead_task_, beside this tick's lists and the ticks after it, which
    // refit the live tree and need the staged structure only at the next rebuild (block ticks).
    void start_lookahead();
    // Waits for a build start_lookahead() began (rethrowing its error) and reports its times.
    void finish_lookahead();
    // Waits for such a build, its error and its structure dropped with the state.
    void drop_lookahead() noexcept;
    void run_lookahead(); // the build, timed (build_next_structure without the report)
    void report_lookahead();
    // The structure of the next tree from the keys of `pred` sorted on the device now (its order
    // staged there too), built on the host and staged: a loaded state's first, or one after a
    // look-ahead that failed. False where a predicted position is not finite.
    bool stage_from_device_keys(const Prediction& pred);
    // The staging chunks for min(n, kChunk) particles.
    void reserve_chunks();
    // On several domains: domains_cube_ from the loaded particles, the same on every rank (called by all).
    void find_domains_cube(const ParticleSet& p);
    // The structure of the next tree from the keys the device sorted (their order is staged
    // already); false where a prediction was not finite.
    bool stage_from_sorted_keys();
    // Queues the upload of tree t's structure (with its order, when the host made it).
    void stage(const Octree& t, bool with_order);
    // Makes the staged structure the one the device works on (stream order).
    void apply_staged();
    // The closing kick with the forces in the engine's sums, and the copy of the step's flags.
    void launch_kick(double h);
    // Runs an operation on the state; if it throws, the state (part-way through a step) is dropped
    // and the next load() starts afresh.
    template <class Op> void guarded(Op&& op);
    // The step's phases measured on the GPU, once its kick is done; `sorted`: it sorted keys.
    void collect_times(bool sorted = true);
    // Softening by type: each particle's h in the current tree's order and each node's mean of it,
    // into the engine's arrays for the list kernels (after the refit, on the engine's stream).
    void launch_softening();

    TreeGpuEngine::Impl& e_;
    RankExchange* ranks_ = nullptr;
    DeviceLets lets_;
    // The LETs made here and those received, by rank, where MPI reads and writes them (for a
    // direct peer, the tickets that name them).
    std::vector<std::unique_ptr<gpu::PinnedBuffer<char>>> let_made_, let_in_;
    std::vector<ByteSpan> let_send_;
    std::vector<std::vector<char>> tickets_;
    std::vector<std::size_t> let_in_size_;
    std::vector<std::vector<char>> all_boxes_;
    IpcPeers peers_;               // the ranks whose LETs come GPU to GPU
    bool peers_connected_ = false; // peers_ sought (at the first exchange)
    PhaseTimes let_times_;         // the last append_lets()'s parts
    cudaStream_t copy_ = nullptr;  // the keys made, sorted and sent down; structures up
    static constexpr int kEvents = 10;
    cudaEvent_t ev_[kEvents] = {};
    bool loaded_ = false, staged_ = false;
    bool fresh_ = false;                         // loaded, no step yet: the host's copies hold the state
    bool forces_due_ = false, kick_due_ = false; // where the step is: after kick_drift, after compute
    bool failed_ = false;                        // kick_drift found non-finite positions
    // The first look-ahead tree after one built from the positions themselves (a fresh start, or a
    // failed look-ahead build) is refitted, its cells grown: its lists outgrow the room that the
    // exact tree's walk measured, by more than the pool holds at 2^26 particles. Its walk measures
    // them in two passes, rather than walk once, overflow, and make the whole evaluation again.
    // exact_tree_: this step's tree was built from its positions; walk_twice_: this step's walk.
    // The first step on domains cut anew walks twice too: its LETs are new, and its lists outgrew
    // the room that the last step's measured (at 2^26 particles on four GPUs, by more than the pool).
    bool exact_tree_ = false, walk_twice_ = false, after_recut_ = false;
    // compute()'s evaluation, queued; kick() finishes it after queueing the kick behind it.
    std::optional<TreeGpuEngine::Impl::Evaluation> evaluation_;
    // The steps leave the potentials out (a kick needs none); store() makes them, once, from the
    // last step's lists.
    bool potentials_missing_ = false;
    int n_ = 0, cur_ = 0;  // cur_: which of the double-buffered arrays holds the state
    bool by_type_ = false; // softening by type (launch_softening each step)
    double lead_ = 0;      // how far ahead of the positions the next structure's keys predict them
    WallClock::time_point step_start_;
    double lookahead_seconds_ = 0;
    PhaseTimes build_times_; // the parts of the look-ahead build, beside the GPU
    // The last look-ahead build's times, reported by the next collect_times(): a block tick's build
    // ends in the ticks after it, and is reported by the tick that waits for it.
    double lookahead_report_seconds_ = 0;
    PhaseTimes lookahead_report_;
    // Where a block tick builds the next structure. Its thread keeps its OpenMP team between builds.
    BackgroundTask lookahead_task_;

    // Device state (order: the current tree's).
    // The accelerations are the engine's sums of the last evaluation (d_sorted: float, G apart,
    // in the order of the tree they were evaluated on), which the next opening kick reads.
    // A gather into a new order goes through spare_ one array at a time (the velocities, then the
    // positions), each swapped with it after; between the gathers spare_ holds the key sort.
    gpu::DeviceBuffer<Vec4<double>> body_; // x, y, z, mass
    gpu::DeviceBuffer<Vec4<double>> vel_;  // after the opening kick, then (kicked in place) at the end
    gpu::DeviceBuffer<Vec4<double>> spare_;
    gpu::DeviceBuffer<std::uint32_t> caller_[2];
    // Softening by type: h of each particle in the order load() received them (caller_ indexes
    // it), the prefix sums of m h and m h^2 in the tree's order, and the scans' workspace.
    gpu::DeviceBuffer<float> loaded_half_;
    gpu::DeviceBuffer<double> mass_half_sums_;
    gpu::DeviceBuffer<unsigned char> scan_temp_;
    gpu::DeviceBuffer<int> flags_; // non-finite count
    // diagnostics(): the reduction's result, the fractions and their radii.
    gpu::DeviceBuffer<unsigned char> diagnostic_sums_;
    gpu::DeviceBuffer<double> diagnostic_fractions_;
    // The predictions' keys: their box (key_box_kernel) and the sort's workspace; the keys, their
    // index and the sort's second buffers lie in spare_ (key_sort_arrays).
    gpu::DeviceBuffer<PointBounds> bounds_;
    gpu::DeviceBuffer<unsigned char> reduce_temp_;
    gpu::DeviceBuffer<KeyBox> box_;
    gpu::DeviceBuffer<unsigned char> sort_temp_;
    gpu::PinnedBuffer<std::uint64_t> h_keys_;
    gpu::PinnedBuffer<KeyBox> h_box_;
    // On several domains the keys' frame is the cube the domains were cut in, found at load() from
    // the loaded particles as the cut found it (parallel/domains.hpp: domains_cube), and kept until
    // the next load: the trees' cells are then the cut's (tree/key_frame.hpp: domains_key_frame).
    KeyFrame domains_cube_;
    bool on_domains_cube_ = false;
    // The cube the load found, which each cut anew moves (domains_cube_ is then the moved one), the
    // draw that moves it (from the load's bounds and the cuts since), and the steps since the load.
    KeyFrame load_cube_;
    std::uint64_t frame_draw_ = 0;
    long long steps_since_load_ = 0;
    int recut_steps_ = 0;        // domain_recut_steps(), read at load
    bool recut_now_ = false;     // this step cuts the domains anew
    bool recut_refused_ = false; // a cut anew found no room (said once)
    // Each particle's last cost in the sums' order (moved with them), whether it is this state's,
    // and the samples of the keys a cut anew sends.
    gpu::DeviceBuffer<float> cost_;
    bool costs_known_ = false;
    struct Recut {
        bool active = false;               // this step's keys went to their owners
        std::vector<std::size_t> sent;     // by owner (this rank included): the particles going there
        std::vector<std::size_t> received; // by sender: the particles coming from there
    } recut_;
    gpu::DeviceBuffer<std::uint32_t> d_recut_owner_; // each particle's owner, then sorted
    gpu::DeviceBuffer<std::uint32_t> d_recut_slot_;  // the particles' slots, then grouped by owner
    gpu::DeviceBuffer<std::uint64_t> d_recut_key_;   // their keys, grouped by owner
    gpu::DeviceBuffer<int> d_recut_count_;           // by owner
    gpu::PinnedBuffer<int> h_recut_count_;
    gpu::DeviceBuffer<unsigned char> recut_temp_;
    gpu::DeviceBuffer<CrosserRecord> d_recut_in_; // records that came through MPI, on their way in
    std::vector<std::vector<char>> recut_mail_;
    gpu::DeviceBuffer<WeightedKey> d_samples_;
    gpu::PinnedBuffer<WeightedKey> h_samples_;
    std::vector<std::vector<char>> all_samples_;
    std::vector<std::vector<char>> cube_bounds_; // every rank's bounds, gathered

    // Each step's crossers. The ranks' key ranges (ranks + 1 Peano-Hilbert keys, first_key_[r] the
    // least of rank r's range); the particles' IDs and types, kept here in the state's order (double
    // buffered, as caller_) where they move, so that a crosser goes GPU to GPU whole; whether any
    // particle left or came since the load or the last store() (which then writes the device's
    // order with these identities, and makes that order the callers').
    std::vector<std::uint64_t> first_key_;
    gpu::DeviceBuffer<std::uint64_t> d_first_key_;
    bool identity_on_device_ = false;
    gpu::DeviceBuffer<std::uint64_t> id_[2];
    gpu::DeviceBuffer<std::uint8_t> type_[2];
    bool crossed_ = false;
    struct Crossing {
        bool active = false;                    // this step's keys moved crossers
        std::vector<std::size_t> leave;         // the leavers' slots, ascending
        std::vector<std::uint32_t> sent;        // them grouped by their owners
        std::vector<std::size_t> sent_count;    // by rank
        std::vector<std::size_t> arrived_count; // by rank
        SlotPlan plan;
    } crossing_;
    PhaseTimes crossing_times_;
    LetTraffic let_traffic_; // the last append_lets()'s, with the step's crossers
    std::vector<std::vector<char>> crossing_mail_;
    gpu::DeviceBuffer<int> d_crossing_count_;
    gpu::DeviceBuffer<unsigned char> crossing_temp_;
    gpu::DeviceBuffer<std::uint32_t> d_crossing_slot_;
    gpu::DeviceBuffer<std::uint64_t> d_crossing_key_;
    gpu::DeviceBuffer<int> d_crossing_owner_;
    gpu::PinnedBuffer<int> h_crossing_owner_;
    gpu::DeviceBuffer<CrosserRecord> d_crossers_;
    gpu::PinnedBuffer<int> h_crossing_count_;
    gpu::PinnedBuffer<std::uint32_t> h_crossing_slot_;
    gpu::PinnedBuffer<std::uint64_t> h_crossing_key_;
    gpu::PinnedBuffer<CrosserRecord> h_crossers_; // the leavers' state that MPI sends

    // The structure on the device: the order that gathers the state into it, the cells' levels,
    // the groups' ranges (next, is_leaf and range go straight into the engine's arrays).
    gpu::DeviceBuffer<std::uint32_t> order_;
    gpu::DeviceBuffer<std::uint8_t> level_;
    gpu::DeviceBuffer<std::int32_t> parent_;      // the refit's order: each node's parent
    gpu::DeviceBuffer<std::uint8_t> child_count_; // and each node's children,
    gpu::DeviceBuffer<std::int32_t> first_child_; // listed from child_list_[first_child_[i]]
    gpu::DeviceBuffer<std::int32_t> child_list_;
    gpu::DeviceBuffer<int> arrived_; // children finished, counted during a refit
    gpu::DeviceBuffer<ParticleRange> group_range_;
    // Its cells and double moments, refitted every step: of the tree's arrays, the node moments
    // (com_mass, quad, size, com_offset; the float tree the walk reads is the engine's), and the
    // cells and boxes the refit needs besides.
    TreeArrays<double, gpu::DeviceBuffer> moments_;
    gpu::DeviceBuffer<Vec4<double>> cell_;
    gpu::DeviceBuffer<NodeBox> boxes_;

    // The staged structure: pinned on the host, then in device staging buffers.
    struct Staged {
        int nodes = 0, groups = 0;
        int widest = 1; // the most particles in a group
        double root_side = 0;
        int particles = 0;
    } staged_info_, live_info_;
    int sorted_n_ = 0; // the particles of the structure the last sort's keys make
    gpu::PinnedBuffer<std::uint32_t> h_order_;
    gpu::PinnedBuffer<std::int32_t> h_next_;
    gpu::PinnedBuffer<std::uint8_t> h_leaf_, h_level_;
    gpu::PinnedBuffer<ParticleRange> h_range_, h_group_range_;
    gpu::DeviceBuffer<std::uint32_t> s_order_;
    gpu::DeviceBuffer<std::int32_t> s_next_;
    gpu::DeviceBuffer<std::uint8_t> s_leaf_, s_level_;
    gpu::DeviceBuffer<ParticleRange> s_range_, s_group_range_;

    Octree trees_[2]; // the structure on the device, the one being built
    int live_ = 0;

    // Load and store move the state through two pinned chunks of kChunk particles (the host's
    // memory bounded whatever N), one chunk's copies beside the host's work on the other.
    static constexpr std::size_t kChunk = std::size_t{1} << 18;
    struct Chunk {
        gpu::PinnedBuffer<Vec4<double>> body, vel;
        gpu::PinnedBuffer<float4> sums; // the accelerations and potentials as sums
        gpu::PinnedBuffer<std::uint32_t> caller;
        gpu::PinnedBuffer<std::uint64_t> id; // where the device holds the identities
        gpu::PinnedBuffer<std::uint8_t> type;
        cudaEvent_t copied = nullptr; // its last copies are done
    } chunks_[2];
    gpu::PinnedBuffer<int> h_flags_;

    // Block steps: each particle's bin (in the order of body_), the rule, the tick of the last
    // drift, whether it rebuilt (and so stages the next structure), the particles' types in the
    // order load() received them, and the groups the tick walks.
    bool bins_active_ = false; // a tick is under way: compute() evaluates the due groups
    BinRule rule_;
    EnclosedMassProfile profile_; // of the dt_max under way, where rule_.eta_dyn > 0
    Tick tick_ = 0;
    bool rebuild_tick_ = false;
    int ticks_since_rebuild_ = 0;
    bool whole_groups_ = false; // the tick walks whole groups (else pieces of the due ones)
    bool partial_walk_ = false; // the last evaluation walked some particles only (a block tick)
    std::vector<std::uint8_t> loaded_types_;
    gpu::DeviceBuffer<std::uint8_t> bins_[2], types_, group_due_;
    gpu::DeviceBuffer<int> due_groups_, due_group_count_;
    gpu::DeviceBuffer<ParticleRange> due_ranges_;
    gpu::DeviceBuffer<float4> sums_spare_; // the engine's sums gathered at a rebuild, then swapped in
    gpu::DeviceBuffer<unsigned long long> bin_count_;
    gpu::DeviceBuffer<unsigned char> select_temp_;
    gpu::PinnedBuffer<unsigned long long> h_bin_count_;
    BinCounts last_counts_; // of the last bins kernel
    gpu::PinnedBuffer<int> h_due_group_count_;
    bool types_uploaded_ = false;
};

template <class Op> void TreeGpuResident::guarded(Op&& op)
{
    if (!loaded_) throw std::logic_error("tree-gpu: a step on a device store before load");
    try {
        op();
    } catch (...) {
        // The waits ignore errors, which the exception already reports.
        drop_lookahead();
        cudaStreamSynchronize(copy_);
        cudaStreamSynchronize(e_.stream);
        loaded_ = staged_ = fresh_ = forces_due_ = kick_due_ = failed_ = bins_active_ = false;
        evaluation_.reset();
        throw;
    }
}

} // namespace grove
