#include "studies/accuracy_study.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "core/force_errors.hpp"
#include "core/hdf5_file.hpp"
#include "core/softening.hpp"
#include "core/tree_engine.hpp"
#include "core/wall_clock.hpp"
#include "engines/engines.hpp"
#include "parallel/distributed_engine.hpp"
#include "parallel/domain_tree.hpp"
#include "tree/build.hpp"
#include "tree/mac.hpp"
#include "tree/tree_sweep.hpp"

namespace grove {

namespace {

} // namespace

std::vector<double> parse_sweep(const std::string& text, MacKind mac)
{
    const std::string option = mac == MacKind::geometric ? "--theta" : "--alpha";
    auto fail = [&]() -> std::vector<double> {
        throw std::runtime_error(option + " takes LO:HI:STEP (e.g. " +
                                 (mac == MacKind::geometric ? "0.2:1.0:0.1" : "0.001:0.01:0.001") + ") or a list (" +
                                 (mac == MacKind::geometric ? "0.3,0.5,0.75" : "1e-4,1e-3,1e-2") +
                                 ") of values > 0, got '" + text + "'");
    };
    std::vector<double> out;
    try {
        if (text.find(':') != std::string::npos) {
            std::stringstream ss(text);
            std::string a, b, c;
            std::getline(ss, a, ':');
            std::getline(ss, b, ':');
            std::getline(ss, c, ':');
            const double lo = std::stod(a), hi = std::stod(b), step = std::stod(c);
            if (!(lo > 0) || !(hi >= lo) || !(step > 0)) return fail();
            const auto count = static_cast<int>(std::floor((hi - lo) / step + 1e-9)) + 1;
            if (count > 1000) return fail();
            for (int k = 0; k < count; ++k) out.push_back(lo + k * step);
        } else {
            std::stringstream ss(text);
            for (std::string item; std::getline(ss, item, ',');)
                if (!item.empty()) out.push_back(std::stod(item));
        }
    } catch (const std::logic_error&) {
        return fail();
    }
    if (out.empty()) return fail();
    for (double t : out)
        if (!(t > 0) || !std::isfinite(t)) return fail();
    for (double t : out) {
        try {
            if (mac == MacKind::geometric)
                check_theta(t);
            else
                check_alpha(t);
        } catch (const std::invalid_argument& e) {
            throw std::runtime_error(std::string("--") + e.what());
        }
    }
    return out;
}

std::pair<double, double> fit_power_law(const std::vector<double>& x, const std::vector<double>& y)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int n = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] > 0) || !(y[i] > 0)) continue;
        const double lx = std::log(x[i]), ly = std::log(y[i]);
        sx += lx;
        sy += ly;
        sxx += lx * lx;
        sxy += lx * ly;
        ++n;
    }
    if (n < 2 || sxx * n - sx * sx <= 0) return {std::nan(""), std::nan("")};
    const double alpha = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    return {std::exp((sy - alpha * sx) / n), alpha};
}

std::vector<ErrorSummary> summarize_errors(const ParticleSet& p, const std::vector<std::int32_t>& targets,
                                           const Eigen::Matrix3Xd& acc, const Eigen::VectorXd& pot,
                                           const Eigen::Matrix3Xd& ref_acc, const Eigen::VectorXd& ref_pot)
{
    const Eigen::Matrix3Xd a = select_columns(acc, targets);
    Eigen::VectorXd ph(static_cast<Eigen::Index>(targets.size()));
    for (std::size_t k = 0; k < targets.size(); ++k) ph[static_cast<Eigen::Index>(k)] = pot[targets[k]];
    const std::vector<double> ea = relative_errors(a, ref_acc), ep = relative_errors(ph, ref_pot);
    // "all" first, then each particle type present, in type order.
    std::map<int, std::pair<std::vector<double>, std::vector<double>>> by_type;
    for (std::size_t k = 0; k < targets.size(); ++k) {
        auto& slot = by_type[p.type[static_cast<std::size_t>(targets[k])]];
        slot.first.push_back(ea[k]);
        slot.second.push_back(ep[k]);
    }
    std::vector<ErrorSummary> out;
    auto summary = [](const std::string& name, std::vector<double> acc_err, std::vector<double> pot_err) {
        ErrorSummary s;
        s.component = name;
        std::sort(acc_err.begin(), acc_err.end());
        for (double q : kErrorLevels) s.acc_percentiles.push_back(percentile_sorted(acc_err, q));
        s.pot_percentiles = percentiles(std::move(pot_err), {50, 99});
        s.sorted_acc_errors = std::move(acc_err);
        return s;
    };
    out.push_back(summary("all", ea, ep));
    if (by_type.size() > 1)
        for (auto& [type, errors] : by_type)
            out.push_back(summary(component_name(type), std::move(errors.first), std::move(errors.second)));
    return out;
}

