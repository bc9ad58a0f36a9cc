#include "cli/run_simulation.hpp"

#include <omp.h>
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli/cli_common.hpp"
#include "core/diagnostics.hpp"
#include "core/run_lock.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_writer.hpp"
#include "core/wall_clock.hpp"
#include "engines/engines.hpp"
#include "parallel/communicator.hpp"
#include "parallel/distributed_engine.hpp"
#include "parallel/distributed_hermite.hpp"

namespace grove {

namespace {

namespace fs = std::filesystem;

// Set by SIGINT/SIGTERM: the run finishes its interval, writes a checkpoint and exits.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void request_stop(int signal)
{
    g_stop_signal = signal;
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

int run_simulation(const RunConfig& config, std::optional<Checkpoint> restart)
{
    const bool hermite = config.integrator.integrator != "leapfrog"; // hermite or hermite6
    // A restart takes everything from its checkpoint: the particles, their units and G, and the
    // run's start time; the input file is not read again (it may have changed or moved), but
    // for the start time of checkpoints written before it was kept.
    ParticleSet p = restart ? std::move(restart->particles) : read_snapshot(config.input);
    const double t_start = !restart                  ? p.time
                           : restart->has_start_time ? restart->start_time
                                                     : read_snapshot(config.input).time;
    const double t_end = config.t_end;
    // The run loop's interval: the leapfrog step, or Hermite's largest block step (all particles
    // meet at its multiples).
    const double interval = hermite ? config.integrator.dt_max : config.integrator.dt;
    if (!(interval > 0) || !std::isfinite(interval)) throw std::runtime_error("--dt / --dt-max must be finite and > 0");
    if (!(t_end > t_start))
        throw std::runtime_error("--t-end must be later than the snapshot's time " + std::to_string(t_start));
    const double steps_exact = (t_end - t_start) / interval;
    if (!(steps_exact <= 1e12))
        throw std::runtime_error("--dt " + std::to_string(interval) + " would take " + std::to_string(steps_exact) +
                                 " steps to --t-end; choose a larger step");
    const long long total_steps = std::llround(steps_exact);
    if (total_steps < 1) throw std::runtime_error("--t-end is less than one step after the start");
    // Every run ends exactly at --t-end: a span that is not a whole number of steps is refused with
    // the nearest choices that are (a last step of another length would break the leapfrog's
    // symmetry and Hermite's block times).
    if (std::abs(t_start + static_cast<double>(total_steps) * interval - t_end) >
        1e-9 * std::max(1.0, std::abs(t_end))) {
        const long long below = static_cast<long long>(std::floor(steps_exact)), above = below + 1;
        char what[256];
        std::snprintf(
            what, sizeof what,
            "--t-end %.10g is not a whole number of %s steps of %.10g after %.10g: use --t-end %.10g or "
            "%.10g%s",
            t_end, hermite ? "--dt-max" : "--dt", interval, t_start,
            t_start + static_cast<double>(std::max(1LL, below)) * interval,
            t_start + static_cast<double>(above) * interval,
            hermite ? "" : (", or --dt " + std::to_string((t_end - t_start) / static_cast<double>(above))).c_str());
        throw std::runtime_error(what);
    }
    if (restart && restart->step >= total_steps)
        throw std::runtime_error("the run in " + config.output + " already reached t = " + std::to_string(p.time) +
                                 "; give a later --t-end with --restart to extend it");
    const double snap_every = config.snapshot_every ? *config.snapshot_every : (t_end - t_start) / 10;
    if (!(snap_every > 0)) throw std::runtime_error("--snapshot-every must be > 0");
    const int log_every = config.log_every;
    if (log_every < 1) throw std::runtime_error("--log-every must be >= 1");

    const double checkpoint_every = config.checkpoint_every;
    const long long checkpoint_steps = config.checkpoint_steps;
    if (!(checkpoint_every > 0) || checkpoint_steps < 0)
        throw std::runtime_error("--checkpoint-every must be > 0 and --checkpoint-steps >= 0");
    const fs::path dir(config.output);
    // Under mpirun every rank computes; the first one alone owns the directory and writes.
    const Communicator& comm = Communicator::world();
    const bool root = comm.is_root();
    std::optional<RunLock> lock;
    if (root) {
        fs::create_directories(dir);
        // One run per directory at a time (a second one would interleave its files with ours).
        lock.emplace(dir.string());
        if (!lock->notice().empty()) std::fprintf(stderr, "grove run: %s\n", lock->notice().c_str());
        if (!restart && (fs::exists(dir / "diagnostics.txt") || fs::exists(snapshot_name(dir, 0))))
            throw std::runtime_error("output directory " + dir.string() + " already holds a run; choose another -o");
    }

    IntegratorConfig ic = config.integrator;
    if (!config.G_given) ic.engine.gravity.G = p.units.G;
    if (!(ic.engine.gravity.G > 0) || !std::isfinite(ic.engine.gravity.G))
        throw std::runtime_error("--G must be a finite number > 0");
    if (root) report_engine_choice(ic.engine.engine);
    const std::unique_ptr<Integrator> integrator = make_integrator(
        ic, engines(), [&](std::unique_ptr<ForceEngine> engine) { return distribute(std::move(engine), comm); },
        [&](std::unique_ptr<HermiteEngine> engine) { return distribute(std::move(engine), comm); });
    const std::string engine_name = integrator->engine_name();
    for (const auto& [key, value] : config.recorded) p.run_parameters[key] = value;
    p.run_parameters["run.engine_used"] = engine_name;
    if (!restart && root) {
        std::ofstream yml(dir / "run.yml");
        yml << "# grove run: every parameter used\n";
        for (const auto& [k, v] : p.run_parameters) yml << k << ": \"" << v << "\"\n";
        yml << "run.steps: " << total_steps << "\n";
    }

    const auto wall_start = WallClock::now();
    double io_seconds = 0;          // snapshots and checkpoints
    double diagnostics_seconds = 0; // energies and Lagrangian radii for diagnostics.txt
    long long first_step = 1;
    double next_snapshot = t_start + snap_every, e0 = 0;
    int snapshot_index = 0;
    std::ofstream diag;
    if (restart) {
        integrator->resume(restart->integrator, p);
        first_step = restart->step + 1;
        next_snapshot = config.cadence_changed ? p.time + snap_every : restart->next_snapshot;
        snapshot_index = restart->snapshot_index;
        e0 = restart->reference_energy;
        if (root) {
            // Lines written after the checkpoint would be written again: cut them.
            fs::resize_file(dir / "diagnostics.txt", static_cast<std::uintmax_t>(restart->diagnostics_bytes));
            diag.open(dir / "diagnostics.txt", std::ios::app);
            std::printf("restarting %s at t = %.10g (step %lld)\n", dir.string().c_str(), p.time, restart->step);
        }
    } else {
        integrator->start(p);
        e0 = compute_diagnostics(p, p.pot).total;
        if (root) diag.open(dir / "diagnostics.txt");
    }
    if (!restart && root)
        diag << "# grove run diagnostics: " << engine_name << ", " << ic.integrator << " "
             << (hermite ? "eta = " + std::to_string(ic.eta) + ", dt-max = " : "dt = ") << interval
             << ", eps = " << ic.engine.gravity.eps << ", G = " << ic.engine.gravity.G << "\n"
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
                      d.lagrangian_radii[0], d.lagrangian_radii[1], d.lagrangian_radii[2], seconds_since(wall_start));
        diag << line << std::flush;
        return de;
    };
    // Snapshots go to a writer thread with their own copy; the time charged to I/O is the copy
    // and any wait for the previous write. The writer gets a core of its own: an OpenMP loop
    // waits for its slowest thread, so one thread sharing a core with the writer slowed every
    // host phase of the force engine by up to 2x (bench/results/step-pipeline-h100.md).
    SnapshotWriter writer;
    const int omp_threads = omp_get_max_threads();
    if (omp_threads > 2) omp_set_num_threads(omp_threads - 1);
    struct RestoreThreads {
        int n;
        ~RestoreThreads() { omp_set_num_threads(n); }
    } restore_threads{omp_threads};
    auto write_snap = [&] {
        if (!root) {
            ++snapshot_index;
            return;
        }
        const auto t = WallClock::now();
        writer.write(snapshot_name(dir, snapshot_index++), p);
        io_seconds += seconds_since(t);
    };
    auto last_checkpoint = WallClock::now();
    auto write_checkpoint_now = [&](long long step) {
        if (!root) return;
        const auto t0 = WallClock::now();
        writer.wait(); // the snapshots the checkpoint counts are complete, and HDF5 is one thread's
        Checkpoint c;
        c.particles = p;
        c.argv = config.argv;
        c.step = step;
        c.next_snapshot = next_snapshot;
        c.snapshot_index = snapshot_index;
        c.reference_energy = e0;
        c.start_time = t_start;
        diag.flush();
        c.diagnostics_bytes = static_cast<long long>(fs::file_size(dir / "diagnostics.txt"));
        c.integrator = integrator->save(c.particles);
        write_checkpoint((dir / "checkpoint.hdf5").string(), c);
        io_seconds += seconds_since(t0);
        last_checkpoint = WallClock::now();
    };
    if (!restart) {
        if (root) log_line(0);
        write_snap();
    }
    const bool tty = isatty(fileno(stderr));
    g_stop_signal = 0;
    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    for (long long s = first_step; s <= total_steps; ++s) {
        const double t = t_start + static_cast<double>(s) * interval;
        integrator->advance_to(t, p);
        const bool last = s == total_steps;
        const bool snapshot_due = p.time >= next_snapshot - 1e-6 * interval || last;
        // A signal stops every rank after the same step, or some would wait for the others forever.
        const int stop_signal = comm.max(static_cast<int>(g_stop_signal));
        const bool log_due = s % log_every == 0 || last || snapshot_due;
        // Every finished run ends with a checkpoint, so that it can be extended (--restart DIR
        // --t-end T2).
        const bool checkpoint_due = last || stop_signal || (checkpoint_steps > 0 && s % checkpoint_steps == 0) ||
                                    seconds_since(last_checkpoint) > checkpoint_every;
        // Files see the particles in the order they were given (between them the leapfrog keeps
        // them in its tree's order). Diagnostics lines do not need it: their sums and sorted radii
        // read positions, velocities, masses and potentials, which move together.
        if (snapshot_due || checkpoint_due) integrator->restore_order(p);
        // Hermite's potentials are a force evaluation: every rank takes part.
        if (log_due) integrator->synchronize(p);
        if (!root) {
            if (snapshot_due) {
                ++snapshot_index;
                while (next_snapshot <= p.time + 1e-6 * interval) next_snapshot += snap_every;
            }
            if (stop_signal && !last) return 128 + stop_signal;
            continue;
        }
        if (log_due) {
            const auto t0 = WallClock::now();
            const double de = log_line(s);
            diagnostics_seconds += seconds_since(t0);
            const double elapsed = seconds_since(wall_start);
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
        if (checkpoint_due) write_checkpoint_now(s);
        if (stop_signal && !last) {
            if (tty) std::fprintf(stderr, "\n");
            std::printf("interrupted (signal %d) at t = %.10g after step %lld: checkpoint written; continue with "
                        "grove run --restart %s\n",
                        stop_signal, p.time, s, dir.string().c_str());
            std::signal(SIGINT, SIG_DFL);
            std::signal(SIGTERM, SIG_DFL);
            return 128 + stop_signal;
        }
    }
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (!root) return 0;
    if (tty) std::fprintf(stderr, "\n");
    const auto flush_start = WallClock::now();
    writer.wait();
    io_seconds += seconds_since(flush_start);
    const double wall = seconds_since(wall_start);
    const auto done = static_cast<double>(total_steps - first_step + 1);
    std::printf("done: %lld %s to t = %.6g in %.2f s (%.2f ms each); %d snapshots in %s\n", total_steps,
                hermite ? "dt-max intervals" : "steps", p.time, wall, 1e3 * wall / std::max(1.0, done), snapshot_index,
                dir.string().c_str());
    std::printf("timing: force engine %.2f s, integration %.2f s, diagnostics %.2f s, I/O %.2f s (snapshot copies "
                "%.2f s, waits for the writer %.2f s; the writer thread wrote for %.2f s); %s\n",
                integrator->force_seconds(), wall - integrator->force_seconds() - io_seconds - diagnostics_seconds,
                diagnostics_seconds, io_seconds, writer.copy_seconds(), writer.wait_seconds(), writer.write_seconds(),
                integrator->summary().c_str());
    return 0;
}

} // namespace grove
