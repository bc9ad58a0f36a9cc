// grove run FILE -o DIR: evolve a snapshot with an integrator over any engine, writing
// snapshots, a diagnostics table, the parameters used and a timing breakdown.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "integrators/hermite.hpp"
#include "integrators/leapfrog.hpp"
#include "src/cli_common.hpp"
#include "src/commands.hpp"
#include "src/diagnostics.hpp"
#include "src/hermite_cpu.hpp"
#include "src/snapshot.hpp"
#ifdef GROVE_HAVE_CUDA
#include "gpu/hermite_gpu.h"
#endif

namespace grove {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t)
{
    return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string snapshot_name(const fs::path& dir, int index)
{
    char name[32];
    std::snprintf(name, sizeof name, "snapshot_%04d.hdf5", index);
    return (dir / name).string();
}

std::string hms(double seconds)
{
    char buf[32];
    const long s = std::lround(seconds);
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    return buf;
}

// What the run loop needs from an integrator: advance to a time, and potentials there.
class Stepper {
  public:
    virtual ~Stepper() = default;
    virtual void start(ParticleSet& p) = 0;
    virtual void advance_to(double t, ParticleSet& p) = 0; // one interval of the run loop
    virtual void fill_potentials(ParticleSet& p) = 0;
    virtual double force_seconds() const = 0;
    virtual std::string summary() const = 0;
};

class LeapfrogStepper final : public Stepper {
  public:
    LeapfrogStepper(std::unique_ptr<ForceEngine> engine, double dt)
        : engine_(std::move(engine)), leapfrog_(*engine_, dt)
    {
    }
    void start(ParticleSet& p) override
    {
        leapfrog_.start(p);
        add_phases();
    }
    void advance_to(double t, ParticleSet& p) override
    {
        leapfrog_.step(p);
        add_phases();
        p.time = t; // no accumulated rounding in the clock
    }
    void fill_potentials(ParticleSet&) override {} // every step computes them
    double force_seconds() const override { return leapfrog_.force_seconds(); }
    std::string summary() const override
    {
        std::string s = "force engine phases:";
        for (const auto& [name, v] : phases_) s += " " + name + " " + std::to_string(v).substr(0, 6);
        return s;
    }

  private:
    void add_phases()
    {
        for (const auto& [name, v] : engine_->last_phase_times()) phases_[name] += v;
    }
    std::unique_ptr<ForceEngine> engine_;
    Leapfrog leapfrog_;
    std::map<std::string, double> phases_;
};

class HermiteStepper final : public Stepper {
  public:
    HermiteStepper(std::unique_ptr<HermiteEngine> engine, HermiteParams params)
        : engine_(std::move(engine)), hermite_(*engine_, params)
    {
    }
    void start(ParticleSet& p) override
    {
        hermite_.start(p);
        fill_potentials(p);
    }
    void advance_to(double t, ParticleSet& p) override { hermite_.advance_to(t, p); }
    void fill_potentials(ParticleSet& p) override
    {
        p.pot = hermite_.potentials();
        p.acc = hermite_.state().a;
    }
    double force_seconds() const override { return hermite_.force_seconds(); }
    std::string summary() const override
    {
        return "hermite: " + std::to_string(hermite_.block_steps()) + " block steps, " +
               std::to_string(hermite_.particle_steps()) + " particle steps";
    }

  private:
    std::unique_ptr<HermiteEngine> engine_;
    Hermite hermite_;
};

std::unique_ptr<HermiteEngine> make_hermite_engine(const EngineOptions& o)
{
    std::string name = o.engine;
    if (name == "direct") name = gpu_available() ? "direct-gpu" : "direct-cpu";
    if (name == "direct-cpu") return std::make_unique<HermiteCpuEngine>(o.gravity);
    if (name == "direct-gpu") {
#ifdef GROVE_HAVE_CUDA
        if (!gpu_available()) throw std::runtime_error("direct-gpu needs a CUDA GPU and none is visible");
        return std::make_unique<HermiteGpuEngine>(o.gravity, precision_by_name(o.precision));
#else
        throw std::runtime_error("direct-gpu needs the GPU engines; this build has none");
#endif
    }
    throw std::runtime_error("--integrator hermite runs on direct, direct-cpu or direct-gpu (got '" + o.engine + "')");
}

} // namespace

