// Where a GRAPE library computes: grove's GPU GRAPE engine when the build has one and a CUDA
// device is visible, else the CPU (the library says so once on stderr, with the reason). The
// variable GROVE_G6_ENGINE / GROVE_G5_ENGINE (cpu | gpu) overrides the choice.
#pragma once

#include <memory>
#include <string>

#include "core/engine_registry.hpp"
#include "core/grape_engine.hpp"

namespace grove::grape {

struct EngineChoice {
    std::unique_ptr<GrapeEngine> engine; // the GPU engine, or null: compute on the CPU
    std::string why_cpu;                 // when null, the reason
};

// variable: the library's engine variable; config: precision and device for the GPU engine.
// Throws std::runtime_error on a bad variable or when the GPU engine cannot start.
EngineChoice choose_gpu_engine(const char* variable, EngineConfig config);

} // namespace grove::grape
