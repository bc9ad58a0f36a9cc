// grove ic MODEL -n N --seed S -o FILE: initial conditions written as a snapshot.
#include <cstdio>

#include "src/cli_common.hpp"
#include "src/commands.hpp"
#include "src/ic_models.hpp"
#include "src/snapshot.hpp"

namespace grove {

int command_ic(int argc, char** argv)
{
    cxxopts::Options options("grove ic", "Make initial conditions.\n"
                                         "  plummer    Plummer sphere in Henon units (G = M = 1, E = -1/4)\n"
                                         "  hernquist  Hernquist sphere of mass --mass and scale --scale\n"
                                         "  uniform    uniform cube [-1,1]^3 at rest (benchmarks)");
    options.add_options()("model", "plummer | hernquist | uniform", cxxopts::value<std::string>())(
        "n", "Number of particles", cxxopts::value<long long>()->default_value("10000"))(
        "seed", "Random seed (same seed, same file on any machine)",
        cxxopts::value<unsigned long long>()->default_value("1"))("o,output", "Output snapshot (required)",
                                                                  cxxopts::value<std::string>())(
        "cutoff", "plummer: truncation radius in Henon length units (0 = none)",
        cxxopts::value<double>()->default_value("0"))("mass", "hernquist: total mass (mass units)",
                                                      cxxopts::value<double>()->default_value("1"))(
        "scale", "hernquist: scale radius a (length units)", cxxopts::value<double>()->default_value("1"))(
        "truncation", "hernquist: truncation radius (length units, 0 = none)",
        cxxopts::value<double>()->default_value("0"))(
        "units", "hernquist: nbody (G = 1) or gadget (kpc, km/s, 1e10 Msun, G = 43007.1)",
        cxxopts::value<std::string>()->default_value("nbody"))(
        "random-masses", "uniform: masses uniform in [0.5, 1.5]/N instead of 1/N");
    options.parse_positional({"model"});
    options.positional_help("MODEL -n N -o FILE");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    const auto& r = *parsed;
    if (!r.count("model")) throw std::runtime_error("missing model (plummer, hernquist or uniform)");
    if (!r.count("output")) throw std::runtime_error("missing output path (-o FILE)");
    const std::string model = r["model"].as<std::string>();
    const long long n = r["n"].as<long long>();
    if (n <= 0) throw std::runtime_error("-n must be > 0 (got " + std::to_string(n) + ")");
    const auto count = static_cast<std::size_t>(n);
    const std::uint64_t seed = r["seed"].as<unsigned long long>();

    ParticleSet p;
    if (model == "plummer") {
        p = make_plummer(count, seed, r["cutoff"].as<double>());
    } else if (model == "hernquist") {
        const Units units = units_by_name(r["units"].as<std::string>());
        p = make_hernquist(count, seed, r["mass"].as<double>(), r["scale"].as<double>(), units.G,
                           r["truncation"].as<double>());
        p.units = units;
    } else if (model == "uniform") {
        p = make_uniform_cube(count, seed, r.count("random-masses") > 0);
    } else {
        throw std::runtime_error("unknown model '" + model + "' (use plummer, hernquist or uniform)");
    }
    record_options(r, "ic", p);
    const std::string out = r["output"].as<std::string>();
    write_snapshot(out, p);
    std::printf("wrote %s: %s model, %zu particles, seed %llu\n", out.c_str(), model.c_str(), p.size(),
                static_cast<unsigned long long>(seed));
    return 0;
}

} // namespace grove
