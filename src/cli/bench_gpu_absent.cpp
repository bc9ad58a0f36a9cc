// `grove bench direct|hermite|tree` in a build without the GPU engines.
#include <stdexcept>

#include "cli/bench_gpu.hpp"

namespace grove {

int bench_gpu(const std::string& what, const BenchConfig&)
{
    throw std::runtime_error("grove bench " + what +
                             " needs the GPU engines; this build has none (built without nvcc)");
}

} // namespace grove
