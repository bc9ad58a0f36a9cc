// What the relative opening criterion (tree/mac.hpp) reads: |a| / G of every particle, in the
// caller's order, from the previous step (a particle store's accelerations, or
// ForceEngine::set_acceleration_estimate) or, where there is none, from a geometric first pass at
// kFirstPassTheta. Both tree engines keep one.
#pragma once

#include <cstddef>
#include <vector>

#include <Eigen/Core>

#include "core/force_engine.hpp"
#include "core/wall_clock.hpp"
#include "tree/mac.hpp"

namespace grove {

class AccelerationEstimate {
  public:
    // Takes the magnitudes of acc (3 x N, G included) divided by G.
    void set(const Eigen::Matrix3Xd& acc, double G)
    {
        const auto n = acc.cols();
        magnitudes_.resize(static_cast<std::size_t>(n));
#pragma omp parallel for schedule(static) if (n > 16384)
        for (Eigen::Index i = 0; i < n; ++i) magnitudes_[static_cast<std::size_t>(i)] = acc.col(i).norm() / G;
    }
    bool covers(std::size_t n) const
    {
        return n > 0 && magnitudes_.size() == n;
    }
    const std::vector<double>& magnitudes() const
    {
        return magnitudes_;
    }
    void release()
    {
        std::vector<double>().swap(magnitudes_);
    }

  private:
    std::vector<double> magnitudes_;
};

// The relative criterion's estimate for n particles, in both tree engines: where `estimate` does
// not cover them, one geometric evaluation at kFirstPassTheta (pass(criterion, forces), forces in
// the caller's order), whose accelerations it keeps. Returns that pass's seconds, or -1 where none
// ran.
template <class Pass>
double estimate_by_first_pass(AccelerationEstimate& estimate, std::size_t n, double G, Forces& forces, Pass&& pass)
{
    if (n == 0 || estimate.covers(n)) return -1;
    const auto start = WallClock::now();
    pass(OpeningCriterion::geometric(kFirstPassTheta), forces);
    estimate.set(forces.acc, G);
    return seconds_since(start);
}

} // namespace grove
