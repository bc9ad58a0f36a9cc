// The collective operations an engine on one rank needs from the others where the particles are
// split over domains (docs/parallel-design.md), as bytes: the engine that owns the ranks
// (parallel/domain_tree.hpp) implements them over MPI, and a tree on the rank's device calls them
// within its evaluation (each LET made and received there). Every rank calls the same operations
// in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace grove {

// Bytes that stay where they are (a pinned buffer the GPU wrote them into) while they are sent.
struct ByteSpan {
    const char* data = nullptr;
    std::size_t size = 0;
};

// What one rank's LETs carried in its last evaluation.
struct LetTraffic {
    std::uint64_t bytes_sent = 0, bytes_received = 0;
    std::uint64_t nodes_received = 0, particles_received = 0;
    // The particles that crossed to or from another domain with the step (where the steps move
    // them: the resident store's each step).
    std::uint64_t crossers_sent = 0, crossers_received = 0;
};

// Whether a store on domains moves each step's crossers (the particles whose keys left its
// domain) to their owners with the step (GROVE_DOMAIN_CROSSERS=step, the default), or leaves
// them until the domains next follow the particles (=follow, the way to compare). Throws
// std::invalid_argument for another value.
bool domain_crossers_each_step();

// How many steps apart a store on domains cuts them anew on its GPU, in a frame moved at each cut
// (tree/key_frame.hpp: moved_domains_frame), where it moves each step's crossers: the domains' key
// ranges from the ranks' samples of their particles' keys weighted by their last costs, and every
// particle sent to the owner the new ranges give it (gpu/tree_resident_recut.cu). A frame that stays put
// leaves the same force errors at every step, and a galaxy's momentum drifts; moved every 16 steps
// it walked as one process's (bench/results/several-gpus.md). GROVE_DOMAIN_RECUT=K sets it, 0 for
// never (the frame stays the load's, as before). Throws std::invalid_argument for a value that is
// not a whole number >= 0.
constexpr int kDomainRecutSteps = 16;
int domain_recut_steps();

// The step after a load (counting from 1) at which a store first cuts the domains anew: the second,
// once the first has given the particles their costs. A run's every file is a load (the domains
// follow there, parallel/domains.hpp), so a run writing files fewer than domain_recut_steps() steps
// apart would otherwise never move its frame.
constexpr long long kFirstRecutStep = 2;

// Whether a store that cuts every `every` steps (0: never) cuts at step `since_load` after its load:
// at kFirstRecutStep and every `every` steps after.
constexpr bool recut_at(long long since_load, int every)
{
    return every > 0 && since_load >= kFirstRecutStep && (since_load - kFirstRecutStep) % every == 0;
}

class RankExchange {
  public:
    virtual ~RankExchange() = default;
    virtual int ranks() const = 0;
    virtual int rank() const = 0;
    // all[r] becomes rank r's `mine`.
    virtual void all_gather(const std::vector<char>& mine, std::vector<std::vector<char>>& all) = 0;
    // send[r] goes to rank r; what comes from rank r lands where into(r, its length) says, room the
    // caller provides (a pinned buffer the GPU then reads).
    using ReceiveInto = std::function<char*(int rank, std::size_t bytes)>;
    virtual void all_to_all(const std::vector<ByteSpan>& send, const ReceiveInto& into) = 0;
    // Returns once every rank has called it.
    virtual void barrier() = 0;
    // The engine's account of its last exchange of LETs (which may have travelled beside
    // all_to_all, device to device), for the run's report.
    virtual void record(const LetTraffic& traffic) = 0;
};

} // namespace grove
