// An integrator's state beyond the particles, as lists of named per-particle arrays, run-wide
// arrays and counters (REBOUND's field-list idea): a checkpoint stores whatever the lists hold, so
// writing and reading one needs no code that knows which integrator made it.
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

// Values that belong to the run, not to a particle (block steps' enclosed-mass profile).
struct StateArray {
    std::string name;
    std::vector<double> values;
};

struct IntegratorState {
    std::vector<StateField> fields;
    std::vector<StateArray> arrays;
    std::vector<std::pair<std::string, long long>> counters;

    const Eigen::MatrixXd& field(const std::string& name) const
    {
        for (const auto& f : fields)
            if (f.name == name) return f.values;
        throw std::runtime_error("checkpoint: the integrator state has no field '" + name + "'");
    }
    const std::vector<double>& array(const std::string& name) const
    {
        for (const auto& a : arrays)
            if (a.name == name) return a.values;
        throw std::runtime_error("checkpoint: the integrator state has no array '" + name + "'");
    }
    bool has_counter(const std::string& name) const
    {
        for (const auto& entry : counters)
            if (entry.first == name) return true;
        return false;
    }
    long long counter(const std::string& name) const
    {
        for (const auto& [key, value] : counters)
            if (key == name) return value;
        throw std::runtime_error("checkpoint: the integrator state has no counter '" + name + "'");
    }
};

} // namespace grove
