// grove forces FILE -o OUT: accelerations and potentials with any engine, written as a snapshot;
// with --neighbours also each particle's nearest neighbour and, within a radius, its neighbours.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/diagnostics.hpp"
#include "core/memory_plan.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "core/wall_clock.hpp"
#include "engines/engines.hpp"
#include "parallel/distributed_diagnostics.hpp"
#include "parallel/distributed_engine.hpp"
#include "parallel/domain_files.hpp"
#include "parallel/domain_tree.hpp"
#include "parallel/domains.hpp"

namespace grove {

namespace {

struct ForcesConfig {
    std::string input, output;
    EngineConfig engine;
    bool domains = false;                        // --decomposition domains: the tree over Peano-Hilbert domains
    bool neighbours = false;                     // nearest neighbour of every particle
    double neighbour_radius = 0;                 // > 0: also the neighbours within it
    int max_neighbours = 32;                     // room per particle in NeighbourIDs
    bool G_given = false;                        // -G given; else G comes from the snapshot's units
    std::optional<Units> units;                  // --units, for an input that holds none
    std::map<std::string, std::string> recorded; // every option, into /RunParameters
};

ForcesConfig forces_config(const cxxopts::ParseResult& r)
{
    if (!r.count("file")) throw std::runtime_error("missing input snapshot (grove forces FILE -o OUT)");
    if (!r.count("output")) throw std::runtime_error("missing output path (-o OUT)");
    ForcesConfig c;
    c.input = r["file"].as<std::string>();
    c.output = r["output"].as<std::string>();
    refuse_output_over_input(c.output, c.input);
    check_writable(c.output);
    c.engine = engine_config(r, 1.0);
    c.G_given = r.count("G") > 0;
    c.units = input_units(r);
    c.recorded = recorded_options(r, "forces");
    c.neighbours = r["neighbours"].as<bool>() || r.count("neighbour-radius") > 0;
    if (r.count("neighbour-radius")) c.neighbour_radius = r["neighbour-radius"].as<double>();
    c.max_neighbours = r["max-neighbours"].as<int>();
    const std::string decomposition = r["decomposition"].as<std::string>();
    if (decomposition != "replicated" && decomposition != "domains")
        throw std::runtime_error("--decomposition takes replicated or domains (got '" + decomposition + "')");
    c.domains = decomposition == "domains";
    if (c.domains && engines().resolve(c.engine.engine).rfind("tree", 0) != 0)
        throw std::runtime_error("--decomposition domains: a tree engine (tree, tree-cpu, tree-gpu), not " +
                                 engines().resolve(c.engine.engine) + ": direct summation spreads its targets instead");
    if (c.domains && c.neighbours) throw std::runtime_error("--neighbours needs --decomposition replicated");
    if (r.count("neighbour-radius") && !(c.neighbour_radius > 0))
        throw std::runtime_error("--neighbour-radius must be > 0");
    if (c.max_neighbours < 1) throw std::runtime_error("--max-neighbours must be >= 1");
    if (c.neighbours && !engines().find(engines().resolve(c.engine.engine)).make_grape)
        throw std::runtime_error("--neighbours needs a direct engine (direct, direct-cpu or direct-gpu), not " +
                                 engines().resolve(c.engine.engine));
    return c;
}

// The nearest neighbour of every particle (its ParticleID and distance, unsoftened) and, with a
// radius, the IDs of the particles within it (at most max_neighbours each, sorted; the count is
// the true number, and a list that did not fit is flagged): the direct engine's GRAPE form.
void add_neighbours(ParticleSet& p, const ForcesConfig& c, const EngineConfig& config)
{
    auto grape = engines().find(engines().resolve(config.engine)).make_grape(config);
    const std::size_t n = p.size();
    grape->resize(n);
    GrapeIParticles in;
    in.x.resize(3 * n);
    in.v.assign(3 * n, 0.0);
    in.name.resize(n);
    in.h2.assign(n, c.neighbour_radius * c.neighbour_radius);
    for (std::size_t i = 0; i < n; ++i) {
        GrapeJParticle q;
        for (int d = 0; d < 3; ++d) q.x[d] = in.x[3 * i + d] = p.pos(d, static_cast<Eigen::Index>(i));
        q.mass = p.mass[static_cast<Eigen::Index>(i)];
        q.name = static_cast<std::int64_t>(i);
        in.name[i] = q.name;
        grape->set(i, q);
    }
    GrapeResults r;
    const std::size_t capacity = c.neighbour_radius > 0 ? static_cast<std::size_t>(c.max_neighbours) : 0;
    grape->evaluate(0.0, n, in, std::max(config.gravity.eps * config.gravity.eps, 1e-300), capacity, r);
    auto& nearest = p.extra["NearestNeighbour"];
    auto& distance = p.extra["NearestDistance"];
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t j = r.nearest[i];
        nearest.counts.push_back(j >= 0 ? p.id[static_cast<std::size_t>(j)] : 0); // 0: alone
        distance.values.push_back(j >= 0 ? std::sqrt(r.nearest_r2[i]) : INFINITY);
    }
    if (capacity == 0) return;
    auto& count = p.extra["NeighbourCount"];
    auto& ids = p.extra["NeighbourIDs"];
    auto& overflow = p.extra["NeighbourOverflow"];
    ids.components = c.max_neighbours;
    std::size_t overflowed = 0;
    for (std::size_t i = 0; i < n; ++i) {
        count.counts.push_back(static_cast<std::uint64_t>(r.count[i]));
        overflow.counts.push_back(r.overflowed[i]);
        overflowed += r.overflowed[i];
        const std::size_t kept = std::min(static_cast<std::size_t>(r.count[i]), capacity);
        std::vector<std::uint64_t> list(capacity, 0);
        for (std::size_t k = 0; k < kept; ++k)
            list[k] = p.id[static_cast<std::size_t>(r.neighbours[static_cast<std::size_t>(r.offset[i]) + k])];
        std::sort(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(kept)); // by ID
        ids.counts.insert(ids.counts.end(), list.begin(), list.end());
    }
    if (overflowed)
        std::fprintf(stderr,
                     "grove forces: %zu particles have more than %d neighbours within %g (NeighbourOverflow = 1; "
                     "NeighbourCount holds the true number): raise --max-neighbours\n",
                     overflowed, c.max_neighbours, c.neighbour_radius);
}

// The forces into p, with what made them. Never a file of NaN with exit 0: a force that came out
// non-finite stops the command (on domains, the job).
void take_forces(ParticleSet& p, const Forces& forces, const ForcesConfig& c, const std::string& engine)
{
    for (Eigen::Index i = 0; i < forces.pot.size(); ++i)
        if (!forces.acc.col(i).allFinite() || !std::isfinite(forces.pot[i]))
            throw std::runtime_error("the force on particle " + std::to_string(p.id[static_cast<std::size_t>(i)]) +
                                     " came out non-finite (engine " + engine + "); nothing was written");
    p.acc = forces.acc;
    p.pot = forces.pot;
    for (const auto& [key, value] : c.recorded) p.run_parameters[key] = value;
    p.run_parameters["forces.engine_used"] = engine;
}

void report(const ForceEngine& engine, std::uint64_t n, double seconds, const Diagnostics& d, const std::string& output)
{
    std::printf("%s: %llu particles in %.3f s", engine.name().c_str(), static_cast<unsigned long long>(n), seconds);
    for (const auto& [phase, s] : engine.last_phase_times()) std::printf("  %s %.3f", phase.c_str(), s);
    std::printf("\nenergy T %.10g  W %.10g  E %.10g  2T/|W| %.6f\nwrote %s\n", d.kinetic, d.potential, d.total,
                d.virial_ratio, output.c_str());
}

// On domains each rank reads its part of the file, evaluates the forces of its domain's particles
// and writes them in turn into one file (parallel/domain_files.hpp): no rank holds more than its
// share. The file holds each type's particles in ID order.
int run_forces_on_domains(const ForcesConfig& c)
{
    const Communicator& comm = Communicator::world();
    const std::uint64_t n = snapshot_particle_count(c.input);
    check_memory_plan(Workload::forces, n, "grove forces on " + c.input, engines().resolve(c.engine.engine));
    check_device_plan(Workload::forces, planned_domain_particles(n, comm.size()), "grove forces on " + c.input,
                      engines().resolve(c.engine.engine), c.engine.gpu_memory, c.engine.device);
    const auto r = static_cast<std::uint64_t>(comm.rank()), k = static_cast<std::uint64_t>(comm.size());
    const ParticleSet part = read_snapshot_part(c.input, n * r / k, n * (r + 1) / k, c.units);
    EngineConfig config = c.engine;
    if (!c.G_given) config.gravity.G = part.units.G;
    auto engine = make_domain_tree_engine(make_force_engine(config), config, comm);
    const auto start = WallClock::now();
    ParticleSet mine;
    Forces forces;
    compute_own_domain(*engine, part, mine, forces, comm);
    const double seconds = seconds_since(start);
    take_forces(mine, forces, c, engine->name());
    write_snapshot_from_domains(c.output, mine, comm);
    const Diagnostics d = compute_diagnostics(mine, mine.pot, comm);
    if (comm.is_root()) report(*engine, n, seconds, d, c.output);
    return 0;
}

int run_forces(const ForcesConfig& c)
{
    if (c.domains) return run_forces_on_domains(c);
    const std::size_t n = snapshot_particle_count(c.input);
    check_memory_plan(Workload::forces, n, "grove forces on " + c.input, engines().resolve(c.engine.engine));
    check_device_plan(Workload::forces, n, "grove forces on " + c.input, engines().resolve(c.engine.engine),
                      c.engine.gpu_memory, c.engine.device);
    ParticleSet p = read_snapshot(c.input, c.units);
    EngineConfig config = c.engine;
    if (!c.G_given) config.gravity.G = p.units.G;
    const Communicator& comm = Communicator::world();
    const std::unique_ptr<ForceEngine> engine = distribute(make_force_engine(config), comm); // one process: itself
    const auto start = WallClock::now();
    Forces forces;
    engine->compute(p.pos, p.mass, p.type, forces);
    const double seconds = seconds_since(start);
    take_forces(p, forces, c, engine->name());
    if (c.neighbours) add_neighbours(p, c, config);
    if (!comm.is_root()) return 0; // every rank holds the result; the first writes it
    write_snapshot(c.output, p);
    report(*engine, p.size(), seconds, compute_diagnostics(p, p.pot), c.output);
    return 0;
}

} // namespace

