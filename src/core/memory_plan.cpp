#include "core/memory_plan.hpp"

#include <cstdio>
#include <limits>
#include <stdexcept>

#include "core/memory_check.hpp"

namespace grove {

// Peak resident memory per particle, from `/usr/bin/time -f %M` of each command at 2*10^5 and
// 10^6 Plummer particles on the 2-core build machine (the slope between them), rounded up:
// `grove ic` 105 B, `grove forces` 671 (tree-cpu) and 140 (direct-cpu), `grove accuracy` 676,
// `grove run` 937 (tree-cpu leapfrog, two steps and their snapshots). The GPU engines' host side
// holds the same tree and particle arrays and pinned copies of them; they take the CPU engines'
// figures with room for the copies. The Hermite integrators keep jerk (and snap, crackle) and
// block-step schedules besides.
std::uint64_t planned_bytes_per_particle(Workload job, const std::string& engine, const std::string& integrator,
                                         bool resident)
{
    const bool tree = engine.find("tree") != std::string::npos;
    const bool gpu = engine.find("gpu") != std::string::npos;
    switch (job) {
    case Workload::make_model:
        return 120;
    case Workload::read:
        return 160;
    case Workload::forces:
        return tree ? (gpu ? 760 : 700) : (gpu ? 200 : 160);
    case Workload::accuracy:
        return gpu ? 760 : 700;
    case Workload::run:
        if (integrator != "leapfrog") return 800;
        // tree-gpu: `grove run` of 2^22 and 2^24 Plummer particles peaked at 237 and 195 bytes per
        // particle (resident set sampled every 50 ms on the GPU host, snapshots and checkpoint
        // included). Its host pipeline (--resident=false, or under MPI) keeps a tree and its
        // copies on the host: the earlier plan, from `grove bench step`'s 593-606 at 2^22 to 2^24
        // when the resident steps still started on that pipeline.
        if (tree && gpu) return resident ? 300 : 640;
        return tree ? 960 : 400;
    }
    return 0;
}

namespace {

// The least room for interaction lists that a tree engine is planned with: batches smaller than
// this would run at a fraction of the GPU's speed.
constexpr std::uint64_t kLeastListBytes = std::uint64_t{256} << 20;

std::string refusal(const std::string& what, const char* memory, std::size_t n, std::uint64_t per, std::uint64_t fixed,
                    std::uint64_t room)
{
    const double bytes = static_cast<double>(n) * static_cast<double>(per) + static_cast<double>(fixed);
    const std::uint64_t largest = room > fixed ? (room - fixed) / per : 0;
    char text[320];
    std::snprintf(text, sizeof text,
                  " needs about %.3g GB of %s for %zu particles (%llu bytes each%s); %.3g GB can be used there, "
                  "so the largest N that fits is about %llu",
                  bytes * 1e-9, memory, n, static_cast<unsigned long long>(per),
                  fixed > 0 ? ", and room for the interaction lists" : "", static_cast<double>(room) * 1e-9,
                  static_cast<unsigned long long>(largest));
    return what + text;
}

} // namespace

std::uint64_t planned_device_bytes_per_particle(Workload job, const std::string& engine)
{
    if (engine.find("gpu") == std::string::npos) return 0;
    if (engine.find("tree") == std::string::npos) return 64; // direct-gpu: positions, masses, results
    // tree-gpu: measured with `grove bench step` (device memory line) on an H100: 210-220 bytes
    // for resident steps from 2^20 to 2^24 particles, and a potentials buffer of 16 at outputs.
    return job == Workload::run ? 260 : 200;
}

void check_device_memory_plan(Workload job, std::size_t n, const std::string& what, const std::string& engine,
                              std::uint64_t room)
{
    const std::uint64_t per = planned_device_bytes_per_particle(job, engine);
    if (room == 0 || per == 0) return;
    const std::uint64_t fixed = engine.find("tree") != std::string::npos ? kLeastListBytes : 0;
    const bool too_many = n > (std::numeric_limits<std::uint64_t>::max() - fixed) / per;
    if (!too_many && n * per + fixed <= room) return;
    throw std::runtime_error(refusal(what, "GPU memory", n, per, fixed, room));
}

void check_memory_plan(Workload job, std::size_t n, const std::string& what, const std::string& engine,
                       const std::string& integrator, bool resident)
{
    const std::uint64_t per = planned_bytes_per_particle(job, engine, integrator, resident);
    const std::uint64_t room = usable_memory_bytes();
    // Counts past 2^64 / per would wrap the product: such a job never fits.
    const bool too_many = n > std::numeric_limits<std::uint64_t>::max() / per;
    const std::uint64_t bytes = too_many ? std::numeric_limits<std::uint64_t>::max() : n * per;
    if (room == 0 || bytes <= room) return;
    char text[256];
    std::snprintf(text, sizeof text,
                  " needs about %.3g GB for %zu particles (%llu bytes each); %.3g GB can be used here, "
                  "so the largest N that fits is about %llu",
                  static_cast<double>(bytes) * 1e-9, n, static_cast<unsigned long long>(per),
                  static_cast<double>(room) * 1e-9, static_cast<unsigned long long>(room / per));
    throw std::runtime_error(what + text);
}

} // namespace grove
