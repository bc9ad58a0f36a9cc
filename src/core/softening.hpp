// Softening by particle type. A galaxy model's components want their own lengths (dark matter
// coarser than stars), so GravityParams::eps_type gives one per GADGET type. A pair (i, j) is
// softened with
//     eps_ij^2 = (eps_i^2 + eps_j^2) / 2,
// the mean of the squares: symmetric, so Newton's third law holds pair by pair, equal to eps^2
// where the two lengths are equal, and a sum of one term per particle. That last property is why
// it was chosen over GADGET's max(eps_i, eps_j): with h = eps^2 / 2 per particle a pair's eps^2 is
// h_i + h_j, and a tree cell can carry the mass-weighted mean of its particles' h, which makes the
// cell's softened expansion exact to first order in the spread of h (the first-order term is
// sum m_j (h_j - h_cell) = 0), as the centre of mass makes the dipole vanish.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/array_views.hpp"
#include "core/force_engine.hpp"

namespace grove {

// Reads "1=0.1,2=0.05" or "halo=0.1,disk=0.05" (types by number or by component name) into
// gravity.eps_type; types not named keep eps. Throws std::invalid_argument naming `option` for a
// malformed list, an unknown type, a type given twice or a length that is negative, not finite or
// whose square overflows.
void parse_softening_types(const std::string& text, GravityParams& gravity, const std::string& option);

// The lengths that differ from eps, as parse_softening_types reads them back ("1=0.1,2=0.05");
// empty for one softening.
std::string softening_types_text(const GravityParams& gravity);

// Each particle's h = eps_i^2 / 2 in the order of `type`; empty when gravity has one softening.
// Throws std::invalid_argument naming `engine` when the softening is per type and the types are
// missing, of another count than n, or out of range.
std::vector<double> half_squared_softening(const GravityParams& gravity, TypesRef type, std::size_t n,
                                           const std::string& engine);

} // namespace grove
