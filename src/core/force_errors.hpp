// Relative force errors of an approximate engine against a reference, and their percentiles:
// the measure of the theta sweep (Octgrav section 3.1) and of every tree accuracy test.
#pragma once

#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace grove {

// |a_i - a_ref,i| / |a_ref,i| per particle (0 where both vanish, +inf where only a_ref does).
std::vector<double> relative_errors(const Eigen::Matrix3Xd& acc, const Eigen::Matrix3Xd& reference);

// |phi_i - phi_ref,i| / |phi_ref,i| per particle.
std::vector<double> relative_errors(const Eigen::VectorXd& pot, const Eigen::VectorXd& reference);

// The q-th percentile (q in [0, 100]) of sorted values, linearly interpolated between order
// statistics (numpy's default); NaN for an empty set.
double percentile_sorted(const std::vector<double>& sorted, double q);

// Sorts a copy and returns the requested percentiles.
std::vector<double> percentiles(std::vector<double> values, const std::vector<double>& qs);

// The particles an error is measured on: `count` distinct indices of [0, n) drawn with a fixed
// seed, in increasing order; all of [0, n) when count is 0 or >= n.
std::vector<std::int32_t> sample_indices(std::size_t n, std::size_t count, std::uint64_t seed);

// The columns `indices` of m, in that order.
Eigen::Matrix3Xd select_columns(const Eigen::Matrix3Xd& m, const std::vector<std::int32_t>& indices);

} // namespace grove
