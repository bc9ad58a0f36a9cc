// Groups cut into batches whose interaction lists fit a memory budget. A walk that wrote every
// group's lists before evaluating any held N x (interactions per particle) entries at once, which
// outgrew the device long before the particles did; walking and evaluating batch by batch holds
// one batch's lists. A group's forces do not depend on the batch it is in, so any cut gives the
// same forces. Every batch holds at least one group, even one whose lists alone pass the budget:
// lists are never cut.
#pragma once

#include <cstdint>
#include <vector>

#include "tree/tree_arrays.hpp"

namespace grove {

// The fewest batches of equal group counts (within one) in which `entries_per_group` list entries
// per group (the one-pass walk's room) fit budget_entries.
std::vector<GroupRange> batches_by_room(GroupRange groups, std::int64_t entries_per_group, std::int64_t budget_entries);

// Consecutive runs of groups of about equal list entries, each within budget_entries (a lone
// group may pass it). node_offset[k], leaf_offset[k] (k = 0 ... count): exclusive prefix sums of
// the list lengths of groups first + k, as the walk's count pass and scan give them.
std::vector<GroupRange> batches_by_lengths(GroupRange groups, const std::int64_t* node_offset,
                                           const std::int64_t* leaf_offset, std::int64_t budget_entries);

} // namespace grove
