// grove ic MODEL -n N --seed S -o FILE: initial conditions written as a snapshot.
#include <cstdio>
#include <map>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "core/galaxy_model.hpp"
#include "core/ic_models.hpp"
#include "core/memory_plan.hpp"
#include "core/snapshot.hpp"

namespace grove {

namespace {

// Everything `grove ic` needs, parsed from the command line.
struct IcConfig {
    std::string model, output;
    std::size_t n = 0;
    std::uint64_t seed = 1;
    double cutoff = 0;                           // plummer
    double mass = 1, scale = 1, truncation = 0;  // hernquist
    std::string units = "nbody";                 // hernquist
    bool random_masses = false;                  // uniform
    GalaxyParams galaxy;                         // galaxy
    std::map<std::string, std::string> recorded; // every option, into /RunParameters
};

IcConfig ic_config(const cxxopts::ParseResult& r)
{
    if (!r.count("model")) throw std::runtime_error("missing model (plummer, hernquist, galaxy or uniform)");
    if (!r.count("output")) throw std::runtime_error("missing output path (-o FILE)");
    IcConfig c;
    c.model = r["model"].as<std::string>();
    c.output = r["output"].as<std::string>();
    const long long n = r["n"].as<long long>();
    if (n <= 0) throw std::runtime_error("-n must be > 0 (got " + std::to_string(n) + ")");
    c.n = static_cast<std::size_t>(n);
    check_memory_plan(Workload::make_model, c.n, "grove ic -n " + std::to_string(n));
    c.seed = r["seed"].as<unsigned long long>();
    c.cutoff = r["cutoff"].as<double>();
    c.mass = r["mass"].as<double>();
    c.scale = r["scale"].as<double>();
    c.truncation = r["truncation"].as<double>();
    c.units = r["units"].as<std::string>();
    c.random_masses = r.count("random-masses") > 0;
    GalaxyParams& g = c.galaxy;
    g.bulge_mass = r["bulge-mass"].as<double>();
    g.bulge_scale = r["bulge-scale"].as<double>();
    g.bulge_truncation = r["bulge-truncation"].as<double>();
    g.disk_mass = r["disk-mass"].as<double>();
    g.disk_scale_length = r["disk-scale-length"].as<double>();
    g.disk_scale_height = r["disk-scale-height"].as<double>();
    g.toomre_q = r["disk-q"].as<double>();
    g.q_radius = r["disk-q-radius"].as<double>();
    const std::string halo = r["halo"].as<std::string>();
    if (c.model == "galaxy" && halo != "nfw" && halo != "hernquist")
        throw std::runtime_error("--halo must be nfw or hernquist (got '" + halo + "')");
    g.halo_profile = halo == "nfw" ? HaloProfile::Nfw : HaloProfile::Hernquist;
    g.halo_mass = r["halo-mass"].as<double>();
    g.halo_scale = r["halo-scale"].as<double>();
    g.halo_truncation = r["halo-truncation"].as<double>();
    c.recorded = recorded_options(r, "ic");
    return c;
}

int run_ic(const IcConfig& c)
{
    ParticleSet p;
    if (c.model == "plummer") {
        p = make_plummer(c.n, c.seed, c.cutoff);
    } else if (c.model == "hernquist") {
        const Units units = units_by_name(c.units);
        p = make_hernquist(c.n, c.seed, c.mass, c.scale, units.G, c.truncation);
        p.units = units;
    } else if (c.model == "galaxy") {
        p = make_galaxy(c.n, c.seed, c.galaxy);
    } else if (c.model == "uniform") {
        p = make_uniform_cube(c.n, c.seed, c.random_masses);
    } else {
        throw std::runtime_error("unknown model '" + c.model + "' (use plummer, hernquist, galaxy or uniform)");
    }
    for (const auto& [key, value] : c.recorded) p.run_parameters[key] = value;
    write_snapshot(c.output, p);
    std::printf("wrote %s: %s model, %zu particles, seed %llu\n", c.output.c_str(), c.model.c_str(), p.size(),
                static_cast<unsigned long long>(c.seed));
    return 0;
}

} // namespace

int command_ic(int argc, char** argv)
{
    cxxopts::Options options("grove ic", "Make initial conditions.\n"
                                         "  plummer    Plummer sphere in Henon units (G = M = 1, E = -1/4)\n"
                                         "  hernquist  Hernquist sphere of mass --mass and scale --scale\n"
                                         "  galaxy     bulge + exponential disk + halo in equilibrium, GADGET units\n"
                                         "             (kpc, km/s, 1e10 Msun); types 3, 2, 1\n"
                                         "  uniform    uniform cube [-1,1]^3 at rest (benchmarks)");
    options.add_options()("model", "plummer | hernquist | galaxy | uniform", cxxopts::value<std::string>())(
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
    const GalaxyParams g;
    auto num = [](double v) { return cxxopts::value<double>()->default_value(std::to_string(v)); };
    options.add_options("galaxy (GADGET units: kpc, km/s, 1e10 Msun)")("bulge-mass", "bulge mass (1e10 Msun)",
                                                                       num(g.bulge_mass))(
        "bulge-scale", "bulge Hernquist scale radius (kpc)",
        num(g.bulge_scale))("bulge-truncation", "bulge taper radius r_t of exp(-(r/r_t)^2) (kpc)",
                            num(g.bulge_truncation))("disk-mass", "disk mass (1e10 Msun)", num(g.disk_mass))(
        "disk-scale-length", "disk exponential scale length R_d (kpc)",
        num(g.disk_scale_length))("disk-scale-height", "disk sech^2 scale height z0 (kpc)", num(g.disk_scale_height))(
        "disk-q", "Toomre Q at the reference radius",
        num(g.toomre_q))("disk-q-radius", "reference radius for Q (units of R_d)", num(g.q_radius))(
        "halo", "halo profile: nfw or hernquist",
        cxxopts::value<std::string>()->default_value("nfw"))("halo-mass", "halo mass (1e10 Msun)", num(g.halo_mass))(
        "halo-scale", "halo scale radius, NFW r_s or Hernquist a (kpc)",
        num(g.halo_scale))("halo-truncation", "halo taper radius r_t of exp(-(r/r_t)^2) (kpc)", num(g.halo_truncation));
    options.parse_positional({"model"});
    options.positional_help("MODEL -n N -o FILE");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    return run_ic(ic_config(*parsed));
}

} // namespace grove
