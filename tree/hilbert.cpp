#include "tree/hilbert.hpp"

#include <map>
#include <stdexcept>

namespace grove {

namespace {

constexpr int kLevels = kMortonBitsPerAxis;

// A cell reached by a path of octants from the root: its corner's coordinates and its depth.
struct Cell {
    std::uint32_t x = 0, y = 0, z = 0;
    int depth = 0;
    Cell child(unsigned octant) const
    {
        const int shift = kLevels - 1 - depth;
        return {x | (octant & 1u) << shift, y | (octant >> 1 & 1u) << shift, z | (octant >> 2 & 1u) << shift,
                depth + 1};
    }
    // The three bits the key gives the level below the cell, at its child `octant`.
    unsigned digit(unsigned octant) const
    {
        const Cell c = child(octant);
        return static_cast<unsigned>(hilbert_key_by_transposition(c.x, c.y, c.z) >> 3 * (kLevels - 1 - depth)) & 7u;
    }
};

// How the curve runs through a cell's three levels below it: its key bits at each of their 512
// cells. Cells of the same state (the whole curve turned and mirrored the same way) have the same.
std::vector<std::uint16_t> signature(const Cell& cell)
{
    std::vector<std::uint16_t> s;
    for (unsigned a = 0; a < 8; ++a)
        for (unsigned b = 0; b < 8; ++b)
            for (unsigned c = 0; c < 8; ++c) {
                const Cell deep = cell.child(a).child(b).child(c);
                const std::uint64_t key = hilbert_key_by_transposition(deep.x, deep.y, deep.z);
                s.push_back(static_cast<std::uint16_t>(key >> 3 * (kLevels - 3 - cell.depth) & 511u));
            }
    return s;
}

} // namespace

HilbertTable::HilbertTable()
{
    // Breadth first from the root: each new signature a new state, until no cell shows one.
    std::map<std::vector<std::uint16_t>, unsigned> known;
    std::vector<Cell> first; // a cell of each state
    known.emplace(signature(Cell{}), 0);
    first.push_back(Cell{});
    for (std::size_t s = 0; s < first.size(); ++s) {
        if (first[s].depth + 3 > kLevels)
            throw std::logic_error("HilbertTable: states still appear at the deepest levels");
        steps_.resize(8 * first.size());
        for (unsigned octant = 0; octant < 8; ++octant) {
            const Cell child = first[s].child(octant);
            const auto found = known.emplace(signature(child), static_cast<unsigned>(first.size()));
            if (found.second) {
                first.push_back(child);
                steps_.resize(8 * first.size());
            }
            if (found.first->second > 31) throw std::logic_error("HilbertTable: more than 32 states");
            steps_[8 * s + octant] = static_cast<std::uint8_t>(first[s].digit(octant) | found.first->second << 3);
        }
    }
    // Three levels at a time: the steps of the highest octant, then of the next two from the states
    // reached.
    triples_.resize(512 * first.size());
    for (std::size_t s = 0; s < first.size(); ++s)
        for (unsigned octants = 0; octants < 512; ++octants) {
            const std::uint8_t a = steps_[8 * s + (octants >> 6)], b = steps_[8 * (a >> 3) + (octants >> 3 & 7u)],
                               c = steps_[8 * (b >> 3) + (octants & 7u)];
            triples_[512 * s + octants] =
                static_cast<std::uint16_t>((a & 7u) << 6 | (b & 7u) << 3 | (c & 7u) | (c >> 3) << 9);
        }
}

std::uint64_t hilbert_key(std::uint32_t ix, std::uint32_t iy, std::uint32_t iz)
{
    static const HilbertTable table;
    return table.key(ix, iy, iz);
}

} // namespace grove
