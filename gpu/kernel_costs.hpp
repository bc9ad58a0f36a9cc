// What one interaction costs in the inner loops of the direct-summation and Hermite kernels and
// of the tree engine's list kernels, in instructions by pipe, as bench/kernel_instructions.py
// counts them in the kernels' PTX for sm_90 (a test recounts them in every build with CUDA and
// fails when a kernel changes and this table does not), and the rate limit those counts imply on
// a device. grove bench direct|hermite|tree print each measured rate against its kernel's limit.
// Plain C++: no CUDA.
#pragma once

#include <algorithm>

namespace grove {

struct KernelCost {
    const char* label;    // as the benchmarks name the kernel
    const char* ptx_name; // a part of the kernel's mangled PTX name (the test's key)
    // Instructions per interaction: FP32, FP64, special-function (rsqrt), conversions from and to
    // 64-bit floating types, and the rest (loads, moves, branches).
    double fp32, fp64, mufu, conv64, other;

    // Interactions per second that `sms` SMs at `clock_ghz` can at most compute: per SM and clock
    // the FP32 pipes take fp32_lanes, the FP64 pipes fp64_lanes, the special-function units and
    // the 64-bit conversions 16 each (compute capability 9.0), and the four schedulers issue 128
    // lanes of instructions of any kind; the tightest bound wins.
    double limit(int sms, double clock_ghz, int fp32_lanes, int fp64_lanes) const
    {
        const double cycles = std::max({fp32 / fp32_lanes, fp64 / fp64_lanes, mufu / 16.0, conv64 / 16.0,
                                        (fp32 + fp64 + mufu + conv64 + other) / 128.0});
        return sms * clock_ghz * 1e9 / cycles;
    }
};

// The unguarded loops (softening > 0); with eps = 0 the kernels add a test for the particle itself.
inline constexpr KernelCost kDirectFloatCost{
    "float acc+pot", "direct_acc_pot_kernelINS0_11FloatPolicyELb0ELb0E", 13.0, 0.0, 1.0, 0.0, 0.4};
inline constexpr KernelCost kDirectMixedCost{
    "mixed acc+pot", "direct_acc_pot_kernelINS0_11MixedPolicyELb0ELb0E", 19.0, 0.0, 1.0, 0.0, 0.7};
inline constexpr KernelCost kDirectDoubleCost{
    "double acc+pot", "direct_acc_pot_kernelINS0_12DoublePolicyELb0ELb0E", 0.0, 18.0, 1.0, 0.0, 1.4};
inline constexpr KernelCost kHermiteMixedCost{
    "mixed acc+jerk+pot", "hermite_kernelINS_3gpu15MixedJerkPolicyELi4ELb0ELb0E", 33.0, 0.0, 1.0, 0.0, 1.0};
inline constexpr KernelCost kHermiteDoubleCost{
    "double acc+jerk+pot", "hermite_kernelINS_3gpu16DoubleJerkPolicyELi2ELb0ELb0E", 0.0, 32.0, 1.0, 0.0, 2.6};
inline constexpr KernelCost kSnapDoubleCost{
    "double acc+jerk+snap+pot", "snap_kernelILb0ELb0E", 0.0, 74.0, 1.0, 0.0, 18.0};
// The tree's list kernels (gpu/evaluate.cu), per particle-node and particle-particle interaction,
// in their best loop: five targets per lane, no test for a target's own index. The PTX's FP32
// count includes moves between registers that ptxas folds (the node loop issued 33 FP32 per
// interaction in SASS when last counted, before the quadrupole pair lost a multiply), so the
// node limit is a low one.
inline constexpr KernelCost kTreeNodeCost{
    "tree node lists", "evaluate_kernelILb1ELb1ELb0ELb0E", 39.0, 0.0, 1.0, 0.0, 3.0};
inline constexpr KernelCost kTreeLeafCost{
    "tree leaf lists", "evaluate_kernelILb0ELb1ELb0ELb0E", 13.0, 0.0, 1.0, 0.0, 1.0};

} // namespace grove
