// The GPU benchmarks: direct-summation rates against the FP32 limit, the Hermite kernels, and the
// tree engine (bench_tree.cpp). They time kernels through the GPU engines' own entry points
// (j-splits, kernel timers), so this file is built only with the GPU library.
#include "cli/bench_gpu.hpp"

#include <algorithm>
#include <cstdio>
#include <initializer_list>
#include <random>
#include <sstream>

#include "cli/bench_tree.hpp"
#include "cli/cli_common.hpp"
#include "core/ic_models.hpp"
#include "gpu/device_info.h"
#include "gpu/direct_gpu.h"
#include "gpu/hermite_gpu.h"
#include "gpu/loop_ceiling.h"

namespace grove {

namespace {

// "14:20" -> {14, ..., 20}; "10" -> {10}.
std::vector<int> parse_exponent_range(const std::string& text, const char* option)
{
    const auto colon = text.find(':');
    try {
        const int lo = std::stoi(text.substr(0, colon));
        const int hi = colon == std::string::npos ? lo : std::stoi(text.substr(colon + 1));
        if (lo < 0 || hi > 30 || lo > hi) throw std::out_of_range(option);
        std::vector<int> out;
        for (int e = lo; e <= hi; ++e) out.push_back(e);
        return out;
    } catch (const std::exception&) {
        throw std::runtime_error(std::string("--") + option +
                                 " takes LO:HI with 0 <= LO <= HI <= 30 (powers of two), got '" + text + "'");
    }
}

// Uniform cube [-1,1]^3 with random masses, as in the published reference runs.
void uniform_cube(std::size_t n, Eigen::Matrix3Xd& pos, Eigen::VectorXd& mass, std::uint64_t seed)
{
    ParticleSet p = make_uniform_cube(n, seed, true);
    pos = std::move(p.pos);
    mass = std::move(p.mass);
}

// The device and, per kernel, its instruction counts (gpu/kernel_costs.hpp) and the limit they imply.
void print_kernel_limits(const DeviceSummary& dev, std::initializer_list<KernelCost> kernels)
{
    std::printf("device %s: %d SMs, %.3f GHz, %d FP32 and %d FP64 lanes per SM\n\n", dev.name.c_str(), dev.sm_count,
                dev.clock_ghz, dev.fp32_lanes_per_sm, dev.fp64_lanes_per_sm);
    std::printf("| kernel | FP32 | FP64 | MUFU | 64-bit conversions | other | limit (interactions/s) |\n"
                "|---|---|---|---|---|---|---|\n");
    for (const KernelCost& k : kernels)
        std::printf("| %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.3e |\n", k.label, k.fp32, k.fp64, k.mufu, k.conv64,
                    k.other, dev.limit(k));
    std::printf("\nInstructions per interaction in each kernel's inner loop, counted in its PTX "
                "(bench/kernel_instructions.py); the limit is the tightest of the FP32, FP64, special-function, "
                "64-bit conversion and issue bounds.\n\n");
}

// The kernels' inner loops alone (gpu/loop_ceiling.h), each against `cost`'s limit; the FFMA
// stream against the FP32 lanes' peak.
void print_loop_ceilings(const DeviceSummary& dev, const std::vector<LoopCeiling>& loops, const KernelCost& cost)
{
    std::printf("| inner loop alone (no global loads, barriers or sums) | rate | of the limit |\n|---|---|---|\n");
    for (const LoopCeiling& l : loops) {
        const bool ffma = l.label.rfind("independent FFMAs", 0) == 0;
        const double peak = static_cast<double>(dev.sm_count) * dev.fp32_lanes_per_sm * dev.clock_ghz * 1e9;
        std::printf("| %s | %.3e | %.1f%%%s |\n", l.label.c_str(), l.rate,
                    100 * l.rate / (ffma ? peak : dev.limit(cost)), ffma ? " of the FP32 lanes" : "");
    }
    std::printf("\n");
}

int bench_direct(const BenchConfig& r)
{
    const DeviceSummary dev = describe_device();
    const double eps = r.eps.value_or(0.01);
    const int repeat = std::max(1, r.repeat);
    print_kernel_limits(dev, {kDirectFloatCost, kDirectMixedCost, kDirectDoubleCost});
    print_loop_ceilings(dev, measure_direct_loop_ceilings(), kDirectFloatCost);
    std::printf(
        "sources: uniform cube, random masses, eps = %g; median of %d timed runs after one warm-up; kernel time "
        "from CUDA events (force kernel + on-device reduction)\n\n",
        eps, repeat);
    std::printf("| precision | N_i | N_j | splits | kernel ms | interactions/s | of its limit |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    auto run = [&](DirectGpuEngine& engine, PositionsRef pos, MassesRef mass, const std::vector<std::int32_t>* active,
                   Precision prec) {
        Forces f;
        std::vector<double> times;
        for (int k = 0; k <= repeat; ++k) {
            if (active)
                engine.compute_subset(pos, mass, *active, f);
            else
                engine.compute(pos, mass, f);
            if (k > 0) times.push_back(engine.last_kernel_seconds());
        }
        std::sort(times.begin(), times.end());
        const double t = times[times.size() / 2];
        const double ni = active ? static_cast<double>(active->size()) : static_cast<double>(pos.cols());
        const double rate = ni * static_cast<double>(pos.cols()) / t;
        const double limit = dev.limit(prec == Precision::Float   ? kDirectFloatCost
                                       : prec == Precision::Mixed ? kDirectMixedCost
                                                                  : kDirectDoubleCost);
        std::printf("| %s | %.0f | %ld | %d | %.3f | %.3e | %.1f%% |\n", precision_name(prec), ni,
                    static_cast<long>(pos.cols()), engine.last_splits(), t * 1e3, rate, 100 * rate / limit);
        std::fflush(stdout);
    };
    const auto precisions = split_list(r.precision);
    for (const auto& pname : precisions) {
        const Precision prec = precision_by_name(pname);
        DirectGpuEngine engine(GravityParams{1.0, eps}, prec);
        for (int e : parse_exponent_range(r.sizes, "sizes")) {
            Eigen::Matrix3Xd pos;
            Eigen::VectorXd mass;
            uniform_cube(std::size_t{1} << e, pos, mass, 42);
            run(engine, pos, mass, nullptr, prec);
        }
    }
    const int sources_exp = r.sources;
    Eigen::Matrix3Xd pos;
    Eigen::VectorXd mass;
    uniform_cube(std::size_t{1} << sources_exp, pos, mass, 43);
    for (const auto& pname : precisions) {
        const Precision prec = precision_by_name(pname);
        DirectGpuEngine engine(GravityParams{1.0, eps}, prec);
        for (int e : parse_exponent_range(r.active, "active")) {
            std::vector<std::int32_t> active(std::size_t{1} << e);
            std::mt19937 rng(static_cast<unsigned>(e));
            std::uniform_int_distribution<std::int32_t> pick(0, static_cast<std::int32_t>(pos.cols()) - 1);
            for (auto& a : active) a = pick(rng);
            run(engine, pos, mass, &active, prec);
        }
    }
    return 0;
}
// Hermite kernel (prediction + acc/jerk/pot + reduction) rates: N_i = N_j = 2^sizes, and 2^active
// targets against 2^sources, in mixed and double precision; and the 6th-order (snap) kernel in
// double, labelled "double+snap".
int bench_hermite(const BenchConfig& r)
{
    const int repeat = std::max(1, r.repeat);
    const double eps = r.eps.value_or(0.01);
    const DeviceSummary dev = describe_device();
    print_kernel_limits(dev, {kHermiteMixedCost, kHermiteDoubleCost, kSnapDoubleCost});
    print_loop_ceilings(dev, measure_hermite_loop_ceilings(), kHermiteMixedCost);
    std::printf("Hermite kernel: on-device prediction of all j, acc + jerk + pot of the active i, j-split reduction; "
                "uniform cube, random masses, eps = %g; median of %d after one warm-up (CUDA events)\n\n",
                eps, repeat);
    std::printf("| precision | N_i | N_j | splits | kernel ms | interactions/s | of its limit |\n"
                "|---|---|---|---|---|---|---|\n");
    auto run = [&](Precision prec, std::size_t n, std::size_t active_count, bool snap = false) {
        Eigen::Matrix3Xd pos;
        Eigen::VectorXd mass;
        uniform_cube(n, pos, mass, 44);
        HermiteState st;
        st.x = pos;
        st.v = Eigen::Matrix3Xd::Zero(3, pos.cols());
        st.a = st.v;
        st.j = st.v;
        st.t = Eigen::VectorXd::Zero(mass.size());
        st.mass = mass;
        if (snap) { // a 6th-order state: the engine predicts to 5th order and returns the snap
            st.s = st.v;
            st.c = st.v;
        }
        HermiteGpuEngine engine(GravityParams{1.0, eps}, prec);
        engine.set_state(st);
        std::vector<std::int32_t> active(active_count);
        for (std::size_t k = 0; k < active_count; ++k) active[k] = static_cast<std::int32_t>((k * 7919) % n);
        HermiteForces f;
        std::vector<double> times;
        for (int k = 0; k <= repeat; ++k) {
            engine.evaluate(0.0, active, f);
            if (k > 0) times.push_back(engine.last_kernel_seconds());
        }
        std::sort(times.begin(), times.end());
        const double t = times[times.size() / 2];
        const double rate = static_cast<double>(active_count) * static_cast<double>(n) / t;
        const double limit = dev.limit(snap                       ? kSnapDoubleCost
                                       : prec == Precision::Mixed ? kHermiteMixedCost
                                                                  : kHermiteDoubleCost);
        std::printf("| %s%s | %zu | %zu | %d | %.3f | %.3e | %.1f%% |\n", precision_name(prec), snap ? "+snap" : "",
                    active_count, n, engine.last_splits(), 1e3 * t, rate, 100 * rate / limit);
        std::fflush(stdout);
    };
    for (const auto& pname : split_list(r.precision)) {
        const Precision prec = precision_by_name(pname);
        if (prec == Precision::Float) continue;
        for (int e : parse_exponent_range(r.sizes, "sizes")) run(prec, std::size_t{1} << e, std::size_t{1} << e);
        for (int e : parse_exponent_range(r.active, "active"))
            run(prec, std::size_t{1} << r.sources, std::size_t{1} << e);
        if (prec != Precision::Double) continue;
        for (int e : parse_exponent_range(r.sizes, "sizes")) run(prec, std::size_t{1} << e, std::size_t{1} << e, true);
        for (int e : parse_exponent_range(r.active, "active"))
            run(prec, std::size_t{1} << r.sources, std::size_t{1} << e, true);
    }
    return 0;
}
} // namespace

int bench_gpu(const std::string& what, const BenchConfig& r)
{
    if (!gpu_available()) throw std::runtime_error("grove bench " + what + " needs a CUDA GPU and none is visible");
    if (what == "hermite") return bench_hermite(r);
    return what == "tree" ? bench_tree(r) : bench_direct(r);
}

} // namespace grove
