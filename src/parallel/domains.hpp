// Peano-Hilbert domains (docs/parallel-design.md): the Peano-Hilbert keys (tree/hilbert.hpp) of one
// cube around every rank's particles, cut into one contiguous key range per rank, of equal cost. A
// rank's domain is then a union of octree cells, compact in space (more so than a Morton range),
// so that what other domains need of it (its LET, tree/locally_essential.hpp) is a thin shell.
// The cost of a particle is what its force cost the last time (interactions), or 1 before there
// was a last time.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/array_views.hpp"
#include "core/particles.hpp"
#include "parallel/communicator.hpp"
#include "tree/key_frame.hpp"

namespace grove {

// The frame the domains are cut in, the same on every rank (called by all): a cube about every
// rank's particles (tree/key_frame.hpp: domains_key_frame).
KeyFrame domains_cube(PositionsRef pos, const Communicator& comm);

// That cube moved as the GPUs move it when they cut the domains anew (tree/key_frame.hpp:
// moved_domains_frame), by a draw from the particles' bounds, which move a little at every step:
// the frame of a cut after a step on the host pipeline (DomainFollower::follow), so that the force
// errors of a grid that stays put do not add up step after step.
KeyFrame moved_domains_cube(PositionsRef pos, const Communicator& comm);

// A rank's keys (first .. end - 1) in a cut of the domains, which its domain's tree takes
// (DomainTreeEngine::set_domain_keys).
using DomainKeys = std::pair<std::uint64_t, std::uint64_t>;

class HilbertDomains {
  public:
    // Called by every rank with its own particles and their costs (empty: 1 each; else one
    // non-negative finite value per particle). The cube and the cuts are the same on every rank.
    // Throws std::invalid_argument for costs of the wrong length or value. `keys`, where given,
    // gets the particles' keys in its own memory (none on one rank, which needs no keys), for
    // owners_of_keys and leaving. `frame`, where given (the same on every rank), is the cube the keys
    // are cut in instead of domains_cube's.
    static HilbertDomains cut(PositionsRef pos, const std::vector<double>& cost, const Communicator& comm,
                              std::vector<std::uint64_t>* keys = nullptr, const KeyFrame* frame = nullptr);

    int ranks() const { return static_cast<int>(first_key_.size()) - 1; }
    // The cube the keys are cut in (domains_cube), which each domain's tree takes too
    // (parallel/domain_tree.hpp).
    const KeyFrame& frame() const { return frame_; }
    std::uint64_t key(double x, double y, double z) const;
    // The rank owning a key: the r with first_key(r) <= key < first_key(r + 1).
    int owner(std::uint64_t key) const;
    std::uint64_t first_key(int rank) const { return first_key_[static_cast<std::size_t>(rank)]; }
    DomainKeys domain_keys(int rank) const { return {first_key(rank), first_key(rank + 1)}; }
    std::vector<int> owners(PositionsRef pos) const;
    // The same from the keys cut() gave for these particles.
    std::vector<int> owners_of_keys(const std::vector<std::uint64_t>& keys, std::size_t count) const;
    // The particles whose keys `rank` does not own (ascending) and their owners: between steps
    // few leave, so that a list of them is all the following needs.
    void leaving(const std::vector<std::uint64_t>& keys, int rank, std::vector<std::size_t>& leave,
                 std::vector<int>& destination) const;

  private:
    std::vector<std::uint64_t> keys_of(PositionsRef pos) const;
    void keys_into(PositionsRef pos, std::vector<std::uint64_t>& keys) const; // reusing their memory

