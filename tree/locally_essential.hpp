// Locally essential trees (Salmon & Warren 1994; Bonsai's LET): the part of one domain's tree that
// the groups of another domain need. The receiving domain is described by about a thousand boxes,
// the bounding boxes of the particles of its tree's top cells, in a tree of their own (one box for
// a whole domain would do, but a domain, a range of a space-filling curve, can wrap around its
// neighbours: the box of "everything but the centre" holds the centre).
// The sending domain walks its own tree once under the same criterion (tree/mac.hpp), opening a
// cell when any of the boxes would: a cell that every box accepts is accepted by every group (a
// group's box lies within one of the boxes, so it is at least as far from the cell), and goes as
// a terminal cell; a cell opened goes with its children; an opened leaf with its particles. Under
// the relative criterion each box carries the largest scale (the smallest |a|) of its groups, so
// that what it accepts every one of them accepts too.
//
// The receiver appends each LET to its own tree (append_let). The tree's nodes are in pre-order
// with next[] skip indices, and the walk (tree/walk.hpp) is one index moving forward over all
// nodes, so trees laid one after another form a forest that the unchanged walk and evaluation
// traverse as one: the local groups walk their own tree, then each LET. A terminal cell keeps
// its centre of mass and quadrupole but its size is set to 0, so that no group can open it (its
// opening radius is then 0, and its centre of mass lies outside all the domain's boxes, grown by
// a margin that outweighs float rounding); opened cells keep their size, so each group still
// decides for itself whether it accepts them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/opening_criterion.hpp"
#include "tree/domain_box.hpp"
#include "tree/let_wire.hpp"
#include "tree/octree.hpp"
#include "tree/softening_moments.hpp"

