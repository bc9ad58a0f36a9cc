#include "gpu/direct_multi_gpu.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <numeric>
#include <stdexcept>
#include <thread>

namespace grove {

MultiGpuDirectEngine::MultiGpuDirectEngine(GravityParams gravity, Precision precision, const std::vector<int>& devices)
    : ForceEngine(std::string("direct-gpu/") + precision_name(precision) + " on " + std::to_string(devices.size()) +
                  " GPUs"),
      devices_(devices), precision_(precision)
{
    if (devices.empty()) throw std::invalid_argument("direct-gpu: no device to compute on");
    for (int d : devices) engines_.push_back(std::make_unique<DirectGpuEngine>(gravity, precision, d));
    shares_.resize(devices.size());
}

MultiGpuDirectEngine::~MultiGpuDirectEngine() = default;

void MultiGpuDirectEngine::compute(PositionsRef pos, MassesRef mass, TypesRef type, Forces& out)
{
    std::vector<std::int32_t> all(static_cast<std::size_t>(pos.cols()));
    std::iota(all.begin(), all.end(), 0);
    compute_subset(pos, mass, type, all, out);
}

void MultiGpuDirectEngine::compute_subset(PositionsRef pos, MassesRef mass, TypesRef type,
                                          const std::vector<std::int32_t>& targets, Forces& out)
{
    const auto start = std::chrono::steady_clock::now();
    const std::size_t m = targets.size(), g = engines_.size();
    std::vector<std::size_t> first(g + 1);
    for (std::size_t k = 0; k <= g; ++k) first[k] = m * k / g;
    std::vector<std::exception_ptr> failed(g);
    auto share = [&](std::size_t k) {
        try {
            const std::vector<std::int32_t> mine(targets.begin() + static_cast<std::ptrdiff_t>(first[k]),
                                                 targets.begin() + static_cast<std::ptrdiff_t>(first[k + 1]));
            engines_[k]->compute_subset(pos, mass, type, mine, shares_[k]);
        } catch (...) {
            failed[k] = std::current_exception();
        }
    };
    std::vector<std::thread> threads;
    for (std::size_t k = 1; k < g; ++k) threads.emplace_back(share, k);
    share(0);
    for (auto& t : threads) t.join();
    for (const auto& e : failed)
        if (e) std::rethrow_exception(e); // the first device's error (e.g. coincident particles)
    out.acc.resize(3, static_cast<Eigen::Index>(m));
    out.pot.resize(static_cast<Eigen::Index>(m));
    double upload = 0, kernels = 0;
    for (std::size_t k = 0; k < g; ++k) {
        const auto at = static_cast<Eigen::Index>(first[k]), count = static_cast<Eigen::Index>(first[k + 1] - first[k]);
        out.acc.middleCols(at, count) = shares_[k].acc;
        out.pot.segment(at, count) = shares_[k].pot;
        for (const auto& [phase, seconds] : engines_[k]->last_phase_times()) {
            if (phase == "upload") upload = std::max(upload, seconds);
            if (phase == "kernels") kernels = std::max(kernels, seconds);
        }
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    times_ = {{"upload", upload}, {"kernels", kernels}, {"other", std::max(0.0, total - upload - kernels)}};
}

PhaseTimes MultiGpuDirectEngine::last_phase_times() const
{
    return times_;
}

} // namespace grove