int command_run(int argc, char** argv)
{
    cxxopts::Options options("grove run",
                             "Evolve a snapshot. Writes DIR/snapshot_NNNN.hdf5, DIR/diagnostics.txt,\n"
                             "DIR/run.yml and a timing breakdown at the end.\n"
                             "  leapfrog: kick-drift-kick with shared step --dt, any engine\n"
                             "  hermite:  4th-order Hermite, block time steps (--eta, --dt-max), direct engines");
    options.add_options()("file", "Initial snapshot (HDF5)", cxxopts::value<std::string>())(
        "o,output", "Output directory (created; must not hold a previous run)", cxxopts::value<std::string>())(
        "integrator", "leapfrog or hermite", cxxopts::value<std::string>()->default_value("leapfrog"))(
        "dt", "leapfrog: time step (time units of the snapshot)", cxxopts::value<double>())(
        "eta", "hermite: Aarseth accuracy parameter", cxxopts::value<double>()->default_value("0.01"))(
        "dt-max", "hermite: largest block step, a power of two (diagnostics come at its multiples)",
        cxxopts::value<double>()->default_value("0.0625"))("t-end", "Time to stop at (time units)",
                                                           cxxopts::value<double>())(
        "snapshot-every", "Time between snapshots (default t-end / 10)", cxxopts::value<double>())(
        "log-every", "Steps (leapfrog) or dt-max intervals (hermite) between diagnostics lines",
        cxxopts::value<int>()->default_value("10"));
    add_engine_options(options);
    options.parse_positional({"file"});
    options.positional_help("FILE -o DIR --t-end T (--dt DT | --integrator hermite)");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    const auto& r = *parsed;
    if (!r.count("file")) throw std::runtime_error("missing input snapshot (grove run FILE -o DIR)");
    if (!r.count("output")) throw std::runtime_error("missing output directory (-o DIR)");
    const std::string integrator = r["integrator"].as<std::string>();
    if (integrator != "leapfrog" && integrator != "hermite")
        throw std::runtime_error("unknown --integrator '" + integrator + "' (use leapfrog or hermite)");
    const bool hermite = integrator == "hermite";
    if (!hermite && !r.count("dt")) throw std::runtime_error("leapfrog needs --dt");
    if (!r.count("t-end")) throw std::runtime_error("missing --t-end");
    ParticleSet p = read_snapshot(r["file"].as<std::string>());
    const double t_start = p.time;
    const double t_end = r["t-end"].as<double>();
    // The run loop's interval: the leapfrog step, or Hermite's largest block step (all particles
    // meet at its multiples).
    const double interval = hermite ? r["dt-max"].as<double>() : r["dt"].as<double>();
    if (!(interval > 0) || !std::isfinite(interval)) throw std::runtime_error("--dt / --dt-max must be finite and > 0");
    if (!(t_end > t_start))
        throw std::runtime_error("--t-end must be later than the snapshot's time " + std::to_string(t_start));
    const long long total_steps = std::llround((t_end - t_start) / interval);
    if (total_steps < 1) throw std::runtime_error("--t-end is less than one step after the start");
    if (hermite && std::abs(t_start + static_cast<double>(total_steps) * interval - t_end) > 1e-12 * t_end)
        throw std::runtime_error("hermite: --t-end must be a multiple of --dt-max after the start");
    const double snap_every = r.count("snapshot-every") ? r["snapshot-every"].as<double>() : (t_end - t_start) / 10;
    if (!(snap_every > 0)) throw std::runtime_error("--snapshot-every must be > 0");
    const int log_every = r["log-every"].as<int>();
    if (log_every < 1) throw std::runtime_error("--log-every must be >= 1");

    const fs::path dir(r["output"].as<std::string>());
    if (fs::exists(dir / "diagnostics.txt") || fs::exists(snapshot_name(dir, 0)))
        throw std::runtime_error("output directory " + dir.string() + " already holds a run; choose another -o");

    const EngineOptions engine_opts = engine_options(r, p);
    std::unique_ptr<Stepper> stepper;
    std::string engine_name;
    if (hermite) {
        auto engine = make_hermite_engine(engine_opts);
        engine_name = engine->name();
        stepper = std::make_unique<HermiteStepper>(
            std::move(engine), HermiteParams{r["eta"].as<double>(), r["eta"].as<double>(), interval, 0x1.0p-40});
    } else {
        auto engine = make_engine(engine_opts);
        engine_name = engine->name();
        stepper = std::make_unique<LeapfrogStepper>(std::move(engine), interval);
    }
    fs::create_directories(dir);
    record_options(r, "run", p);
    p.run_parameters["run.engine_used"] = engine_name;
    {
        std::ofstream yml(dir / "run.yml");
        yml << "# grove run: every parameter used\n";
        for (const auto& [k, v] : p.run_parameters) yml << k << ": \"" << v << "\"\n";
        yml << "run.steps: " << total_steps << "\n";
    }

    const auto wall_start = Clock::now();
    double io_seconds = 0;
    stepper->start(p);
    const Diagnostics d0 = compute_diagnostics(p, p.pot);
    std::ofstream diag(dir / "diagnostics.txt");
    diag << "# grove run diagnostics: " << engine_name << ", " << integrator << " "
         << (hermite ? "eta = " + std::to_string(r["eta"].as<double>()) + ", dt-max = " : "dt = ") << interval
         << ", eps = " << engine_opts.gravity.eps << ", G = " << engine_opts.gravity.G << "\n"
         << "# time step kinetic potential total rel_energy_error virial_ratio px py pz Lx Ly Lz r10 r50 r90 wall_s\n";
    auto log_line = [&](long long step) {
        const Diagnostics d = compute_diagnostics(p, p.pot);
        const double de = d0.total != 0 ? (d.total - d0.total) / std::abs(d0.total) : 0;
        char line[512];
        std::snprintf(line, sizeof line,
                      "%.10g %lld %.12e %.12e %.12e %.6e %.8f %.6e %.6e %.6e %.6e %.6e %.6e %.6g %.6g %.6g %.3f\n",
                      p.time, step, d.kinetic, d.potential, d.total, de, d.virial_ratio, d.momentum[0], d.momentum[1],
                      d.momentum[2], d.angular_momentum[0], d.angular_momentum[1], d.angular_momentum[2],
                      d.lagrangian_radii[0], d.lagrangian_radii[1], d.lagrangian_radii[2], since(wall_start));
        diag << line << std::flush;
        return de;
    };
    int snapshot_index = 0;
    auto write_snap = [&] {
        const auto t = Clock::now();
        write_snapshot(snapshot_name(dir, snapshot_index++), p);
        io_seconds += since(t);
    };
    log_line(0);
    write_snap();
    const bool tty = isatty(fileno(stderr));
    double next_snapshot = t_start + snap_every;
    for (long long s = 1; s <= total_steps; ++s) {
        const double t = t_start + static_cast<double>(s) * interval;
        stepper->advance_to(t, p);
        const bool last = s == total_steps;
        const bool snapshot_due = p.time >= next_snapshot - 1e-6 * interval || last;
        if (s % log_every == 0 || last || snapshot_due) {
            stepper->fill_potentials(p);
            const auto t0 = Clock::now();
            const double de = log_line(s);
            io_seconds += since(t0);
            const double elapsed = since(wall_start);
            const double eta = elapsed / static_cast<double>(s) * static_cast<double>(total_steps - s);
            if (tty)
                std::fprintf(stderr, "\r  t = %-10.6g step %lld/%lld  dE/E %+.2e  elapsed %s  ETA %s   ", p.time, s,
                             total_steps, de, hms(elapsed).c_str(), hms(eta).c_str());
            else
                std::printf("t = %.6g step %lld/%lld dE/E %+.3e elapsed %.1f s ETA %.1f s\n", p.time, s, total_steps,
                            de, elapsed, eta);
            std::fflush(stdout);
        }
        if (snapshot_due) {
            write_snap();
            while (next_snapshot <= p.time + 1e-6 * interval) next_snapshot += snap_every;
        }
    }
    if (tty) std::fprintf(stderr, "\n");
    const double wall = since(wall_start);
    std::printf("done: %lld %s to t = %.6g in %.2f s (%.2f ms each); %d snapshots in %s\n", total_steps,
                hermite ? "dt-max intervals" : "steps", p.time, wall, 1e3 * wall / static_cast<double>(total_steps),
                snapshot_index, dir.string().c_str());
    std::printf("timing: force engine %.2f s, integration and diagnostics %.2f s, I/O %.2f s; %s\n",
                stepper->force_seconds(), wall - stepper->force_seconds() - io_seconds, io_seconds,
                stepper->summary().c_str());
    return 0;
}

} // namespace grove
