#include "cli/run_simulation.hpp"

#include <unistd.h>

#include <csignal>

#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/cli_common.hpp"
#include "cli/run_outputs.hpp"
#include "cli/run_plan.hpp"
#include "core/memory_plan.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "core/wall_clock.hpp"
#include "engines/engines.hpp"
#include "parallel/communicator.hpp"
#include "parallel/distributed_diagnostics.hpp"
#include "parallel/distributed_engine.hpp"
#include "parallel/distributed_hermite.hpp"
#include "parallel/domain_tree.hpp"
#include "parallel/domains.hpp"

namespace grove {

namespace {

// Set by SIGINT/SIGTERM: the run finishes its interval (or, with block steps, the tick under
// way), writes a checkpoint and exits.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void request_stop(int signal)
{
    g_stop_signal = signal;
}

// SIGINT and SIGTERM ask the run to stop while one lives.
struct StopSignals {
    StopSignals()
    {
        g_stop_signal = 0;
        std::signal(SIGINT, request_stop);
        std::signal(SIGTERM, request_stop);
    }
    ~StopSignals()
    {
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
    }
};

std::string hms(double seconds)
{
    char buf[32];
    const long s = std::lround(seconds);
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    return buf;
}

// A restart takes everything from its checkpoint: the particles, their units and G, and the run's
// start time; the input file is not read again (it may have changed or moved), but for the start
// time of checkpoints written before it was kept.
double start_time(const RunConfig& config, const ParticleSet& p, const std::optional<Checkpoint>& restart)
{
    if (!restart) return p.time;
    return restart->has_start_time ? restart->start_time : read_snapshot(config.input, config.input_units).time;
}

// The run's integrator settings, with G from the snapshot's units unless -G gave it.
IntegratorConfig integrator_config(const RunConfig& config, const ParticleSet& p)
{
    IntegratorConfig ic = config.integrator;
    if (!config.G_given) ic.engine.gravity.G = p.units.G;
    if (!(ic.engine.gravity.G > 0) || !std::isfinite(ic.engine.gravity.G))
        throw std::runtime_error("-G must be a finite number > 0");
    return ic;
}

// The particles a new run starts from: on domains without --target (which samples the whole
// set) each rank's part of the file, else all of them.
ParticleSet initial_particles(const RunConfig& config, const Communicator& comm)
{
    if (!config.domains || config.target) return read_snapshot(config.input, config.input_units);
    const std::uint64_t n = snapshot_particle_count(config.input);
    const auto k = static_cast<std::uint64_t>(comm.size()), r = static_cast<std::uint64_t>(comm.rank());
    return read_snapshot_part(config.input, n * r / k, n * (r + 1) / k, config.input_units);
}

// One run: its plan, its integrator, its outputs, and the loop over its intervals.
class Run {
  public:
    Run(const RunConfig& config, std::optional<Checkpoint> restart);
    int execute();

  private:
    void begin();
    // What one interval's end asks for; the process status to return, or -1 to go on.
    int end_of_interval(long long step);
    // Whether the integrator should stop within an interval, where it can: a stop signal, or a
    // checkpoint due by the wall clock (the same answer on every rank).
    bool pause_requested() const;
    // The checkpoint of a pause within interval `step`; the process status, or -1 to go on.
    int pause_within_interval(long long step);
    // The status of a run that a signal stopped, its checkpoint written, said on the terminal:
    // `where` is "after" or "within" step `step`.
    int stopped(int signal, const char* where, long long step) const;
    void progress(long long step, double de) const;
    // The next snapshot of `p` (p_; on domains this rank's particles, which every rank writes in
    // turn into one file, parallel/domain_files.hpp).
    void snapshot(ParticleSet& p);
    // `p`: every particle (on domains this rank's, as for snapshot()); lent to the checkpoint for
    // its write and given back after it (the run's largest allocation, not copied).
    void write_checkpoint_now(long long step, ParticleSet& p);
    void summary() const;

    // One diagnostics line (every rank takes part: on domains the sums are over the ranks);
    // returns the total energy. Under --decomposition domains p_ holds this rank's domain only,
    // and the ranks write the files together. `made`: its sums, made where the
    // particles live in made_seconds (else from p_).
    double log_line(long long step, const std::optional<Diagnostics>& made = std::nullopt, double made_seconds = 0);

