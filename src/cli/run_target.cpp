#include "cli/run_target.hpp"

#include <cstdio>
#include <stdexcept>

#include "cli/cli_common.hpp"
#include "engines/engines.hpp"

namespace grove {

ChosenOpening choose_opening(const ParticleSet& p, const IntegratorConfig& ic, const RunTarget& t)
{
    const EngineConfig& e = ic.engine;
    AccuracyOptions o;
    o.mac = parse_mac(e.mac);
    o.theta_max = e.theta_max;
    o.nleaf = e.nleaf;
    o.ncrit = e.ncrit;
    o.eps = e.gravity.eps;
    o.eps_type = e.gravity.eps_type;
    o.G = e.gravity.G;
    o.sample = t.sample;
    o.tree_engine = engines().resolve(e.engine);
    o.direct_engine = engines().resolve("direct");
    o.target = t.target;
    if (o.tree_engine != "tree-cpu" && o.tree_engine != "tree-gpu")
        throw std::runtime_error("--target chooses a tree's theta or alpha; the engine is " + o.tree_engine);
    const AccuracyStudy study = run_accuracy_study(p, o);
    const TargetSearch& s = *study.search;
    ChosenOpening c;
    c.parameter = OpeningCriterion{o.mac}.parameter_name();
    c.value = s.best.value;
    c.error = s.best_error;
    c.interactions = s.best.stats.node_interactions_per_particle + s.best.stats.leaf_interactions_per_particle;
    c.compared = study.targets.size();
    c.evaluations = static_cast<int>(s.probes.size());
    char text[256];
    if (!s.reachable) {
        std::snprintf(text, sizeof text,
                      "--target p%g <= %.3g (%s) is not met at any %s >= %g: there p%g = %.3e on %zu particles "
                      "(float or softening limits, or a sample too small for this percentile)",
                      t.target.percentile, t.target.value, t.target.component.c_str(), c.parameter.c_str(), c.value,
                      t.target.percentile, c.error, c.compared);
        throw std::runtime_error(text);
    }
    return c;
}

std::vector<std::string> with_chosen_opening(const std::vector<std::string>& argv, const ChosenOpening& chosen)
{
    std::vector<std::string> out =
        without_options(argv, {"target", "target-component", "target-sample", "theta", "alpha"});
    char value[32];
    std::snprintf(value, sizeof value, "%.17g", chosen.value);
    out.push_back("--" + chosen.parameter);
    out.push_back(value);
    return out;
}

} // namespace grove
