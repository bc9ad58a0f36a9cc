// grove run --target pQ=VALUE: the tree's opening angle (or, with --mac relative, its error bound
// alpha) chosen at the start of a run from a sample of its particles, by the search of
// grove accuracy --target, then fixed for the whole run and its restarts.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/particles.hpp"
#include "integrators/integrator.hpp"
#include "studies/accuracy_study.hpp"

namespace grove {

struct RunTarget {
    ErrorTarget target;
    std::size_t sample = 4096; // particles compared against the direct sum
};

struct ChosenOpening {
    std::string parameter; // "theta" or "alpha"
    double value = 0;
    double error = 0;        // the target's percentile there, on the sample
    double interactions = 0; // per particle
    std::size_t compared = 0;
    int evaluations = 0;
};

// The largest theta (alpha) whose error on the sample meets the target, for the run's tree engine
// and settings (ic.engine). Throws std::runtime_error naming the error reached where no value
// meets it, or where the engine is not a tree.
ChosenOpening choose_opening(const ParticleSet& p, const IntegratorConfig& ic, const RunTarget& target);

// The command line with the choice in place of the target (--target, --target-component,
// --target-sample and any --theta or --alpha removed, then --theta or --alpha VALUE added): a
// restart takes the same value.
std::vector<std::string> with_chosen_opening(const std::vector<std::string>& argv, const ChosenOpening& chosen);

} // namespace grove
