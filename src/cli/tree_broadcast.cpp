#include "cli/tree_broadcast.hpp"

#include <cstdint>

namespace grove {

namespace {

template <class Vector> void broadcast_vector(Vector& v, std::size_t size, const Communicator& comm, int root)
{
    v.resize(size);
    if (size) comm.broadcast(v.data(), size * sizeof(v[0]), root);
}

} // namespace

void broadcast_tree(Octree& tree, const Communicator& comm, int root)
{
    if (comm.size() == 1) return;
    std::uint64_t counts[3] = {tree.particles.size(), tree.next.size(), tree.groups.size()};
    comm.broadcast(counts, sizeof counts, root);
    for_each_array(tree, [&](auto& array, const TreeArrayInfo& info) {
        if (!info.per_theta) broadcast_vector(array, counts[static_cast<int>(info.extent)], comm, root);
    });
    broadcast_vector(tree.keys, counts[0], comm, root);
    broadcast_vector(tree.cell_centre, counts[1], comm, root);
    comm.broadcast(&tree.frame, sizeof tree.frame, root);
}

} // namespace grove