int command_forces(int argc, char** argv)
{
    cxxopts::Options options("grove forces", "Compute accelerations and potentials of every particle and write them\n"
                                             "(Acceleration, Potential) with the particles to a new snapshot.");
    options.add_options()("file", "Input snapshot (HDF5)", cxxopts::value<std::string>())(
        "o,output", "Output snapshot (required)", cxxopts::value<std::string>());
    add_engine_options(options);
    options.add_options()("decomposition",
                          "under mpirun, tree engines: replicated (every rank holds every particle and "
                          "evaluates a share of the groups: bit-identical to one process) or domains (each rank "
                          "the tree of one Peano-Hilbert domain, with the locally essential trees of the others)",
                          cxxopts::value<std::string>()->default_value("replicated"));
    add_input_units_option(options);
    options.add_options("neighbours")(
        "neighbours", "also write NearestNeighbour (its ParticleID, 0 if alone) and NearestDistance (unsoftened)",
        cxxopts::value<bool>()->default_value("false"))(
        "neighbour-radius", "also write NeighbourCount, NeighbourIDs and NeighbourOverflow within this radius",
        cxxopts::value<double>())("max-neighbours", "room per particle in NeighbourIDs (0-padded)",
                                  cxxopts::value<int>()->default_value("32"));
    options.parse_positional({"file"});
    options.positional_help("FILE -o OUT");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    return run_forces(forces_config(*parsed));
}

} // namespace grove