namespace grove {

// One node of a LET, in the receiver's terms.
struct LetNode {
    Vec4<double> com_mass;   // centre of mass, mass
    Quadrupole<double> quad; // about the centre of mass
    double size = 0;         // l; 0 for a terminal cell
    double com_offset = 0;   // delta (tree/mac.hpp)
    std::int32_t next = 0;   // index after the node's subtree, within the LET
    std::int32_t is_leaf = 0;
    std::int32_t first = 0, count = 0; // an opened leaf's particles in the LET's particle array
};

// How a LET travels. In full, every value as the tree holds it, in double (128 bytes a node, 32 a
// particle). Compact, for a receiver that evaluates in float relative to a centre of its own
// (tree-gpu): a node's centre of mass and its structure as they are and its mass, quadrupole, size
// and com offset in float (72 bytes), and each particle in float relative to `origin` (16 bytes),
// which the sender takes at the receiver's centre, so that a particle's rounding is a float ulp of
// its distance from there, as the receiver's own float tree rounds it. A terminal cell's centre
// of mass and its size of 0 are exact in both forms.
struct LetFormat {
    bool compact = false;
    Vec4<double> origin{0, 0, 0, 0};
};

// Softening by type on the sending side (core/softening.hpp): the tree's moments of h
// (make_softening_moments) and its particles' types in the tree's order. A cell opens where its
// spread of h asks (radius2) as well as where the criterion does, as the receiver's own cells do,
// and each node goes with its mean h and that radius (0 for a terminal cell, which every group
// accepted), each particle with its type.
struct LetSoftening {
    const SofteningMoments<double>* moments = nullptr;
    const std::vector<std::uint8_t>* sorted_types = nullptr;
};

// A LET node's softening by type: its particles' mass-weighted mean h and the squared distance
// within which a target opens it for their spread (tree/softening_moments.hpp).
struct LetNodeSoftening {
    double half = 0, radius2 = 0;
};

// One LET in its wire form (make_let writes it): a header (the counts, the form, the origin,
// whether softened by type), the nodes, the particles, and where softened by type each node's
// softening (in the nodes' precision) and each particle's type, read in place. Everything is
// copied out, never pointed at: the bytes need not be aligned.
struct LetBytes {
    const char* data = nullptr;
    std::size_t nodes = 0, particles = 0;
    LetFormat format;
    bool by_type = false;
    LetNode node(std::size_t k) const;
    Vec4<double> particle(std::size_t k) const;
    LetNodeSoftening node_softening(std::size_t k) const; // by_type only
    std::uint8_t particle_type(std::size_t k) const;      // by_type only
};

// The boxes that describe a built tree's domain to the others: the bounding boxes of the particles
// of its largest cells of at most N / count particles (groups and leaves with more whole), and
// the cells above them, each box grown on every side by a margin relative to its size so that a
// terminal cell's centre of mass stays outside every float group box of the receiver
// (tree/float_tree.hpp pads those by a few float ulps). None for a tree without particles.
// `group_scales` (the relative criterion's, one per group of the tree: fill_group_mac_scales),
// where given, sets each box's mac_scale to the largest of its groups'.
std::vector<DomainBox> domain_boxes(const Octree& tree, int count = 1024,
                                    const std::vector<double>* group_scales = nullptr);

// domain_boxes in two halves, for a tree whose particles lie elsewhere (a rank's GPU): the boxes'
// structure from the tree's (its next, is_leaf, range and groups' ranges), with the particle range
// of each box that bounds particles in `ranges` (a range of 0 elsewhere); then, once each such
// box holds its particles' box (particles_box, box_of_bounds), the boxes grown and the unions
// above them made.
std::vector<DomainBox> domain_box_cells(const Octree& tree, int count, std::vector<ParticleRange>& ranges);
void finish_domain_boxes(std::vector<DomainBox>& boxes);

// Appends to `out` the LET of `tree` for the domain described by `boxes` (domain_boxes) under
// `criterion` (theta > 0; alpha > 0 with boxes that carry their scales), in its wire form; its
// lower parts are walked by OpenMP threads and copied into place once. An empty tree, or no
// boxes, gives an empty LET. `softening`, where given, softens it by type.
void make_let(const Octree& tree, const std::vector<DomainBox>& boxes, const OpeningCriterion& criterion,
              std::vector<char>& out, const LetFormat& format = {}, const LetSoftening* softening = nullptr);

// make_let for a rank that makes LETs at every step: the pieces its threads walk and its staging
// keep their memory from one call to the next, where new ones came from the kernel as pages that
// faulted in at every step.
class LetMaker {
  public:
    LetMaker();
    ~LetMaker();
    LetMaker(const LetMaker&) = delete;
    LetMaker& operator=(const LetMaker&) = delete;
    void make(const Octree& tree, const std::vector<DomainBox>& boxes, const OpeningCriterion& criterion,
              std::vector<char>& out, const LetFormat& format = {}, const LetSoftening* softening = nullptr);

  private:
    struct Scratch;
    std::unique_ptr<Scratch> s_;
};

// A LET's bytes, checked: throws std::runtime_error for a buffer that is not one LET (wrong
// length, skip indices or particle ranges out of bounds).
LetBytes let_bytes(const char* data, std::size_t size);
// The same from its header alone, for a LET that lies where the host does not read it (another
// GPU's memory): its counts and form checked against its length, its nodes left to the reader
// (let_node_fault, as the device's append checks them).
LetBytes let_bytes_of_header(const LetHeader& header, const char* data, std::size_t size);

// Room in `forest` for LETs of this many nodes and particles in all, so that appending them one
// after another moves nothing.
void reserve_for_lets(Octree& forest, std::size_t nodes, std::size_t particles);

// Appends a LET to `forest` (a built tree, possibly with LETs appended already): its nodes after
// the forest's, its particles after the forest's, with order[] numbering them on from the
// forest's particle count (they have no caller index: no group covers them, so the evaluation
// writes no force for them). The groups stay the forest's own. Its softening by type goes to
// the forest's appended_half, appended_radius2 and appended_types (NaN and 0 for a LET without).
void append_let(Octree& forest, const LetBytes& let);

} // namespace grove
