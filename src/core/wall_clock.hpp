// Wall-clock timing of phases: one clock and one helper for every library's timers.
#pragma once

#include <chrono>

namespace grove {

using WallClock = std::chrono::steady_clock;

inline double seconds_since(WallClock::time_point start)
{
    return std::chrono::duration<double>(WallClock::now() - start).count();
}

} // namespace grove