ErrorTarget parse_error_target(const std::string& text)
{
    ErrorTarget t;
    const auto eq = text.find('=');
    try {
        if (text.size() < 4 || text[0] != 'p' || eq == std::string::npos) throw std::invalid_argument(text);
        std::size_t used = 0;
        t.percentile = std::stod(text.substr(1, eq - 1), &used);
        if (used != eq - 1) throw std::invalid_argument(text);
        t.value = std::stod(text.substr(eq + 1), &used);
        if (used != text.size() - eq - 1) throw std::invalid_argument(text);
    } catch (const std::logic_error&) {
        throw std::runtime_error("--target takes pQ=VALUE, e.g. p99=1e-3 or p50=2e-4 (got '" + text + "')");
    }
    if (!(t.percentile > 0 && t.percentile <= 100) || !(t.value > 0))
        throw std::runtime_error("--target: the percentile must lie in (0, 100] and the value be > 0 (got '" + text +
                                 "')");
    return t;
}

namespace {

// The target's percentile of a result's errors, NaN when the component is not in the model.
double target_error(const SweepResult& r, const ErrorTarget& t)
{
    for (const auto& e : r.errors)
        if (e.component == t.component) return percentile_sorted(e.sorted_acc_errors, t.percentile);
    return std::numeric_limits<double>::quiet_NaN();
}

// Bisection in log for the largest theta (alpha) whose target percentile meets the value; the
// error grows with theta and with alpha (lists only lose entries as either grows), so the feasible
// values are an interval from the smallest one up.
template <class Evaluate> TargetSearch search_parameter(MacKind mac, const ErrorTarget& target, Evaluate&& evaluate)
{
    TargetSearch s;
    s.target = target;
    auto probe = [&](double value) {
        s.probes.push_back(evaluate(value));
        const double e = target_error(s.probes.back(), target);
        if (std::isnan(e)) throw std::runtime_error("--target-component " + target.component + " is not in the model");
        return e;
    };
    double lo = mac == MacKind::geometric ? 0.05 : 1e-6, hi = mac == MacKind::geometric ? kMaxTheta : 1.0;
    const double e_lo = probe(lo);
    if (e_lo > target.value) { // not even the smallest theta meets it
        s.best = s.probes.back();
        s.best_error = e_lo;
        return s;
    }
    s.reachable = true;
    s.best = s.probes.back();
    s.best_error = e_lo;
    const double e_hi = probe(hi);
    if (e_hi <= target.value) {
        s.best = s.probes.back();
        s.best_error = e_hi;
        return s;
    }
    for (int k = 0; k < 14 && hi / lo > 1.002; ++k) {
        const double mid = std::sqrt(lo * hi);
        const double e = probe(mid);
        if (e <= target.value) {
            lo = mid;
            s.best = s.probes.back();
            s.best_error = e;
        } else {
            hi = mid;
        }
    }
    return s;
}

} // namespace

namespace {

// The direct reference for the compared particles (under mpirun shared out by targets:
// parallel/distributed_engine.hpp); its seconds scaled to all particles.
Forces direct_reference(const ParticleSet& p, EngineConfig config, const std::string& engine,
                        const std::vector<std::int32_t>& targets, double& seconds)
{
    Forces ref;
    config.engine = engine;
    const auto t0 = WallClock::now();
    auto direct = distribute(engines().make_force(config), Communicator::world());
    if (targets.size() < p.size())
        direct->compute_subset(p.pos, p.mass, p.type, targets, ref);
    else
        direct->compute(p.pos, p.mass, p.type, ref);
    seconds = seconds_since(t0) * static_cast<double>(p.size()) /
              static_cast<double>(std::max<std::size_t>(1, targets.size()));
    return ref;
}

} // namespace

