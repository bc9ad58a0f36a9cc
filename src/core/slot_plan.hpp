// Where the particles of a set go when some leave it and others arrive, in place: the arrivals
// fill the leavers' slots below the new count first and follow the last particle where more
// arrive than leave; where fewer arrive, the last particles that stay move down into the slots
// still empty. Only the particles that move are copied, whoever holds them: a rank's arrays on the
// host (parallel/domains.hpp: exchange_in_place) or its store on the GPU, where each step's
// crossers leave and arrive.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace grove {

struct SlotPlan {
    std::size_t count = 0;                                  // the particles after
    std::vector<std::size_t> arrival;                       // arrival k's slot
    std::vector<std::pair<std::size_t, std::size_t>> moves; // (from, to): stayers moved down
};

// For `n` particles whose slots `leave` (ascending, distinct, below n) leave and `arriving` come.
// Throws std::invalid_argument for slots that are not so.
SlotPlan plan_slots(std::size_t n, const std::vector<std::size_t>& leave, std::size_t arriving);

} // namespace grove
