#include "core/force_errors.hpp"

#include <random>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace grove {

namespace {

double ratio(double diff, double ref)
{
    if (ref > 0) return diff / ref;
    return diff > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

} // namespace

std::vector<double> relative_errors(const Eigen::Matrix3Xd& acc, const Eigen::Matrix3Xd& reference)
{
    if (acc.cols() != reference.cols()) throw std::invalid_argument("relative_errors: sizes differ");
    std::vector<double> e(static_cast<std::size_t>(acc.cols()));
    for (Eigen::Index i = 0; i < acc.cols(); ++i)
        e[static_cast<std::size_t>(i)] = ratio((acc.col(i) - reference.col(i)).norm(), reference.col(i).norm());
    return e;
}

std::vector<double> relative_errors(const Eigen::VectorXd& pot, const Eigen::VectorXd& reference)
{
    if (pot.size() != reference.size()) throw std::invalid_argument("relative_errors: sizes differ");
    std::vector<double> e(static_cast<std::size_t>(pot.size()));
    for (Eigen::Index i = 0; i < pot.size(); ++i)
        e[static_cast<std::size_t>(i)] = ratio(std::abs(pot[i] - reference[i]), std::abs(reference[i]));
    return e;
}

double percentile_sorted(const std::vector<double>& sorted, double q)
{
    if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
    const double pos = std::clamp(q, 0.0, 100.0) / 100 * static_cast<double>(sorted.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
    const double t = pos - static_cast<double>(lo);
    return sorted[lo] + t * (sorted[hi] - sorted[lo]);
}

std::vector<double> percentiles(std::vector<double> values, const std::vector<double>& qs)
{
    std::sort(values.begin(), values.end());
    std::vector<double> out;
    for (double q : qs) out.push_back(percentile_sorted(values, q));
    return out;
}

std::vector<std::int32_t> sample_indices(std::size_t n, std::size_t count, std::uint64_t seed)
{
    std::vector<std::int32_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = static_cast<std::int32_t>(i);
    if (count == 0 || count >= n) return all;
    std::mt19937_64 rng(seed);
    for (std::size_t i = 0; i < count; ++i) { // a partial Fisher-Yates shuffle: no repeats
        const std::size_t j = i + static_cast<std::size_t>(rng() % (n - i));
        std::swap(all[i], all[j]);
    }
    all.resize(count);
    std::sort(all.begin(), all.end());
    return all;
}

Eigen::Matrix3Xd select_columns(const Eigen::Matrix3Xd& m, const std::vector<std::int32_t>& indices)
{
    Eigen::Matrix3Xd out(3, static_cast<Eigen::Index>(indices.size()));
    for (std::size_t k = 0; k < indices.size(); ++k) out.col(static_cast<Eigen::Index>(k)) = m.col(indices[k]);
    return out;
}

} // namespace grove
