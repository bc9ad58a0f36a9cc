// How engines and the tree builder take particle arrays: views, so that any contiguous storage
// (an Eigen matrix, a C-contiguous numpy (N, 3) array mapped by the Python module) is read in
// place. A non-contiguous argument is copied into a temporary by Eigen.
#pragma once

#include <Eigen/Core>

namespace grove {

using PositionsRef = Eigen::Ref<const Eigen::Matrix3Xd, 0, Eigen::OuterStride<3>>; // 3 x N
using MassesRef = Eigen::Ref<const Eigen::VectorXd>;                               // N

} // namespace grove
