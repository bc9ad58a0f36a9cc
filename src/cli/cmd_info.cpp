// grove info FILE: what a snapshot holds and how it was made.
#include <cstdio>
#include <iostream>
#include <vector>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/checkpoint.hpp"
#include "core/diagnostics.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "core/time_bins.hpp"

namespace grove {

namespace {

int run_info(const std::string& path, const std::optional<Units>& units)
{
    const ParticleSet p = read_snapshot(path, units);
    const SnapshotFormat format = snapshot_format(path);

    std::printf("file        %s (%s)\n", path.c_str(), snapshot_format_name(format));
    std::printf("particles   %zu\n", p.size());
    std::printf("time        %.10g\n", p.time);
    std::printf("units       %s (G = %.10g; length %.6g cm, mass %.6g g, velocity %.6g cm/s)%s\n",
                p.units.system.c_str(), p.units.G, p.units.length_cm, p.units.mass_g, p.units.velocity_cm_s,
                format != SnapshotFormat::hdf5 && !units ? ", assumed: the file holds none (--units)" : "");
    // Each component's particles, and its 10/50/90 % Lagrangian radii about its own centre of mass
    // (where the file holds more than one), as scripts/galaxy_equilibrium.py measures them.
    std::vector<std::vector<std::size_t>> members(kNumParticleTypes);
    for (std::size_t i = 0; i < p.size(); ++i) members[p.type[i]].push_back(i);
    int components = 0;
    for (const auto& m : members) components += m.empty() ? 0 : 1;
    for (int t = 0; t < kNumParticleTypes; ++t) {
        const std::vector<std::size_t>& m = members[static_cast<std::size_t>(t)];
        if (m.empty()) continue;
        double mass = 0;
        Eigen::Vector3d centre = Eigen::Vector3d::Zero();
        for (std::size_t i : m) {
            const auto c = static_cast<Eigen::Index>(i);
            mass += p.mass[c];
            centre += p.mass[c] * p.pos.col(c);
        }
        std::printf("PartType%d   %-9s %12zu particles, mass %.10g", t, component_name(t), m.size(), mass);
        if (components > 1 && mass > 0) {
            const std::vector<double> r = lagrangian_radii(p.pos, p.mass, centre / mass, {0.1, 0.5, 0.9}, m);
            std::printf(", r10 %.6g  r50 %.6g  r90 %.6g", r[0], r[1], r[2]);
        }
        std::printf("\n");
    }
    std::printf("total mass  %.10g\n", p.mass.sum());
    // Where the run that wrote a checkpoint stands; within a block-step interval its velocities are
    // those of each particle's last kick, half its step ahead of the positions.
    if (const auto place = format == SnapshotFormat::hdf5 ? checkpoint_place(path) : std::nullopt) {
        if (place->tick > 0)
            std::printf("checkpoint  within step %lld (tick %lld of %lld): velocities of the last kicks, half a "
                        "step ahead; the energy below is approximate\n",
                        place->step + 1, place->tick, static_cast<long long>(kTicksPerMaxStep));
        else
            std::printf("checkpoint  after step %lld\n", place->step);
    }
    if (p.has_forces()) {
        const Diagnostics d = compute_diagnostics(p, p.pot);
        std::printf("energy      T %.10g  W %.10g  E %.10g  2T/|W| %.6f\n", d.kinetic, d.potential, d.total,
                    d.virial_ratio);
        std::printf("lagrangian  r10 %.6g  r50 %.6g  r90 %.6g\n", d.lagrangian_radii[0], d.lagrangian_radii[1],
                    d.lagrangian_radii[2]);
    } else {
        std::printf("energy      (no Potential in the file; run grove forces to add it)\n");
    }
    if (!p.run_parameters.empty()) {
        std::printf("run parameters\n");
        for (const auto& [key, value] : p.run_parameters) std::printf("  %-28s %s\n", key.c_str(), value.c_str());
    }
    return 0;
}

} // namespace

int command_info(int argc, char** argv)
{
    cxxopts::Options options("grove info", "Describe a snapshot: particle counts per type (with each component's\n"
                                           "Lagrangian radii), time, units, total mass, energies when the file holds\n"
                                           "potentials, and the run parameters.");
    options.add_options()("file", "Snapshot (HDF5, tipsy or GADGET binary)", cxxopts::value<std::string>());
    add_input_units_option(options);
    options.parse_positional({"file"});
    options.positional_help("FILE");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    if (!parsed->count("file")) throw std::runtime_error("missing snapshot file (grove info FILE)");
    return run_info((*parsed)["file"].as<std::string>(), input_units(*parsed));
}

} // namespace grove