    KeyFrame frame_;
    std::vector<std::uint64_t> first_key_; // ranks + 1 values, from 0 to 2^63
};

// The particles every rank should hold after sending each of its own to owner[i] (MPI all-to-all
// of whole records: position, velocity, mass, ID, type, and the forces where the set has them).
// `carried` values go along, one per particle (a cost, an origin), and come back in the new order.
// The order of the result: by sending rank, and within one rank as they were.
ParticleSet migrate(const ParticleSet& particles, const std::vector<int>& owner, const Communicator& comm,
                    std::vector<std::vector<double>*> carried = {});

// The particles at the slots `leave` (ascending, distinct) replaced by `arrived`, in place: the
// arrivals fill the slots below the new count first and follow the last particle where more
// arrive than leave; where fewer arrive, the last particles that stay fill the slots that are
// left. Only the particles that move are copied, and the arrays keep their memory: no new array
// of every particle at each step, whose pages would fault in anew. The forces stay where both
// sets have them (dropped otherwise); extra columns go. Throws std::invalid_argument for slots
// that are not ascending, distinct and within the set.
void exchange_in_place(ParticleSet& local, const std::vector<std::size_t>& leave, const ParticleSet& arrived);

// The particles of `p` at `index`, in that order (the forces too where p has them).
ParticleSet select_particles(const ParticleSet& p, const std::vector<std::size_t>& index);

// The particles of `p` in ID order.
ParticleSet sorted_by_id(const ParticleSet& p);

// This rank's domain of a set that every rank holds whole, cut to equal counts, in ID order; where
// `keys` is given, the cut's keys of this rank.
ParticleSet own_domain(const ParticleSet& all, const Communicator& comm, DomainKeys* keys = nullptr);

// The same from any split of the set over the ranks (each rank's part of a file): every rank
// ends with what own_domain would give it, and gets the same keys. With `cost` (one value per
// particle), the domains are cut to equal cost instead (HilbertDomains::cut).
DomainKeys move_to_domains(ParticleSet& local, const Communicator& comm, const std::vector<double>& cost = {});

// The particles one rank of a run on `ranks` domains holds, for its GPU's memory plan: its share
// of n and a quarter more, for domains cut to equal work rather than counts (at 2^26 on four GPUs
// they held 0.8 to 1.2 times the mean) and for the LETs it receives.
std::size_t planned_domain_particles(std::size_t n, int ranks);

// The domains following the particles between the steps of a run: a run holds one, whose key
// and list buffers keep their memory from step to step (at 10^7 particles a rank, an array of
// keys made anew at every step costs its page faults).
// Where a run's steps live on the ranks' GPUs (parallel/domain_tree.hpp), the domains follow the
// particles every device_follow_steps() steps rather than after each: a follow copies every rank's
// particles back to the host and loads them again, where the next build waits for it. The GPUs'
// stores move each step's crossers to their owners themselves (core/rank_exchange.hpp), and cut
// the domains anew to equal work every domain_recut_steps() steps: then the domains follow only
// at each file a run writes (0 here). Where those cuts are off (GROVE_DOMAIN_RECUT=0), the follows
// cut the domains anew to even out their counts, which drift slowly (a galaxy of 2^25 particles
// on two GPUs: 0.02 % apart after 300 steps): every kDeviceFollowStepsWithCrossers steps. (A
// follow after the GPUs' cuts moves a quarter of the particles through the hosts, from domains of
// equal work to equal counts: 3.3 s at 2^26 on four GPUs.) Where the crossers wait for the
// follows instead (GROVE_DOMAIN_CROSSERS=follow), every kDeviceFollowSteps: a domain left to drift
// grows its LETs and its lists (it is never wrong, only thicker).
constexpr int kDeviceFollowSteps = 32;
constexpr int kDeviceFollowStepsWithCrossers = 1024;
int device_follow_steps();

// Whether the domains on GPUs follow the particles after step `step` (1, 2, ...) with no file
// written: every device_follow_steps() steps, never where that is 0.
bool device_follow_due(long long step);

class DomainFollower {
  public:
    // The ranks' particles moved to domains cut anew to equal counts. Only the particles that
    // change rank travel; they take the leavers' slots (exchange_in_place), and the others keep
    // theirs. The same particles on the same number of ranks give the same domains whichever rank
    // held what and in whatever order, as own_domain does; the trees built on them do not depend
    // on the order (tree/build.hpp), so that a run restarted from its file (in ID order) continues
    // bit for bit. Returns whether any rank's particles changed (false: every `local` is as it was).
    //
    // With `work` (this rank's last force computation, ForceEngine::last_work; every rank that
    // holds particles gives one > 0), cut to equal work instead: each particle costs its rank's
    // work over its rank's count, so that a domain whose particles took more gives some away, and
    // over a few follows the ranks' work evens out. The domains then depend on where the particles
    // were, not only on the particles: a run cuts to equal counts where it writes a file that it
    // may restart from.
    //
    // Also true on several ranks where no particle moved but the cube the keys are cut in did (or
    // at the first follow): the domains' trees take that cube, so a store that holds them builds
    // them anew.
    //
    // With `move_frame`, the cut is made in the domains' cube moved by a draw from the particles'
    // bounds (moved_domains_cube), a new frame at every follow; the caller hands frame() to the
    // engine, whose trees take it (parallel/domain_tree.hpp: set_domains_frame). Without, in the
    // cube itself: where a run writes a file it may restart from (its restart cuts in the cube),
    // and where the domains' GPUs find the cube again from the particles they load.
    bool follow(ParticleSet& local, const Communicator& comm, double work = 0, bool move_frame = false);
    const KeyFrame& frame() const { return cube_; } // the last cut's
    // This rank's keys in the last cut: first .. end - 1.
    DomainKeys own_keys() const { return own_keys_; }

  private:
    KeyFrame cube_; // the last cut's
    DomainKeys own_keys_{0, 0};
    bool followed_ = false; // whether there was one
    std::vector<std::uint64_t> keys_;
    std::vector<double> cost_;
    std::vector<std::size_t> leave_;
    std::vector<int> destination_;
};

} // namespace grove
