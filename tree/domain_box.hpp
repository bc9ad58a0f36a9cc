// A domain's description to the other ranks (tree/locally_essential.hpp): boxes in a tree of their
// own, and the test whether any of them would open a cell. Compiles for host and device, so that a
// rank's GPU makes its LETs (gpu/let_maker.cu) by the decisions the host's walk makes.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "tree/mac.hpp"
#include "tree/tree_arrays.hpp"

namespace grove {

// A box of the domain's description: the bounding box of a cell's particles, or (above those
// cells) the union of its children's boxes, in pre-order with skip indices like the tree's.
struct DomainBox {
    Group<double> box;
    std::int32_t next = 0;             // index after this box's subtree
    std::int32_t bounds_particles = 0; // 1: a cell's particles' box; 0: its children's union
    double mac_scale = 0;              // the relative criterion's largest group scale within it
};

// Whether some particle box of the `count` boxes would open a node (its centre of mass, opening
// radius and, for the relative criterion, r_rel2; 0 for the geometric one): a walk of the boxes
// that passes over every box far enough away together with those inside it (whose scales are at
// most its).
HOST_DEVICE inline bool must_open_for(const DomainBox* boxes, std::int32_t count, const Vec4<double>& com,
                                      double r_open2, double r_rel2)
{
    for (std::int32_t t = 0; t < count;) {
        const DomainBox& b = boxes[t];
        if (!must_open_relative(b.box, com, r_open2, r_rel2, b.mac_scale))
            t = b.next; // nor any box within it
        else if (b.bounds_particles)
            return true;
        else
            ++t;
    }
    return false;
}

} // namespace grove
