// The block-step schedule of the Hermite integrator: the particles grouped by their next time
// t + dt. A block step takes the group of the earliest time, which is exactly what a scan of all
// N particles for the earliest next time and the particles at it finds, in O(m log m) for its m
// particles (O(N / 64 + m) for large groups) instead of O(N). Block steps keep few groups: every
// particle's step is a power of two and its time a multiple of it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

namespace grove {

class BlockSchedule {
  public:
    // Every particle i at next time t[i] + dt[i].
    void reset(const Eigen::VectorXd& t, const Eigen::VectorXd& dt)
    {
        by_time_.clear();
        marks_.assign(static_cast<std::size_t>(t.size() + 63) / 64, 0);
        for (Eigen::Index i = 0; i < t.size(); ++i) put(static_cast<std::int32_t>(i), t[i] + dt[i]);
    }

    bool empty() const { return by_time_.empty(); }

    // The earliest next time; +infinity when there are no particles.
    double next_time() const
    {
        return by_time_.empty() ? std::numeric_limits<double>::infinity() : by_time_.begin()->first;
    }

    // Takes out the particles at the earliest next time, into `active` in index order (the order
    // of a scan of all particles); returns that time.
    double take_next(std::vector<std::int32_t>& active)
    {
        active.clear();
        if (by_time_.empty()) return std::numeric_limits<double>::infinity();
        auto node = by_time_.extract(by_time_.begin());
        active.swap(node.mapped());
        sort_indices(active);
        return node.key();
    }

    // Particle i's next time, after its step. A time that is not finite would break the order.
    void put(std::int32_t i, double next)
    {
        if (!std::isfinite(next))
            throw std::runtime_error("hermite: particle " + std::to_string(i) + " has no finite next time");
        by_time_[next].push_back(i);
    }

  private:
    // Into increasing order: a comparison sort for few, else through a bitmap of all particles
    // (O(N / 64 + m)): a 6th-order block step of 64k particles can have tens of thousands.
    void sort_indices(std::vector<std::int32_t>& v)
    {
        if (v.size() < 512) {
            std::sort(v.begin(), v.end());
            return;
        }
        for (const std::int32_t i : v) marks_[static_cast<std::size_t>(i) / 64] |= std::uint64_t{1} << (i % 64);
        v.clear();
        for (std::size_t w = 0; w < marks_.size(); ++w) {
            for (std::uint64_t bits = marks_[w]; bits != 0; bits &= bits - 1)
                v.push_back(static_cast<std::int32_t>(64 * w + static_cast<std::size_t>(__builtin_ctzll(bits))));
            marks_[w] = 0;
        }
    }

    std::map<double, std::vector<std::int32_t>> by_time_;
    std::vector<std::uint64_t> marks_; // one bit per particle, all clear between calls
};

} // namespace grove
