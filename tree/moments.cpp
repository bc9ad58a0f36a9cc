#include "tree/moments.hpp"

#include <memory>
#include <vector>

#include "tree/node_moments.hpp"

namespace grove {

MomentArrays moment_arrays(Octree& tree, NodeBox* boxes)
{
    MomentArrays a;
    a.particles = tree.particles.data();
    a.next = tree.next.data();
    a.is_leaf = tree.is_leaf.data();
    a.range = tree.range.data();
    a.cell_centre = tree.cell_centre.data();
    a.size = tree.size.data();
    a.com_mass = tree.com_mass.data();
    a.quad = tree.quad.data();
    a.com_offset = tree.com_offset.data();
    a.boxes = boxes;
    return a;
}

// Moments bottom-up: in pre-order every child follows its parent, so each subtree's internal nodes
// are finished in reverse index order by one thread, after its leaves; then the top nodes in
// reverse segment order.
void compute_moments(Octree& tree, const std::vector<Segment>& segments)
{
    // Scratch kept between calls and never zeroed: every entry is written before it is read, and
    // a vector's resize would zero nodes x 48 bytes on one thread.
    static thread_local std::unique_ptr<NodeBox[]> boxes;
    static thread_local std::size_t capacity = 0;
    if (capacity < tree.next.size()) {
        boxes.reset();
        boxes.reset(new NodeBox[tree.next.size()]);
        capacity = tree.next.size();
    }
    const auto nodes = static_cast<std::size_t>(tree.num_nodes());
    tree.com_mass.resize(nodes);
    tree.quad.resize(nodes);
    tree.com_offset.resize(nodes);
    const MomentArrays arrays = moment_arrays(tree, boxes.get());
    const auto num_segments = static_cast<std::int64_t>(segments.size());
#pragma omp parallel for schedule(dynamic, 1)
    for (std::int64_t s = 0; s < num_segments; ++s) {
        const Segment& seg = segments[static_cast<std::size_t>(s)];
        if (seg.top) continue;
        // Leaves first, in particle order (the prefetcher follows it), then internal nodes.
        const std::int32_t last = seg.first_node + seg.num_nodes - 1;
        for (std::int32_t i = seg.first_node; i <= last; ++i)
            if (tree.is_leaf[i]) finish_node(arrays, i);
        for (std::int32_t i = last; i >= seg.first_node; --i)
            if (!tree.is_leaf[i]) finish_node(arrays, i);
    }
    for (auto s = segments.rbegin(); s != segments.rend(); ++s)
        if (s->top) finish_node(arrays, s->first_node);
}

} // namespace grove
