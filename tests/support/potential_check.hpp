// The potentials a particle set holds against the direct sum's at its positions: what a pause
// within a block step saves must be every particle's where it is, not its last due tick's.
#pragma once

#include <vector>

#include "core/force_errors.hpp"
#include "core/particles.hpp"
#include "tree/direct_cpu.hpp"

namespace grove::test {

// The median and the largest relative error of p.pot against the direct sum (softening g).
inline std::vector<double> potential_error_percentiles(const ParticleSet& p, const GravityParams& g)
{
    Forces direct;
    DirectCpuEngine(g).compute(p.pos, p.mass, p.type, direct);
    return percentiles(relative_errors(p.pot, direct.pot), {50, 100});
}

} // namespace grove::test
