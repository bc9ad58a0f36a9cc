// The memory a job will hold at its peak for N particles, planned before anything large is
// allocated and checked against what this process may use (the smaller of the system's available
// memory and its cgroup's room), so that a job too large is refused at once with the numbers and
// the largest N that fits, not after minutes of work or by the kernel's OOM killer. The command
// line and the Python module plan the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace grove {

enum class Workload {
    make_model, // grove ic: the model, its sampling arrays, the writer's gathers
    read,       // reading a snapshot: the particle set, its forces and one dataset's buffer
    forces,     // grove forces: read, build, evaluate, write
    accuracy,   // grove accuracy: read, one tree, the direct reference, the sweep
    run,        // grove run, grove bench step: the particles, the engine's trees, snapshot copies
};

// Host bytes per particle at the job's peak. engine: a registered engine's name ("tree-cpu",
// "direct-gpu", ...; "tree" and "direct" too); integrator: "leapfrog" or a Hermite one for runs;
// resident: a GPU tree run keeps the particles on its device between outputs (tree-gpu's resident
// steps), else its host pipeline holds a tree and copies on the host.
std::uint64_t planned_bytes_per_particle(Workload job, const std::string& engine = "",
                                         const std::string& integrator = "leapfrog", bool resident = true);

// Throws std::runtime_error "<what> needs about X GB for N particles; ... Y GB can be used here (the
// largest N that fits is M)" when the plan does not fit. Does nothing where the room is unknown.
void check_memory_plan(Workload job, std::size_t n, const std::string& what, const std::string& engine = "",
                       const std::string& integrator = "leapfrog", bool resident = true);

// Device bytes per particle that a GPU engine holds besides its interaction lists (which tree-gpu
// fits into what is left, in batches): 0 for an engine without a device. job: Workload::run for a
// leapfrog's resident steps, anything else for forces evaluated once.
std::uint64_t planned_device_bytes_per_particle(Workload job, const std::string& engine);

// Throws std::runtime_error "<what> needs about X GB of GPU memory for N particles ...; Y GB can be
// used there (the largest N that fits is M)" when N particles and the least list room do not fit
// `room` bytes (--gpu-memory, or what the device has free). Does nothing where room is 0 or the
// engine has no device.
void check_device_memory_plan(Workload job, std::size_t n, const std::string& what, const std::string& engine,
                              std::uint64_t room);

} // namespace grove
