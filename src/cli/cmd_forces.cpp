// grove forces FILE -o OUT: accelerations and potentials with any engine, written as a snapshot.
#include <chrono>
#include <cstdio>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/diagnostics.hpp"
#include "core/snapshot.hpp"

namespace grove {

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
    if (!parsed->count("file")) throw std::runtime_error("missing input snapshot (grove forces FILE -o OUT)");
    if (!parsed->count("output")) throw std::runtime_error("missing output path (-o OUT)");
    const std::string in = (*parsed)["file"].as<std::string>();
    const std::string out = (*parsed)["output"].as<std::string>();

    ParticleSet p = read_snapshot(in);
    auto engine = make_force_engine(engine_config(*parsed, p.units.G));
    Forces forces;
    const auto start = std::chrono::steady_clock::now();
    engine->compute(p.pos, p.mass, forces);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    p.acc = forces.acc;
    p.pot = forces.pot;
    record_options(*parsed, "forces", p);
    p.run_parameters["forces.engine_used"] = engine->name();
    write_snapshot(out, p);

    const Diagnostics d = compute_diagnostics(p, p.pot);
    std::printf("%s: %zu particles in %.3f s", engine->name().c_str(), p.size(), seconds);
    for (const auto& [phase, s] : engine->last_phase_times()) std::printf("  %s %.3f", phase.c_str(), s);
    std::printf("\nenergy T %.10g  W %.10g  E %.10g  2T/|W| %.6f\nwrote %s\n", d.kinetic, d.potential, d.total,
                d.virial_ratio, out.c_str());
    return 0;
}

} // namespace grove
