// An integrator's state beyond the particles, as a list of named per-particle arrays and counters
// (REBOUND's field-list idea): a checkpoint stores whatever the list holds, so writing and
// reading one needs no code that knows which integrator made it.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

namespace grove {

struct StateField {
    std::string name;
    Eigen::MatrixXd values; // rows x N, columns in the particles' memory order
};

struct IntegratorState {
    std::vector<StateField> fields;
    std::vector<std::pair<std::string, long long>> counters;

    const Eigen::MatrixXd& field(const std::string& name) const
    {
        for (const auto& f : fields)
            if (f.name == name) return f.values;
        throw std::runtime_error("checkpoint: the integrator state has no field '" + name + "'");
    }
    long long counter(const std::string& name) const
    {
        for (const auto& [key, value] : counters)
            if (key == name) return value;
        throw std::runtime_error("checkpoint: the integrator state has no counter '" + name + "'");
    }
};

} // namespace grove
