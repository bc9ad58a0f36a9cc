// A LET's wire form (tree/locally_essential.hpp: LetBytes reads it, make_let and the GPU's
// gpu/let_maker.cu write it): a header, the nodes, the particles, then where softened by type each
// node's softening and each particle's type. Plain structs, copied byte for byte on one machine
// kind (the ranks of a run share their byte order).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/host_device.hpp"

namespace grove {

struct LetHeader {
    std::uint64_t nodes, particles;
    std::uint64_t compact; // 0 or 1
    std::uint64_t by_type; // 0 or 1
    double origin[3];
};

// A node in the compact form (LetFormat): its centre of mass and structure exact, the rest in float.
struct CompactLetNode {
    double com[3];
    float mass;
    float quad[6]; // xx, xy, xz, yy, yz, trace
    float size, com_offset;
    std::int32_t next, first;
    std::int32_t leaf_count; // a leaf's particle count (0 for a terminal cell); -1: not a leaf
};
static_assert(sizeof(CompactLetNode) == 72, "the compact node's wire size");

// Where a LET's blocks start, in bytes from its start; `end`, its length.
struct LetLayout {
    std::size_t nodes, particles, softening, types, end;
};

// A node's bytes: compact, or the full LetNode's 128.
inline std::size_t let_node_bytes(bool compact)
{
    return compact ? sizeof(CompactLetNode) : 128;
}
inline std::size_t let_particle_bytes(bool compact)
{
    return compact ? 4 * sizeof(float) : 4 * sizeof(double);
}
// Softened by type: each node's mean h and opening radius^2, in the nodes' precision.
inline std::size_t let_node_softening_bytes(bool compact)
{
    return compact ? 2 * sizeof(float) : 2 * sizeof(double);
}

inline LetLayout let_layout(std::size_t nodes, std::size_t particles, bool compact, bool by_type)
{
    LetLayout l{};
    l.nodes = sizeof(LetHeader);
    l.particles = l.nodes + nodes * let_node_bytes(compact);
    l.softening = l.particles + particles * let_particle_bytes(compact);
    l.types = l.softening + (by_type ? nodes * let_node_softening_bytes(compact) : 0);
    l.end = l.types + (by_type ? particles : 0);
    return l;
}

// What is wrong with a received LET, the worst found: its node structure (checked node by node,
// on the host or on the device where the LET landed), its softening and particle types.
enum LetFault : int { kLetSound = 0, kLetBadSkip, kLetBadRange, kLetBadSoftening, kLetBadType };

inline const char* let_fault_text(int fault)
{
    switch (fault) {
    case kLetBadSkip:
        return "a skip index out of bounds";
    case kLetBadRange:
        return "a particle range out of bounds";
    case kLetBadSoftening:
        return "a cell's softening negative or not finite";
    case kLetBadType:
        return "a particle type out of range";
    default:
        return "sound";
    }
}

// Node k of a LET of `nodes` nodes and `particles` particles, by its structure: its subtree ends
// after itself and within the LET (a leaf's at once), and a leaf's particles lie within the LET's
// (another node has none), so that a walk over it stays inside the arrays.
HOST_DEVICE inline int let_node_fault(std::int64_t k, std::int64_t nodes, std::int64_t particles, std::int32_t next,
                                      bool is_leaf, std::int32_t first, std::int32_t count)
{
    if (next <= k || next > nodes || (is_leaf && next != k + 1)) return kLetBadSkip;
    if (first < 0 || count < 0 || first + std::int64_t{count} > particles || (!is_leaf && count != 0))
        return kLetBadRange;
    return kLetSound;
}

} // namespace grove
