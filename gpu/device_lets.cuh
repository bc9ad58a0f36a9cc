// Locally essential trees on a rank's GPU (tree/locally_essential.hpp, docs/parallel-design.md):
// the domain's boxes from the positions there, each other domain's LET made from the tree there
// (the host's walk's decisions, node by node, in the same wire form), and the received LETs
// appended to the float tree the walk reads, so that the walk takes them with the rank's own
// tree. The particles never leave the device; only the boxes and the LETs cross the bus. Private
// to gpu/ (the resident step, gpu/tree_resident.cu, and the [gpu] tests).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/opening_criterion.hpp"
#include "gpu/device_buffer.cuh"
#include "tree/domain_box.hpp"
#include "tree/let_wire.hpp"
#include "tree/locally_essential.hpp"
#include "tree/octree.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

// A tree on the device in double: its structure, its moments and its particles in its order.
struct DeviceLetSource {
    int nodes = 0;
    const std::int32_t* next = nullptr;
    const std::uint8_t* is_leaf = nullptr;
    const ParticleRange* range = nullptr;
    const Vec4<double>* com_mass = nullptr;
    const Quadrupole<double>* quad = nullptr;
    const double* size = nullptr;
    const double* com_offset = nullptr;
    const Vec4<double>* particles = nullptr;
};

class DeviceLets {
  public:
    // This domain's boxes (domain_boxes, without group scales): their structure from `structure`
    // (the host's copy of the tree's structure), their particles' bounds from the device. Waits
    // for the stream.
    std::vector<DomainBox> boxes(const Octree& structure, const Vec4<double>* particles, cudaStream_t stream);
    // The LET of `source` for `boxes` under `criterion`, in the compact wire form relative to
    // `origin` (make_let's bytes for the same tree and moments), written where room(its length)
    // says: pinned memory MPI sends from, or device memory a peer on this host reads. Returns its
    // length and sets `header` to its header. Waits for the stream.
    using Room = std::function<char*(std::size_t bytes)>;
    std::size_t make(const DeviceLetSource& source, const std::vector<DomainBox>& boxes,
                     const OpeningCriterion& criterion, const Vec4<double>& origin, const Room& room, LetHeader& header,
                     cudaStream_t stream);
    // The same into a pinned buffer, from its start.
    std::size_t make(const DeviceLetSource& source, const std::vector<DomainBox>& boxes,
                     const OpeningCriterion& criterion, const Vec4<double>& origin, gpu::PinnedBuffer<char>& out,
                     cudaStream_t stream);
    // The compact LETs `lets` (their headers checked: let_bytes_of_header) appended to the float
    // tree `tree` of `nodes` nodes and `particles` particles, whose origin is the centre of mass
    // `*root_com` (on the device): nodes after its nodes, particles after its particles, as
    // append_let and the float tree's packing make them on the host. Their bytes may lie in pinned
    // memory or in a peer's device memory mapped here, left alone until the stream is done. Their
    // nodes are checked on the device (let_node_fault) before the call returns: throws
    // std::runtime_error for a malformed one, and the tree then holds its own nodes only. The
    // arrays must have room for all.
    void append(const std::vector<LetBytes>& lets, const TreeArrays<float, Pointer>& tree, int nodes, int particles,
                const Vec4<double>* root_com, cudaStream_t stream);

  private:
    gpu::DeviceBuffer<ParticleRange> ranges_;
    gpu::DeviceBuffer<double> bounds_;
    gpu::DeviceBuffer<DomainBox> boxes_;
    gpu::DeviceBuffer<int> opened_, cover_, node_index_, particle_first_;
    gpu::DeviceBuffer<unsigned char> scan_temp_;
    gpu::DeviceBuffer<CompactLetNode> nodes_;
    gpu::DeviceBuffer<float> particles_;
    gpu::DeviceBuffer<char> staged_;
    gpu::DeviceBuffer<int> fault_;
    gpu::PinnedBuffer<int> h_totals_;
    gpu::PinnedBuffer<LetHeader> h_header_;
};

} // namespace grove