namespace {

// The median of `repeat` (at least one) runs of `once`, which returns its seconds.
template <class Once> double median_seconds(int repeat, Once&& once)
{
    std::vector<double> times;
    for (int k = 0; k < std::max(1, repeat); ++k) times.push_back(once());
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

// A row's errors against the reference, and a line of progress.
SweepResult with_errors(SweepResult r, const ParticleSet& p, const std::vector<std::int32_t>& targets, const Forces& f,
                        const Forces& ref, const AccuracyOptions& o)
{
    r.errors = summarize_errors(p, targets, f.acc, f.pot, ref.acc, ref.pot);
    if (Communicator::world().is_root())
        std::fprintf(stderr, "  %s %.4g done\n", OpeningCriterion{o.mac}.parameter_name(), r.value);
    return r;
}

// The rows of every value (evaluate: value -> row), the target's search, and the power-law fit of
// the median error.
template <class Evaluate> void sweep_rows(AccuracyStudy& study, const AccuracyOptions& o, Evaluate&& evaluate)
{
    for (double value : o.values) study.results.push_back(evaluate(value));
    if (o.target) study.search = search_parameter(o.mac, *o.target, evaluate);
    std::vector<double> x, y;
    for (const auto& r : study.results) {
        x.push_back(r.value);
        y.push_back(r.errors.front().acc_percentiles.front());
    }
    std::tie(study.fit_amplitude, study.fit_exponent) = fit_power_law(x, y);
}

// The sweep over Peano-Hilbert domains: each row one computation over the domains (the build, the LETs
// and their exchange included), every rank with all forces after it; the counts are the means of
// each rank's own groups and particles, weighted by them.
AccuracyStudy domains_study(const ParticleSet& p, const AccuracyOptions& o, EngineConfig config, const Forces& ref,
                            AccuracyStudy study)
{
    const Communicator& comm = Communicator::world();
    config.mac = o.mac == MacKind::relative ? "relative" : "geometric"; // each row passes its own value
    if (o.mac == MacKind::relative) config.alpha = o.values.empty() ? 1e-3 : o.values.front();
    config.theta_max = o.theta_max;
    auto engine = make_domain_tree_engine(engines().make_force(config), config, comm);
    if (o.mac == MacKind::relative) { // the first value, after the geometric pass whose |a| every row keeps
        const auto t0 = WallClock::now();
        Forces first;
        compute_on_domains(*engine, o.criterion(config.alpha), p, first, comm);
        study.first_pass_seconds = seconds_since(t0);
    }
    auto evaluate = [&](double value) {
        SweepResult r;
        r.value = value;
        Forces f;
        r.evaluate_seconds = median_seconds(o.repeat, [&] {
            comm.barrier();
            const auto t0 = WallClock::now();
            compute_on_domains(*engine, o.criterion(value), p, f, comm);
            double wall = seconds_since(t0);
            comm.max(&wall, 1);
            return wall;
        });
        const TreeStats mine = engine->last_statistics();
        const auto n = static_cast<double>(engine->last_particle_count()), g = static_cast<double>(mine.num_groups);
        double sums[6] = {mine.nodes_per_group * g,
                          mine.leaves_per_group * g,
                          mine.node_interactions_per_particle * n,
                          mine.leaf_interactions_per_particle * n,
                          g,
                          n};
        comm.sum(sums, 6);
        r.stats.nodes_per_group = sums[4] > 0 ? sums[0] / sums[4] : 0;
        r.stats.leaves_per_group = sums[4] > 0 ? sums[1] / sums[4] : 0;
        r.stats.node_interactions_per_particle = sums[5] > 0 ? sums[2] / sums[5] : 0;
        r.stats.leaf_interactions_per_particle = sums[5] > 0 ? sums[3] / sums[5] : 0;
        r.stats.num_groups = static_cast<std::int64_t>(sums[4]);
        return with_errors(std::move(r), p, study.targets, f, ref, o);
    };
    sweep_rows(study, o, evaluate);
    return study;
}

} // namespace

AccuracyStudy run_accuracy_study(const ParticleSet& p, const AccuracyOptions& o)
{
    if (o.values.empty() && !o.target) throw std::runtime_error("accuracy: no theta or alpha given");
    const Communicator& comm = Communicator::world();
    AccuracyStudy study;
    study.n = p.size();
    const GravityParams gravity = o.gravity();
    // The compared particles: all, or a fixed-seed random sample without repeats.
    study.targets = sample_indices(p.size(), o.sample, o.seed);
    EngineConfig config;
    config.gravity = gravity;
    config.precision = "double";
    config.nleaf = o.nleaf;
    config.ncrit = o.ncrit;
    // Under mpirun each rank on the GPU of its local rank.
    if (comm.size() > 1 && engines().device_count() > 0) config.device = comm.local_rank() % engines().device_count();
    const Forces ref = direct_reference(p, config, o.direct_engine, study.targets, study.direct_seconds);
    config.engine = o.tree_engine;
    config.gpu_memory = o.gpu_memory;
    config.list_memory = o.list_memory;
    if (o.domains) return domains_study(p, o, config, ref, std::move(study));

    const BuildParams params{o.nleaf, o.ncrit};
    // Built twice and the second timed: the first pays one-time page faults, as a run's first
    // step does, and the table reports the cost of every later force evaluation.
    Octree tree;
    build_octree_into(tree, p.pos, p.mass, params);
    auto t0 = WallClock::now();
    build_octree_into(tree, p.pos, p.mass, params);
    study.build_seconds = seconds_since(t0);

    const auto engine = engines().make_force(config);
    auto* sweep = dynamic_cast<TreeSweep*>(engine.get());
    TreeEngine* tree_engine = as_tree_engine(*engine);
    if (!sweep || !tree_engine)
        throw std::runtime_error("accuracy: " + o.tree_engine + " cannot evaluate a built tree");
    // Under mpirun each rank evaluates its share of the groups; the shares are summed after each
    // evaluation (each particle's force comes from one rank: the sums are exact).
    if (comm.size() > 1) tree_engine->set_share(comm.rank(), comm.size());
    auto combine = [&](Forces& f) {
        comm.sum(f.acc.data(), static_cast<std::size_t>(f.acc.size()));
        comm.sum(f.pot.data(), static_cast<std::size_t>(f.pot.size()));
    };
    sweep->load(tree, p.type); // the GPU engine allocates its buffers here
    t0 = WallClock::now();
    sweep->load(tree, p.type);
    study.build_seconds += seconds_since(t0); // the upload is part of the per-build cost
    if (o.mac == MacKind::relative) {
        // The relative criterion's |a|: in a run the previous step's; here one geometric pass,
        // timed apart, so that every row costs what a run's step would.
        Forces first;
        t0 = WallClock::now();
        sweep->evaluate_loaded(OpeningCriterion::geometric(kFirstPassTheta), first);
        combine(first);
        engine->set_acceleration_estimate(first.acc);
        study.first_pass_seconds = seconds_since(t0);
    }
    auto evaluate = [&](double value) {
        SweepResult r;
        r.value = value;
        Forces f;
        r.evaluate_seconds = median_seconds(o.repeat, [&] {
            t0 = WallClock::now();
            sweep->evaluate_loaded(o.criterion(value), f);
            combine(f);
            return seconds_since(t0);
        });
        r.stats = sweep->loaded_statistics();
        // Each rank counted its share of the lists; the counts are over all particles, so they add.
        double counts[4] = {r.stats.nodes_per_group, r.stats.leaves_per_group, r.stats.node_interactions_per_particle,
                            r.stats.leaf_interactions_per_particle};
        comm.sum(counts, 4);
        r.stats.nodes_per_group = counts[0];
        r.stats.leaves_per_group = counts[1];
        r.stats.node_interactions_per_particle = counts[2];
        r.stats.leaf_interactions_per_particle = counts[3];
        return with_errors(std::move(r), p, study.targets, f, ref, o);
    };
    sweep_rows(study, o, evaluate);
    return study;
}

void write_accuracy_hdf5(const std::string& path, const AccuracyStudy& s, const AccuracyOptions& o,
                         const std::string& source)
{
    // Above this many compared particles a component's errors are stored as a cumulative
    // distribution (a million sorted errors per value and component would make files of 100s of MB).
    constexpr std::size_t kSortedErrorsLimit = 200000;
    const std::string tmp = path + ".tmp";
    // The swept parameter names the datasets and groups: "theta" (geometric) or "alpha" (relative).
    const std::string param = OpeningCriterion{o.mac}.parameter_name();
    try {
        {
            h5::Handle file = h5::create_file(tmp);
            h5::write_attribute(file.id(), "source", source);
            h5::write_attribute(file.id(), "N", static_cast<double>(s.n));
            h5::write_attribute(file.id(), "compared", static_cast<double>(s.targets.size()));
            h5::write_attribute(file.id(), "eps", o.eps);
            h5::write_attribute(file.id(), "eps_type", softening_types_text(o.gravity()));
            h5::write_attribute(file.id(), "G", o.G);
            h5::write_attribute(file.id(), "nleaf", static_cast<std::int32_t>(o.nleaf));
            h5::write_attribute(file.id(), "ncrit", static_cast<std::int32_t>(resolved_ncrit(o.ncrit, s.n)));
            h5::write_attribute(file.id(), "tree_engine", o.tree_engine);
            h5::write_attribute(file.id(), "direct_engine", o.direct_engine);
            h5::write_attribute(file.id(), "build_seconds", s.build_seconds);
            h5::write_attribute(file.id(), "direct_seconds", s.direct_seconds);
            h5::write_attribute(file.id(), "fit_median_amplitude", s.fit_amplitude);
            h5::write_attribute(file.id(), "fit_median_exponent", s.fit_exponent);
            h5::write_attribute(file.id(), "percentile_levels", kErrorLevels);
            h5::write_attribute(file.id(), "mac", std::string(mac_name(o.mac)));
            h5::write_attribute(file.id(), "parameter", param);
            h5::write_attribute(file.id(), "first_pass_seconds", s.first_pass_seconds);
            if (s.search) {
                h5::write_attribute(file.id(), "target_percentile", s.search->target.percentile);
                h5::write_attribute(file.id(), "target_value", s.search->target.value);
                h5::write_attribute(file.id(), "target_component", s.search->target.component);
                h5::write_attribute(file.id(), "target_" + param,
                                    s.search->reachable ? s.search->best.value
                                                        : std::numeric_limits<double>::quiet_NaN());
                h5::write_attribute(file.id(), "target_error", s.search->best_error);
            }
            std::vector<double> values, eval, tree_total, nodes, leaves, pn, pp;
            std::vector<double> pct; // [value][level] for all particles
            for (const auto& r : s.results) {
                values.push_back(r.value);
                eval.push_back(r.evaluate_seconds);
                tree_total.push_back(r.evaluate_seconds + s.build_seconds);
                nodes.push_back(r.stats.nodes_per_group);
                leaves.push_back(r.stats.leaves_per_group);
                pn.push_back(r.stats.node_interactions_per_particle);
                pp.push_back(r.stats.leaf_interactions_per_particle);
                pct.insert(pct.end(), r.errors.front().acc_percentiles.begin(), r.errors.front().acc_percentiles.end());
            }
            h5::write_dataset(file.id(), param, values.data(), values.size(), 1);
            h5::write_dataset(file.id(), "evaluate_seconds", eval.data(), eval.size(), 1);
            h5::write_dataset(file.id(), "tree_seconds", tree_total.data(), tree_total.size(), 1);
            h5::write_dataset(file.id(), "nodes_per_group", nodes.data(), nodes.size(), 1);
            h5::write_dataset(file.id(), "leaves_per_group", leaves.data(), leaves.size(), 1);
            h5::write_dataset(file.id(), "node_interactions_per_particle", pn.data(), pn.size(), 1);
            h5::write_dataset(file.id(), "leaf_interactions_per_particle", pp.data(), pp.size(), 1);
            h5::write_dataset(file.id(), "percentiles", pct.data(), values.size(), kErrorLevels.size());
            for (std::size_t k = 0; k < s.results.size(); ++k) {
                const SweepResult& r = s.results[k];
                char name[32];
                std::snprintf(name, sizeof name, "%s_%03zu", param.c_str(), k);
                h5::Handle g = h5::create_group(file.id(), name);
                h5::write_attribute(g.id(), param, r.value);
                h5::write_attribute(g.id(), "evaluate_seconds", r.evaluate_seconds);
                for (const ErrorSummary& e : r.errors) {
                    h5::Handle c = h5::create_group(g.id(), e.component);
                    h5::write_dataset(c.id(), "percentiles", e.acc_percentiles.data(), e.acc_percentiles.size(), 1);
                    h5::write_dataset(c.id(), "potential_percentiles", e.pot_percentiles.data(),
                                      e.pot_percentiles.size(), 1);
                    const auto& v = e.sorted_acc_errors;
                    if (v.size() <= kSortedErrorsLimit) {
                        h5::write_dataset(c.id(), "sorted_errors", v.data(), v.size(), 1);
                    } else {
                        // Fraction of particles with error above 400 log-spaced thresholds.
                        std::vector<double> xs, frac;
                        const double lo = std::max(1e-12, v.front()), hi = std::max(lo * 10, v.back());
                        for (int i = 0; i < 400; ++i) {
                            const double x = lo * std::pow(hi / lo, i / 399.0);
                            xs.push_back(x);
                            frac.push_back(static_cast<double>(v.end() - std::upper_bound(v.begin(), v.end(), x)) /
                                           static_cast<double>(v.size()));
                        }
                        h5::write_dataset(c.id(), "cdf_x", xs.data(), xs.size(), 1);
                        h5::write_dataset(c.id(), "cdf_fraction_above", frac.data(), frac.size(), 1);
                    }
                }
            }
            h5::finish_file(file, tmp);
        }
        std::filesystem::rename(tmp, path);
    } catch (...) {
        std::remove(tmp.c_str()); // nothing half-written is left behind
        throw;
    }
}

} // namespace grove
