// The diagnostics of a set spread over the ranks (core/diagnostics.hpp), without gathering it:
// the sums are all-reduced, and each Lagrangian radius is bracketed by mass histograms of the
// radii summed over the ranks until few particles remain in its bracket; those alone are gathered,
// and the radius is interpolated between them as one process does over the whole sorted set.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "core/diagnostics.hpp"
#include "parallel/communicator.hpp"

namespace grove {

// Every rank calls it with its own particles and their potentials; all get the same result.
Diagnostics compute_diagnostics(const ParticleSet& local, const Eigen::VectorXd& potential, const Communicator& comm,
                                const std::vector<double>& fractions = {0.1, 0.5, 0.9});

} // namespace grove
