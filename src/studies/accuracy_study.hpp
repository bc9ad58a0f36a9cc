// The accuracy sweep (Octgrav section 3.1-3.2): one host tree, one direct-summation reference in
// double precision, then for each opening angle theta (or, with the relative criterion, each error
// bound alpha; tree/mac.hpp) the tree forces and the distribution of relative errors
// |a_tree - a_direct| / |a_direct| for all particles and per galaxy component.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/engine_registry.hpp"
#include "core/particles.hpp"
#include "tree/interaction_lists.hpp"
#include "tree/mac.hpp"

namespace grove {

// "Find the cheapest theta (or alpha) whose error percentile meets this": p<percentile> <= value for one
// component ("all", "bulge", ...).
struct ErrorTarget {
    double percentile = 99;
    double value = 1e-3;
    std::string component = "all";
};

// "p99=1e-3" -> {99, 1e-3}; throws with the accepted form otherwise.
ErrorTarget parse_error_target(const std::string& text);

struct AccuracyOptions {
    MacKind mac = MacKind::geometric;
    std::vector<double> values;   // theta (geometric) or alpha (relative) values
    double theta_max = kMaxTheta; // the relative criterion's geometric bound (OpeningCriterion)
    int nleaf = kDefaultNleaf, ncrit = kDefaultNcrit;
    double eps = 0, G = 1;
    GravityParams gravity() const { return {G, eps, eps_type}; }
    std::array<double, kNumParticleTypes> eps_type = GravityParams{}.eps_type; // by type (core/softening.hpp)
    std::size_t sample = 0;                   // 0: reference for every particle; else for this many random ones
    int repeat = 1;                           // tree evaluations per value (median time reported)
    std::string tree_engine = "tree-cpu";     // or tree-gpu
    std::string direct_engine = "direct-cpu"; // or direct-gpu (double precision)
    std::uint64_t seed = 1;
    std::optional<ErrorTarget> target;             // also search theta (or alpha) for this
    std::uint64_t gpu_memory = 0, list_memory = 0; // the tree engine's limits (EngineConfig's)
    // Under mpirun: the tree over Peano-Hilbert domains with locally essential trees
    // (parallel/domain_tree.hpp), each row one force computation over the domains, build included;
    // otherwise every rank evaluates a share of the groups of one replicated tree.
    bool domains = false;

    OpeningCriterion criterion(double value) const
    {
        return mac == MacKind::geometric ? OpeningCriterion::geometric(value)
                                         : OpeningCriterion::relative(value, theta_max);
    }
};

// Acceleration error percentiles at these levels, then the potential's at 50 and 99.
inline const std::vector<double> kErrorLevels = {50, 90, 99, 99.9, 100};

struct ErrorSummary {
    std::string component; // "all", "bulge", "disk", "halo", ...
    std::vector<double> sorted_acc_errors;
    std::vector<double> acc_percentiles; // at kErrorLevels
    std::vector<double> pot_percentiles; // at 50 and 99
};

struct SweepResult {
    double value = 0;                 // theta or alpha
    std::vector<ErrorSummary> errors; // "all" first
    TreeStats stats;
    double evaluate_seconds = 0; // walk + evaluation (median of repeats)
};

// The search for an ErrorTarget: the largest theta or alpha (the fewest interactions) whose error
// meets it, found by bisection in log between 0.05 and 2/sqrt(3) (theta) or 1e-6 and 1 (alpha).
struct TargetSearch {
    ErrorTarget target;
    bool reachable = false;
    SweepResult best;                // at the chosen value (reachable) or at the smallest (not)
    double best_error = 0;           // the target percentile there
    std::vector<SweepResult> probes; // every evaluation, in order
};

struct AccuracyStudy {
    std::size_t n = 0;
    std::vector<std::int32_t> targets; // the particles compared (all when no sample)
    double build_seconds = 0;          // host tree build, once
    double direct_seconds = 0;         // the reference, scaled to all N when sampled
    double first_pass_seconds = 0;     // relative criterion: the geometric pass that estimates |a| (on
                                       // domains, with the first row's evaluation)
    std::vector<SweepResult> results;
    double fit_amplitude = 0, fit_exponent = 0; // median error ~ A theta^alpha (all particles)
    std::optional<TargetSearch> search;
};

// "0.2:1.0:0.1" (inclusive range) or "0.3,0.5,0.75" of theta or alpha values, each checked by
// check_theta / check_alpha; throws with the accepted forms otherwise.
std::vector<double> parse_sweep(const std::string& text, MacKind mac);

// Least-squares fit of y = A x^alpha in log-log; returns {A, alpha}.
std::pair<double, double> fit_power_law(const std::vector<double>& x, const std::vector<double>& y);

// Errors of `acc`/`pot` against the reference on `targets` (reference columns in target order),
// overall and per particle type present.
std::vector<ErrorSummary> summarize_errors(const ParticleSet& p, const std::vector<std::int32_t>& targets,
                                           const Eigen::Matrix3Xd& acc, const Eigen::VectorXd& pot,
                                           const Eigen::Matrix3Xd& ref_acc, const Eigen::VectorXd& ref_pot);

AccuracyStudy run_accuracy_study(const ParticleSet& p, const AccuracyOptions& options);

// Per value and component: percentiles, and the sorted errors (or, above 200000 particles, the
// fraction of particles with error above 400 log-spaced thresholds); timings, list lengths, fit.
void write_accuracy_hdf5(const std::string& path, const AccuracyStudy& study, const AccuracyOptions& options,
                         const std::string& source);

} // namespace grove
