// grove run FILE -o DIR: evolve a snapshot with an integrator over any engine, writing
// snapshots, a diagnostics table, the parameters used and a timing breakdown.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "integrators/leapfrog.hpp"
#include "src/cli_common.hpp"
#include "src/commands.hpp"
#include "src/diagnostics.hpp"
#include "src/snapshot.hpp"

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

} // namespace

int command_run(int argc, char** argv)
{
    cxxopts::Options options("grove run", "Evolve a snapshot. Writes DIR/snapshot_NNNN.hdf5, DIR/diagnostics.txt,\n"
                                          "DIR/run.yml and a timing breakdown at the end.");
    options.add_options()("file", "Initial snapshot (HDF5)", cxxopts::value<std::string>())(
        "o,output", "Output directory (created; must not hold a previous run)",
        cxxopts::value<std::string>())("integrator", "leapfrog (kick-drift-kick, shared step)",
                                       cxxopts::value<std::string>()->default_value("leapfrog"))(
        "dt", "Time step (time units of the snapshot)",
        cxxopts::value<double>())("t-end", "Time to stop at (time units)", cxxopts::value<double>())(
        "snapshot-every", "Time between snapshots (default t-end / 10)", cxxopts::value<double>())(
        "log-every", "Steps between diagnostics lines", cxxopts::value<int>()->default_value("10"));
    add_engine_options(options);
    options.parse_positional({"file"});
    options.positional_help("FILE -o DIR --dt DT --t-end T");
    const auto parsed = parse_command(options, argc, argv);
    if (!parsed) return 0;
    const auto& r = *parsed;
    if (!r.count("file")) throw std::runtime_error("missing input snapshot (grove run FILE -o DIR)");
    if (!r.count("output")) throw std::runtime_error("missing output directory (-o DIR)");
    const std::string integrator = r["integrator"].as<std::string>();
    if (integrator == "hermite")
        throw std::runtime_error("--integrator hermite is not available yet (issue 7); use leapfrog");
    if (integrator != "leapfrog") throw std::runtime_error("unknown --integrator '" + integrator + "' (use leapfrog)");
    if (!r.count("dt")) throw std::runtime_error("leapfrog needs --dt");
    if (!r.count("t-end")) throw std::runtime_error("missing --t-end");
    const double dt = r["dt"].as<double>();
    ParticleSet p = read_snapshot(r["file"].as<std::string>());
    const double t_start = p.time;
    const double t_end = r["t-end"].as<double>();
    if (!(dt > 0) || !std::isfinite(dt)) throw std::runtime_error("--dt must be a finite number > 0");
    if (!(t_end > t_start))
        throw std::runtime_error("--t-end must be later than the snapshot's time " + std::to_string(t_start));
    const long long total_steps = std::llround((t_end - t_start) / dt);
    if (total_steps < 1) throw std::runtime_error("--t-end is less than one --dt after the start");
    const double snap_every = r.count("snapshot-every") ? r["snapshot-every"].as<double>() : (t_end - t_start) / 10;
    if (!(snap_every > 0)) throw std::runtime_error("--snapshot-every must be > 0");
    const int log_every = r["log-every"].as<int>();
    if (log_every < 1) throw std::runtime_error("--log-every must be >= 1");

    const fs::path dir(r["output"].as<std::string>());
    if (fs::exists(dir / "diagnostics.txt") || fs::exists(snapshot_name(dir, 0)))
        throw std::runtime_error("output directory " + dir.string() + " already holds a run; choose another -o");
    fs::create_directories(dir);

    const EngineOptions engine_opts = engine_options(r, p);
    auto engine = make_engine(engine_opts);
    record_options(r, "run", p);
    p.run_parameters["run.engine_used"] = engine->name();
    {
        std::ofstream yml(dir / "run.yml");
        yml << "# grove run: every parameter used\n";
        for (const auto& [k, v] : p.run_parameters) yml << k << ": \"" << v << "\"\n";
        yml << "run.steps: " << total_steps << "\n";
    }

    const auto wall_start = Clock::now();
    double io_seconds = 0;
    std::map<std::string, double> engine_phases;
    auto add_phases = [&] {
        for (const auto& [name, s] : engine->last_phase_times()) engine_phases[name] += s;
    };
    Leapfrog lf(*engine, dt);
    lf.start(p);
    add_phases();
    const Diagnostics d0 = compute_diagnostics(p, p.pot);
    std::ofstream diag(dir / "diagnostics.txt");
    diag << "# grove run diagnostics: " << engine->name() << ", leapfrog dt = " << dt
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
        lf.step(p);
        add_phases();
        p.time = t_start + static_cast<double>(s) * dt; // no accumulated rounding in the clock
        const bool last = s == total_steps;
        if (s % log_every == 0 || last) {
            const auto t = Clock::now();
            const double de = log_line(s);
            io_seconds += since(t);
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
        if (p.time >= next_snapshot - 1e-6 * dt || last) {
            write_snap();
            while (next_snapshot <= p.time + 1e-6 * dt) next_snapshot += snap_every;
        }
    }
    if (tty) std::fprintf(stderr, "\n");
    const double wall = since(wall_start);
    std::printf("done: %lld steps to t = %.6g in %.2f s (%.2f ms/step); %d snapshots in %s\n", total_steps, p.time,
                wall, 1e3 * wall / static_cast<double>(total_steps), snapshot_index, dir.string().c_str());
    std::printf("timing: force engine %.2f s (", lf.force_seconds());
    bool first = true;
    for (const auto& [name, s] : engine_phases) {
        std::printf("%s%s %.2f", first ? "" : ", ", name.c_str(), s);
        first = false;
    }
    std::printf("), integration and diagnostics %.2f s, I/O %.2f s\n", wall - lf.force_seconds() - io_seconds,
                io_seconds);
    return 0;
}

} // namespace grove
