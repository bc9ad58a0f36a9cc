// grove forces FILE -o OUT: accelerations and potentials with any engine, written as a snapshot.
#include <chrono>
#include <cstdio>
#include <map>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/diagnostics.hpp"
#include "core/snapshot.hpp"

namespace grove {

namespace {

struct ForcesConfig {
    std::string input, output;
    EngineConfig engine;
    bool G_given = false;                        // --G given; else G comes from the snapshot's units
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
    c.recorded = recorded_options(r, "forces");
    return c;
}

int run_forces(const ForcesConfig& c)
{
    ParticleSet p = read_snapshot(c.input);
    EngineConfig config = c.engine;
    if (!c.G_given) config.gravity.G = p.units.G;
    auto engine = make_force_engine(config);
    Forces forces;
    const auto start = std::chrono::steady_clock::now();
    engine->compute(p.pos, p.mass, forces);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    p.acc = forces.acc;
    p.pot = forces.pot;
    for (const auto& [key, value] : c.recorded) p.run_parameters[key] = value;
    p.run_parameters["forces.engine_used"] = engine->name();
    write_snapshot(c.output, p);

    const Diagnostics d = compute_diagnostics(p, p.pot);
    std::printf("%s: %zu particles in %.3f s", engine->name().c_str(), p.size(), seconds);
    for (const auto& [phase, s] : engine->last_phase_times()) std::printf("  %s %.3f", phase.c_str(), s);
    std::printf("\nenergy T %.10g  W %.10g  E %.10g  2T/|W| %.6f\nwrote %s\n", d.kinetic, d.potential, d.total,
                d.virial_ratio, c.output.c_str());
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
    options.parse_positional({"file"});
    options.positional_help("FILE -o OUT");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    return run_forces(forces_config(*parsed));
}

} // namespace grove
