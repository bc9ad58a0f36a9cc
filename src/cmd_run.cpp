// grove run FILE -o DIR: evolve a snapshot with an integrator over any engine, writing
// snapshots, a diagnostics table, the parameters used and a timing breakdown.
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include "integrators/hermite.hpp"
#include "integrators/leapfrog.hpp"
#include "src/checkpoint.hpp"
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

// Set by SIGINT/SIGTERM: the run finishes its interval, writes a checkpoint and exits.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void request_stop(int signal)
{
    g_stop_signal = signal;
}
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
    // The integrator's state beyond the particles, into / out of a checkpoint.
    virtual void save(Checkpoint& c) const = 0;
    virtual void resume(const Checkpoint& c, ParticleSet& p) = 0;
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
    void save(Checkpoint&) const override {}       // the particles carry the forces
    void resume(const Checkpoint&, ParticleSet& p) override { leapfrog_.resume(p); }
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
    void save(Checkpoint& c) const override
    {
        c.particles.acc = hermite_.state().a;
        if (c.particles.pot.size() != c.particles.mass.size())
            c.particles.pot = Eigen::VectorXd::Zero(c.particles.mass.size());
        c.jerk = hermite_.state().j;
        c.particle_time = hermite_.state().t;
        c.particle_step = hermite_.steps();
        c.block_steps = hermite_.block_steps();
        c.particle_steps = hermite_.particle_steps();
    }
    void resume(const Checkpoint& c, ParticleSet& p) override
    {
        hermite_.resume(p, c.jerk, c.particle_time, c.particle_step, c.block_steps, c.particle_steps);
    }
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
        cxxopts::value<int>()->default_value("10"))("checkpoint-every",
                                                    "Wall-clock seconds between checkpoints (DIR/checkpoint.hdf5)",
                                                    cxxopts::value<double>()->default_value("1800"))(
        "checkpoint-steps", "Also checkpoint every K steps or intervals (0: off)",
        cxxopts::value<long long>()->default_value("0"))(
        "restart", "Continue the run in DIR from its checkpoint (takes no other options)",
        cxxopts::value<std::string>());
    add_engine_options(options);
    options.parse_positional({"file"});
    options.positional_help("FILE -o DIR --t-end T (--dt DT | --integrator hermite)");
    auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    // A restart re-reads the original command line from the checkpoint.
    std::optional<Checkpoint> restart;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (parsed->count("restart")) {
        if (argc != 3) throw std::runtime_error("--restart DIR takes no other options (they come from the checkpoint)");
        const fs::path cp = fs::path((*parsed)["restart"].as<std::string>()) / "checkpoint.hdf5";
        if (!fs::exists(cp)) throw std::runtime_error("no checkpoint at " + cp.string());
        restart = read_checkpoint(cp.string());
        args = restart->argv;
        std::vector<char*> c_argv{argv[0]};
        for (auto& a : args) c_argv.push_back(a.data());
        parsed = parse_command(options, static_cast<int>(c_argv.size()), c_argv.data());
    }
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
    const double t_start = p.time; // the run's start, also on restart
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

    const double checkpoint_every = r["checkpoint-every"].as<double>();
    const long long checkpoint_steps = r["checkpoint-steps"].as<long long>();
    if (!(checkpoint_every > 0) || checkpoint_steps < 0)
        throw std::runtime_error("--checkpoint-every must be > 0 and --checkpoint-steps >= 0");
    const fs::path dir(r["output"].as<std::string>());
    if (!restart && (fs::exists(dir / "diagnostics.txt") || fs::exists(snapshot_name(dir, 0))))
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
    if (!restart) {
        std::ofstream yml(dir / "run.yml");
        yml << "# grove run: every parameter used\n";
        for (const auto& [k, v] : p.run_parameters) yml << k << ": \"" << v << "\"\n";
        yml << "run.steps: " << total_steps << "\n";
    }

    const auto wall_start = Clock::now();
    double io_seconds = 0;
    long long first_step = 1;
    double next_snapshot = t_start + snap_every, e0 = 0;
    int snapshot_index = 0;
    std::ofstream diag;
    if (restart) {
        const std::map<std::string, std::string> parameters = p.run_parameters;
        p = restart->particles;
        p.run_parameters = parameters;
        stepper->resume(*restart, p);
        first_step = restart->step + 1;
        next_snapshot = restart->next_snapshot;
        snapshot_index = restart->snapshot_index;
        e0 = restart->reference_energy;
        // Lines written after the checkpoint would be written again: cut them.
        fs::resize_file(dir / "diagnostics.txt", static_cast<std::uintmax_t>(restart->diagnostics_bytes));
        diag.open(dir / "diagnostics.txt", std::ios::app);
        std::printf("restarting %s at t = %.10g (step %lld)\n", dir.string().c_str(), p.time, restart->step);
    } else {
        stepper->start(p);
        e0 = compute_diagnostics(p, p.pot).total;
        diag.open(dir / "diagnostics.txt");
    }
    if (!restart)
        diag << "# grove run diagnostics: " << engine_name << ", " << integrator << " "
             << (hermite ? "eta = " + std::to_string(r["eta"].as<double>()) + ", dt-max = " : "dt = ") << interval
             << ", eps = " << engine_opts.gravity.eps << ", G = " << engine_opts.gravity.G << "\n"
             << "# time step kinetic potential total rel_energy_error virial_ratio px py pz Lx Ly Lz r10 r50 r90 "
                "wall_s\n";
    auto log_line = [&](long long step) {
        const Diagnostics d = compute_diagnostics(p, p.pot);
        const double de = e0 != 0 ? (d.total - e0) / std::abs(e0) : 0;
        char line[512];
        std::snprintf(line, sizeof line,
                      "%.10g %lld %.12e %.12e %.12e %.6e %.8f %.6e %.6e %.6e %.6e %.6e %.6e %.6g %.6g %.6g %.3f\n",
                      p.time, step, d.kinetic, d.potential, d.total, de, d.virial_ratio, d.momentum[0], d.momentum[1],
                      d.momentum[2], d.angular_momentum[0], d.angular_momentum[1], d.angular_momentum[2],
                      d.lagrangian_radii[0], d.lagrangian_radii[1], d.lagrangian_radii[2], since(wall_start));
        diag << line << std::flush;
        return de;
    };
    auto write_snap = [&] {
        const auto t = Clock::now();
        write_snapshot(snapshot_name(dir, snapshot_index++), p);
        io_seconds += since(t);
    };
    auto last_checkpoint = Clock::now();
    auto write_checkpoint_now = [&](long long step) {
        const auto t0 = Clock::now();
        Checkpoint c;
        c.particles = p;
        c.argv = args;
        c.step = step;
        c.next_snapshot = next_snapshot;
        c.snapshot_index = snapshot_index;
        c.reference_energy = e0;
        diag.flush();
        c.diagnostics_bytes = static_cast<long long>(fs::file_size(dir / "diagnostics.txt"));
        stepper->save(c);
        write_checkpoint((dir / "checkpoint.hdf5").string(), c);
        io_seconds += since(t0);
        last_checkpoint = Clock::now();
    };
    if (!restart) {
        log_line(0);
        write_snap();
    }
    const bool tty = isatty(fileno(stderr));
    g_stop_signal = 0;
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    for (long long s = first_step; s <= total_steps; ++s) {
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
        if (!last && (g_stop_signal || (checkpoint_steps > 0 && s % checkpoint_steps == 0) ||
                      since(last_checkpoint) > checkpoint_every))
            write_checkpoint_now(s);
        if (g_stop_signal && !last) {
            if (tty) std::fprintf(stderr, "\n");
            std::printf("interrupted (signal %d) at t = %.10g after step %lld: checkpoint written; continue with "
                        "grove run --restart %s\n",
                        static_cast<int>(g_stop_signal), p.time, s, dir.string().c_str());
            std::signal(SIGINT, SIG_DFL);
            std::signal(SIGTERM, SIG_DFL);
            return 128 + static_cast<int>(g_stop_signal);
        }
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (tty) std::fprintf(stderr, "\n");
    const double wall = since(wall_start);
    const auto done = static_cast<double>(total_steps - first_step + 1);
    std::printf("done: %lld %s to t = %.6g in %.2f s (%.2f ms each); %d snapshots in %s\n", total_steps,
                hermite ? "dt-max intervals" : "steps", p.time, wall, 1e3 * wall / std::max(1.0, done), snapshot_index,
                dir.string().c_str());
    std::printf("timing: force engine %.2f s, integration and diagnostics %.2f s, I/O %.2f s; %s\n",
                stepper->force_seconds(), wall - stepper->force_seconds() - io_seconds, io_seconds,
                stepper->summary().c_str());
    return 0;
}

} // namespace grove