    const RunConfig& config_;
    std::optional<Checkpoint> restart_;
    ParticleSet p_;
    RunPlan plan_;
    IntegratorConfig ic_; // the run's, with G from the snapshot's units unless given
    const Communicator& comm_;
    DomainFollower follower_;             // on domains: the particles' moves between ranks after every step
    DomainTreeEngine* domains_ = nullptr; // on domains: the integrator's engine
    std::vector<std::string> argv_;       // the run's command line, with a --target's choice in its place
    std::unique_ptr<Integrator> integrator_;
    std::unique_ptr<RunOutputs> outputs_;
    WallClock::time_point wall_start_, last_checkpoint_;
    long long first_step_ = 1;
    double next_snapshot_ = 0, e0_ = 0, last_de_ = 0;
    std::size_t count_ = 0; // the particles p_ held at the start (its arrays may be lent later)
    long long checkpoints_ = 0, checkpoints_within_ = 0; // written by this process
    bool tty_ = false;
};

Run::Run(const RunConfig& config, std::optional<Checkpoint> restart)
    : config_(config), restart_(std::move(restart)),
      p_(restart_ ? std::move(restart_->particles) : initial_particles(config, Communicator::world())),
      plan_(RunPlan::make(config, start_time(config, p_, restart_))), ic_(integrator_config(config, p_)),
      comm_(Communicator::world()), argv_(config.argv)
{
    if (restart_ && restart_->step >= plan_.total_steps)
        throw std::runtime_error("the run in " + config.output + " already reached t = " + std::to_string(p_.time) +
                                 "; give a later --t-end with --restart to extend it");
    if (comm_.is_root()) report_engine_choice(ic_.engine.engine);
    std::optional<ChosenOpening> chosen;
    if (config.target && !restart_) { // a restart's command line holds the choice
        chosen = choose_opening(p_, ic_, *config.target);
        (chosen->parameter == "theta" ? ic_.engine.theta : ic_.engine.alpha) = chosen->value;
        argv_ = with_chosen_opening(argv_, *chosen);
        if (comm_.is_root()) {
            const ErrorTarget& t = config.target->target;
            std::printf("target p%g <= %.3g (%s): %s = %.4g gives p%g = %.3e on %zu particles with %.0f "
                        "interactions per particle (%d evaluations)\n",
                        t.percentile, t.value, t.component.c_str(), chosen->parameter.c_str(), chosen->value,
                        t.percentile, chosen->error, chosen->compared, chosen->interactions, chosen->evaluations);
            std::fflush(stdout);
        }
    }
    // On domains: a --target's set is whole on every rank; otherwise each rank read its part of
    // the file, or of the checkpoint.
    DomainKeys cut;
    if (config.domains && config.target && !restart_)
        p_ = own_domain(p_, comm_, &cut);
    else if (config.domains)
        cut = move_to_domains(p_, comm_);
    integrator_ = make_integrator(
        ic_, engines(),
        [&](std::unique_ptr<ForceEngine> engine) -> std::unique_ptr<ForceEngine> {
            if (config.domains) {
                auto made = make_domain_tree_engine(std::move(engine), ic_.engine, comm_);
                domains_ = made.get();
                return made;
            }
            return distribute(std::move(engine), comm_);
        },
        [&](std::unique_ptr<HermiteEngine> engine) { return distribute(std::move(engine), comm_); });
    // The cut the particles were just given, whose cells the domains' trees open as larger
    // (tree/cut_cells.hpp), as each follow hands its own on: a restart's first step is then the
    // uninterrupted run's, whose last follow cut the same particles the same way.
    if (domains_ && comm_.size() > 1) domains_->set_domain_keys(cut);
    // The directory is made only now, so that refused settings leave none behind. Under mpirun
    // every rank computes; the first one alone owns the directory and writes.
    outputs_ = std::make_unique<RunOutputs>(config.output, comm_.is_root(), restart_.has_value());
    for (const auto& [key, value] : config.recorded) p_.run_parameters[key] = value;
    p_.run_parameters["run.engine_used"] = integrator_->engine_name();
    if (chosen) {
        const auto text = [](double v) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%.6g", v);
            return std::string(buf);
        };
        p_.run_parameters["run." + chosen->parameter] = text(chosen->value);
        p_.run_parameters["run.target_chose"] = chosen->parameter + " " + text(chosen->value);
        p_.run_parameters["run.target_error"] = text(chosen->error);
        p_.run_parameters["run.target_compared"] = std::to_string(chosen->compared);
        p_.run_parameters["run.target_interactions"] = text(chosen->interactions);
    }
    if (!restart_) outputs_->write_parameters(p_, plan_.total_steps);
}

// The forces of the start, or the state of the checkpoint; the diagnostics file; the first line
// and snapshot of a new run.
void Run::begin()
{
    wall_start_ = last_checkpoint_ = WallClock::now();
    next_snapshot_ = plan_.t_start + plan_.snapshot_every;
    const IntegratorConfig& ic = ic_;
    std::ostringstream header;
    header << "# grove run diagnostics: " << integrator_->engine_name() << ", " << integrator_->name() << " "
           << (plan_.by_dt_max ? "eta = " + std::to_string(ic.eta) +
                                     (ic.eta_dyn > 0 ? ", eta-dyn = " + std::to_string(ic.eta_dyn) : "") + ", dt-max = "
                               : "dt = ")
           << plan_.interval << ", eps = " << ic.engine.gravity.eps << ", G = " << ic.engine.gravity.G << "\n"
           << "# time step kinetic potential total rel_energy_error virial_ratio px py pz Lx Ly Lz r10 r50 r90 "
              "wall_s";
    for (const auto& count : integrator_->log_counts()) header << ' ' << count.first;
    header << '\n';
    if (restart_) {
        integrator_->resume(restart_->integrator, p_);
        first_step_ = restart_->step + 1;
        next_snapshot_ = config_.cadence_changed ? p_.time + plan_.snapshot_every : restart_->next_snapshot;
        outputs_->set_snapshots(restart_->snapshot_index);
        e0_ = restart_->reference_energy;
        outputs_->open_diagnostics(&*restart_, header.str());
        if (outputs_->writer() && integrator_->within_interval())
            std::printf("restarting %s at t = %.10g (within step %lld)\n", outputs_->path().c_str(), p_.time,
                        first_step_);
        else if (outputs_->writer())
            std::printf("restarting %s at t = %.10g (step %lld)\n", outputs_->path().c_str(), p_.time, restart_->step);
    } else {
        integrator_->start(p_);
        outputs_->open_diagnostics(nullptr, header.str());
    }
    outputs_->start_snapshot_writer();
    count_ = p_.size(); // p_'s arrays may be lent to the writer from here on
    if (!restart_) {
        e0_ = log_line(0);
        snapshot(p_);
    }
    tty_ = isatty(fileno(stderr));
}

int Run::execute()
{
    begin();
    const StopSignals signals;
    integrator_->pause_when([this] { return pause_requested(); });
    for (long long s = first_step_; s <= plan_.total_steps; ++s) {
        integrator_->advance_to(plan_.time_of(s), p_);
        while (integrator_->within_interval()) {
            const int status = pause_within_interval(s);
            if (status >= 0) return status;
            integrator_->advance_to(plan_.time_of(s), p_);
        }
        if (s == first_step_ && outputs_->writer()) // what the steps hold, once they all exist
            std::printf(
                "%s\n",
                describe(memory_use(integrator_->force_engine(), config_.domains ? p_.size() : count_)).c_str());
        const int status = end_of_interval(s);
        if (status >= 0) return status;
    }
    if (!outputs_->writer()) return 0;
    if (tty_) std::fprintf(stderr, "\n");
    outputs_->finish();
    summary();
    return 0;
}

int Run::end_of_interval(long long s)
{
    const bool last = s == plan_.total_steps;
    const bool snapshot_due = plan_.snapshot_due(p_.time, next_snapshot_) || last;
    // A signal stops every rank after the same step, or some would wait for the others forever.
    const int stop_signal = comm_.max(static_cast<int>(g_stop_signal));
    const bool log_due = s % plan_.log_every == 0 || last || snapshot_due;
    // Every finished run ends with a checkpoint, so that it can be extended (--restart DIR
    // --t-end T2).
    // The wall clock's part decided for every rank by any rank's reading, as a signal is: on
    // domains every rank writes its share, and a rank that wrote alone would wait forever.
    const bool clock_due = comm_.max(seconds_since(last_checkpoint_) > plan_.checkpoint_every ? 1 : 0) != 0;
    const bool checkpoint_due =
        last || stop_signal || (plan_.checkpoint_steps > 0 && s % plan_.checkpoint_steps == 0) || clock_due;
    // A line's sums where the particles are: a resident integrator's device makes them without
    // bringing every particle here (before anything below brings them).
    std::optional<Diagnostics> made_there;
    double made_seconds = 0;
    if (log_due && !config_.domains && outputs_->writer()) {
        const auto start = WallClock::now();
        Diagnostics d;
        if (integrator_->diagnostics_where_they_are(p_, kLogFractions, d)) made_there = d;
        made_seconds = seconds_since(start);
    }
    // The arrays the last snapshot borrowed come back before anything touches the particles.
    if (snapshot_due || checkpoint_due || config_.domains || (log_due && !made_there)) outputs_->give_back(p_);
    // Files see the particles in the order they were given (between them the leapfrog keeps them
    // in its tree's order). Diagnostics lines do not need it: their sums and sorted radii read
    // positions, velocities, masses and potentials, which move together.
    // On domains the particles are moved between ranks below, from the host, with their IDs: every
    // step the order of the rank's tree becomes the order they are held in (their files hold
    // them in ID order).
    // Where the steps live on the ranks' GPUs, the domains follow when device_follow_due says (with
    // --domain-cut work, to equal work by the engine's count of the last step), and at each file to
    // equal counts (so that a restart starts from the domains the run goes on with).
    const bool follow = config_.domains && (!integrator_->resident() || snapshot_due || checkpoint_due ||
                                            (device_follow_due(s) && comm_.size() > 1));
    if (follow)
        integrator_->settle_order(p_);
    else if (!config_.domains && (snapshot_due || checkpoint_due))
        integrator_->restore_order(p_);
    // Hermite's potentials are a force evaluation: every rank takes part.
    if ((log_due && !made_there) || follow) integrator_->synchronize(p_);
    // The domains follow the particles, before anything is written.
    const ForceEngine* engine = integrator_->force_engine();
    const double work =
        !config_.cut_by_work || snapshot_due || checkpoint_due || !engine ? 0 : engine->last_work().total();
    // On the host's pipeline each cut between files takes a frame of its own, moved by a draw from
    // the particles' bounds, which the trees of the next step take: a frame that stayed put left the
    // same force errors at every step, and a galaxy's momentum drifted (docs/parallel-design.md). At
    // a file the cut is made in the cube itself, as a restart from it makes it; on the GPUs, which
    // find the cube again from the particles they load, always; and where the domains are cut by
    // work, whose ranks' costs, measured in one frame, do not even out the work in another.
    const bool move_frame =
        follow && !integrator_->resident() && !snapshot_due && !checkpoint_due && !config_.cut_by_work;
    const bool changed = follow && follower_.follow(p_, comm_, work, move_frame);
    if (follow && domains_) {
        domains_->set_domains_frame(move_frame ? std::optional<KeyFrame>(follower_.frame()) : std::nullopt);
        domains_->set_domain_keys(follower_.own_keys());
    }
    if (changed) integrator_->resume({}, p_);
    if (log_due) {
        log_line(s, made_there, made_seconds);
        if (outputs_->writer()) progress(s, last_de_);
    }
    if (snapshot_due) {
        snapshot(p_);
        next_snapshot_ = plan_.after(p_.time, next_snapshot_);
    }
    if (checkpoint_due) {
        outputs_->give_back(p_); // the checkpoint waits for the snapshots anyway
        write_checkpoint_now(s, p_);
    }
    if (!stop_signal || last) return -1;
    return stopped(stop_signal, "after", s);
}

int Run::stopped(int signal, const char* where, long long s) const
{
    if (outputs_->writer()) {
        if (tty_) std::fprintf(stderr, "\n");
        std::printf("interrupted (signal %d) at t = %.10g %s step %lld: checkpoint written; continue with "
                    "grove run --restart %s\n",
                    signal, p_.time, where, s, outputs_->path().c_str());
    }
    return 128 + signal;
}

bool Run::pause_requested() const
{
    const bool wanted = g_stop_signal != 0 || seconds_since(last_checkpoint_) > plan_.checkpoint_every;
    return comm_.max(wanted ? 1 : 0) != 0;
}

int Run::pause_within_interval(long long s)
{
    const int stop_signal = comm_.max(static_cast<int>(g_stop_signal));
    // No snapshot or diagnostics line here: the velocities are not those of the positions' time.
    outputs_->give_back(p_);
    integrator_->restore_order(p_);
    write_checkpoint_now(s - 1, p_); // a restart goes on within interval s
    ++checkpoints_within_;
    if (!stop_signal) return -1;
    return stopped(stop_signal, "within", s);
}

double Run::log_line(long long step, const std::optional<Diagnostics>& made, double made_seconds)
{
    // One process, or the ranks of the replicated mode: the first rank alone (all hold the same).
    if (!config_.domains && !outputs_->writer()) return 0;
    const auto start = WallClock::now();
    const Diagnostics d = made              ? *made
                          : config_.domains ? compute_diagnostics(p_, p_.pot, comm_)
                                            : compute_diagnostics(p_, p_.pot);
    const double computed = made_seconds + seconds_since(start);
    if (outputs_->writer())
        last_de_ = outputs_->log(d, computed, p_.time, step, step == 0 ? d.total : e0_, seconds_since(wall_start_),
                                 integrator_->log_counts());
    return d.total;
}

void Run::snapshot(ParticleSet& p)
{
    if (config_.domains) {
        outputs_->snapshot_from_domains(p, comm_);
        return;
    }
    if (!integrator_->resident()) {
        outputs_->snapshot(p);
        return;
    }
    // The particles go onto the device now, as the next step would take them: the steps then
    // read nothing of the host's arrays, which the writer borrows until the next output instead
    // of copying them (the copy would be the run's largest allocation).
    integrator_->load_on_device(p);
    outputs_->snapshot_borrowed(p);
}

void Run::progress(long long s, double de) const
{
    const double elapsed = seconds_since(wall_start_);
    const double eta = elapsed / static_cast<double>(s) * static_cast<double>(plan_.total_steps - s);
    if (tty_)
        std::fprintf(stderr, "\r  t = %-10.6g step %lld/%lld  dE/E %+.2e  elapsed %s  ETA %s   ", p_.time, s,
                     plan_.total_steps, de, hms(elapsed).c_str(), hms(eta).c_str());
    else
        std::printf("t = %.6g step %lld/%lld dE/E %+.3e elapsed %.1f s ETA %.1f s\n", p_.time, s, plan_.total_steps, de,
                    elapsed, eta);
    std::fflush(stdout);
}

void Run::write_checkpoint_now(long long step, ParticleSet& p)
{
    if (!outputs_->writer() && !config_.domains) return; // on domains every rank writes its share
    Checkpoint c;
    std::swap(c.particles, p);
    struct GiveBack { // also when the write throws
        ParticleSet &lent, &owner;
        ~GiveBack() { std::swap(lent, owner); }
    } give_back{c.particles, p};
    c.argv = argv_;
    c.step = step;
    c.next_snapshot = next_snapshot_;
    c.reference_energy = e0_;
    c.start_time = plan_.t_start;
    c.integrator = integrator_->save(c.particles);
    if (config_.domains)
        outputs_->checkpoint_from_domains(c, comm_);
    else
        outputs_->checkpoint(c);
    last_checkpoint_ = WallClock::now();
    ++checkpoints_;
}

void Run::summary() const
{
    const double wall = seconds_since(wall_start_);
    const auto done = static_cast<double>(plan_.total_steps - first_step_ + 1);
    const std::string within =
        checkpoints_within_ > 0 ? " (" + std::to_string(checkpoints_within_) + " within an interval)" : "";
    std::printf("done: %lld %s to t = %.6g in %.2f s (%.2f ms each); %d snapshots, %lld checkpoints%s in %s\n",
                plan_.total_steps, plan_.by_dt_max ? "dt-max intervals" : "steps", p_.time, wall,
                1e3 * wall / std::max(1.0, done), outputs_->snapshots(), checkpoints_, within.c_str(),
                outputs_->path().c_str());
    const SnapshotWriter& writer = outputs_->snapshot_writer();
    const double force = integrator_->force_seconds(), io = outputs_->io_seconds();
    const double diagnostics = outputs_->diagnostics_seconds();
    std::printf("timing: force engine %.2f s, integration %.2f s, diagnostics %.2f s, I/O %.2f s (snapshot copies "
                "%.2f s, waits for the writer %.2f s; the writer thread wrote for %.2f s); %s\n",
                force, wall - force - io - diagnostics, diagnostics, io, writer.copy_seconds(), writer.wait_seconds(),
                writer.write_seconds(), integrator_->summary().c_str());
}

} // namespace

int run_simulation(const RunConfig& config, std::optional<Checkpoint> restart)
{
    std::size_t n = restart ? restart->particles.size() : snapshot_particle_count(config.input);
    const Communicator& comm = Communicator::world();
    if (config.domains && restart) { // each rank read its share
        double total = static_cast<double>(n);
        comm.sum(&total, 1);
        n = static_cast<std::size_t>(total);
    }
    const EngineConfig& engine = config.integrator.engine;
    // The host holds every rank's particles (one host's ranks all of them); on domains each GPU
    // holds a rank's.
    check_memory_plan(Workload::run, n, "grove run", engines().resolve(engine.engine), config.integrator.integrator,
                      engine.resident && !config.domains);
    check_device_plan(config.integrator.integrator == "leapfrog" ? Workload::run : Workload::forces,
                      config.domains ? planned_domain_particles(n, comm.size()) : n, "grove run",
                      engines().resolve(engine.engine), engine.gpu_memory, engine.device);
    Run run(config, std::move(restart));
    return run.execute();
}

} // namespace grove
