// Host octree construction, after Octgrav (Gaburov, Bedorf & Portegies Zwart 2010, section 2.1):
// bounding cube -> Morton keys -> parallel radix sort -> top-down split over key ranges in
// pre-order, with the groups of at most ncrit particles -> bottom-up multipole moments
// (tree/moments.hpp) -> the groups' boxes (tree/groups.hpp). The opening radii for a theta are set separately
// (tree/mac.hpp).
#pragma once

#include <cstdint>

#include <Eigen/Core>

#include "core/array_views.hpp"
#include "core/engine_registry.hpp"

#include "tree/mac.hpp"
#include "tree/octree.hpp"

namespace grove {

struct BuildParams {
    int nleaf = kDefaultNleaf; // a cell splits while it holds more particles than this (and keys differ)
    int ncrit = kDefaultNcrit; // most particles per group; 0: by N (resolved_ncrit)
};

// What a tree engine is configured with: the build, and the opening angle its walk uses.
struct TreeParams {
    double theta = 0.5;
    BuildParams build;
    int rebuild_every = 1; // full builds every K evaluations, refits between (tree/refit.hpp)
    MacKind mac = MacKind::geometric;
    double alpha = 1e-3;          // the relative criterion's (tree/mac.hpp)
    double theta_max = kMaxTheta; // the relative criterion's geometric bound
    bool lookahead = false;       // the next tree built from predicted positions meanwhile (tree/refit.hpp)
    bool resident = true;         // tree-gpu: offer whole leapfrog steps on the device (with lookahead)
    // Bytes the interaction lists may take at once (tree/list_batches.hpp); 0: chosen by the engine
    // from the memory it has (tree-cpu a quarter of what this process may use, tree-gpu most of its
    // device's free memory or of device_memory).
    std::uint64_t list_memory = 0;
    // tree-gpu: bytes it may hold on its device in all (0: what the device has free).
    std::uint64_t device_memory = 0;

    OpeningCriterion opening() const { return {mac, theta, alpha, theta_max}; }
};

// Seconds spent in each build phase.
struct BuildTimes {
    double keys = 0, sort = 0, build = 0, moments = 0;
    double groups = 0; // their boxes (their ranges come with the nodes, in build)
    double gather = 0; // a refit's gather of the moved particles (tree/refit.hpp)
    double total() const { return keys + sort + build + moments + groups + gather; }
};

// Builds the tree of `pos` (3 x N) and `mass` (N). N = 0 gives an empty tree. Throws
// std::invalid_argument for non-finite input, N >= 2^31, nleaf < 1 or ncrit < 0. The tree does
// not depend on the order in which the particles come: they are sorted by key, and particles of
// one key by position and mass. A caller may thus keep its particles in the last tree's order
// (which makes the next build's sort and gather nearly sequential) and get the same forces.
Octree build_octree(PositionsRef pos, MassesRef mass, const BuildParams& params, BuildTimes* times = nullptr);

// What a build fills. structure: the order, the nodes, their cells and the groups' ranges, for a
// tree that a refit (tree/refit.hpp) completes before anything reads it (the look-ahead build):
// the refit gathers the particles and computes the moments and group boxes from them anyway, so
// the build leaves them unset (the particles sized) and skips its gather, moments and boxes.
enum class BuildContent { full, structure };

// The same into an existing tree, reusing its storage: repeated builds (a leapfrog run, a
// benchmark) then allocate nothing, which matters because first-touch page faults on fresh
// buffers cost as much as the sort itself. `frame`, where given, is the keys' frame instead of
// the particles' own: a domain's tree takes the domains' (parallel/domains.hpp), so that its cells
// are cells of the cut and no cell's box reaches into another domain.
void build_octree_into(Octree& tree, PositionsRef pos, MassesRef mass, const BuildParams& params,
                       BuildTimes* times = nullptr, BuildContent content = BuildContent::full,
                       const KeyFrame* frame = nullptr);

// The structure (as BuildContent::structure) from n Morton keys computed and sorted elsewhere (the
// resident GPU pipeline sorts them on the device), read in place: sorted ascending, made with
// tree.frame (which the caller sets) as build_octree_into makes them. The
// tree keeps no keys, order or particles (the sort that made the keys holds them; the root's range
// counts the particles). Throws std::invalid_argument for no keys or a box side that is not > 0.
void build_structure_from_sorted_keys(Octree& tree, const std::uint64_t* keys, std::size_t n, const BuildParams& params,
                                      BuildTimes* times = nullptr);

} // namespace grove
