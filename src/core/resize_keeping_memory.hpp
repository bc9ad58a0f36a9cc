// Resizing a particle array without fresh pages. Eigen's resize() frees and allocates anew
// whenever the size changes, and an allocation of many megabytes comes from the kernel as pages
// that fault in (zeroed) one by one at first touch: at 10^7 particles a rank, such faults were
// much of a step's host work on domains (bench/results/several-gpus.md). Where the particle count
// changes a little at every step (a rank's domain), conservativeResize() reallocates instead,
// which keeps the pages the array has (glibc moves a large block with mremap) and faults in only
// what it adds.
#pragma once

#include <Eigen/Core>

namespace grove {

// rows x cols (a 3 x N array) or n (a vector); the values are left as they are where they remain.
inline void resize_keeping_memory(Eigen::Matrix3Xd& a, Eigen::Index cols)
{
    if (a.rows() == 3 && a.cols() == cols) return;
    a.conservativeResize(3, cols);
}

inline void resize_keeping_memory(Eigen::VectorXd& a, Eigen::Index n)
{
    if (a.size() == n) return;
    a.conservativeResize(n);
}

} // namespace grove
