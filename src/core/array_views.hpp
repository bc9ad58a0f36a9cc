// How engines and the tree builder take particle arrays: views, so that any contiguous storage
// (an Eigen matrix, a C-contiguous numpy (N, 3) array mapped by the Python module) is read in
// place. A non-contiguous argument is copied into a temporary by Eigen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

namespace grove {

using PositionsRef = Eigen::Ref<const Eigen::Matrix3Xd, 0, Eigen::OuterStride<3>>; // 3 x N
using MassesRef = Eigen::Ref<const Eigen::VectorXd>;                               // N

// N particle types (GADGET's 0..5), read in place; empty where the caller has none to give.
class TypesRef {
  public:
    TypesRef() = default;
    TypesRef(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
    TypesRef(const std::vector<std::uint8_t>& types) : data_(types.data()), size_(types.size()) {}
    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::uint8_t operator[](std::size_t i) const { return data_[i]; }

  private:
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

} // namespace grove
