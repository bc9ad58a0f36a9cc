// The `grove` Python module: forces on numpy arrays, snapshots, initial conditions, runs that a
// notebook can steer, and the accuracy study, over the same C++ API the command line uses. Errors
// are Python exceptions: ValueError for bad arrays and parameters, RuntimeError for the rest
// (a GPU engine without a GPU, unreadable files).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/diagnostics.hpp"
#include "core/galaxy_model.hpp"
#include "core/ic_models.hpp"
#include "core/memory_plan.hpp"
#include "core/opening_criterion.hpp"
#include "core/snapshot.hpp"
#include "core/snapshot_formats.hpp"
#include "core/softening.hpp"
#include "engines/engines.hpp"
#include "integrators/block_leapfrog.hpp"
#include "integrators/integrator.hpp"
#include "studies/accuracy_study.hpp"

namespace py = pybind11;
using namespace grove;

namespace {

// Checks that `a` is a C-contiguous float64 or float32 array of shape (n, 3) (cols 3) or (n,)
// (cols 0), n = -1 for any; anything else is a ValueError.
void check_array(const py::array& a, Eigen::Index n, int cols, const char* what)
{
    const bool shape_ok = cols == 3 ? a.ndim() == 2 && a.shape(1) == 3 : a.ndim() == 1;
    if (!shape_ok || (n >= 0 && a.shape(0) != n))
        throw py::value_error(std::string(what) + " must have shape " +
                              (cols == 3 ? std::string("(N, 3)") : "(" + std::to_string(n) + ",)"));
    if (!(a.flags() & py::array::c_style))
        throw py::value_error(std::string(what) + " must be C-contiguous (use numpy.ascontiguousarray)");
    if (!py::isinstance<py::array_t<double>>(a) && !py::isinstance<py::array_t<float>>(a))
        throw py::value_error(std::string(what) + " must be float64 or float32");
}

// The array's values as an Eigen view: float64 in place (an (N, 3) row-major array is the memory
// of a 3 x N column-major matrix), float32 converted into `owned`. Non-finite values are a
// ValueError.
template <class View, class Matrix> View view_of(const py::array& a, Matrix& owned, const char* what)
{
    const Eigen::Index rows = Matrix::RowsAtCompileTime == 3 ? 3 : a.shape(0);
    const Eigen::Index cols = Matrix::RowsAtCompileTime == 3 ? a.shape(0) : 1;
    using Floats = Eigen::Matrix<float, Matrix::RowsAtCompileTime, Matrix::ColsAtCompileTime>;
    View view = py::isinstance<py::array_t<double>>(a)
                    ? View(Eigen::Map<const Matrix>(static_cast<const double*>(a.data()), rows, cols))
                    : View(owned = Eigen::Map<const Floats>(static_cast<const float*>(a.data()), rows, cols)
                                       .template cast<double>());
    if (!view.allFinite()) throw py::value_error(std::string(what) + " holds NaN or infinity");
    return view;
}

PositionsRef view_of(const py::array& a, Eigen::Matrix3Xd& owned, const char* what)
{
    return view_of<PositionsRef>(a, owned, what);
}

MassesRef view_of(const py::array& a, Eigen::VectorXd& owned, const char* what)
{
    return view_of<MassesRef>(a, owned, what);
}

py::array_t<double> array_from(const Eigen::Matrix3Xd& m)
{
    py::array_t<double> out({static_cast<py::ssize_t>(m.cols()), py::ssize_t{3}});
    std::copy(m.data(), m.data() + m.size(), out.mutable_data());
    return out;
}

py::array_t<double> array_from(const Eigen::VectorXd& v)
{
    py::array_t<double> out(static_cast<py::ssize_t>(v.size()));
    std::copy(v.data(), v.data() + v.size(), out.mutable_data());
    return out;
}

// A job on n particles (with an engine, where it uses one), planned before anything is made or
// computed (core/memory_plan.hpp): MemoryError with the numbers where it cannot fit.
void plan(Workload job, std::size_t n, const std::string& what, const std::string& engine = "",
          const std::string& integrator = "leapfrog")
{
    try {
        check_memory_plan(job, n, what, engine.empty() ? engine : engines().resolve(engine), integrator);
    } catch (const std::runtime_error& e) {
        PyErr_SetString(PyExc_MemoryError, e.what());
        throw py::error_already_set();
    }
}

// Bytes an engine may hold (gpu_memory, list_memory): None for no limit of grove's own.
using MemoryLimit = std::optional<std::uint64_t>;

// eps_type: None, "halo=0.1,disk=0.05" (as --eps-type) or {type or component name: length}.
void set_softening_types(const py::object& eps_type, GravityParams& gravity)
{
    if (eps_type.is_none()) return;
    std::string text;
    if (py::isinstance<py::str>(eps_type)) {
        text = py::cast<std::string>(eps_type);
    } else if (py::isinstance<py::dict>(eps_type)) {
        for (const auto& [key, value] : py::cast<py::dict>(eps_type)) {
            std::ostringstream item;
            item.precision(17);
            item << py::str(key).cast<std::string>() << '=' << py::cast<double>(value);
            text += (text.empty() ? "" : ",") + item.str();
        }
    } else {
        throw py::type_error("eps_type must be None, a str such as 'halo=0.1,disk=0.05' or a dict {type: length}");
    }
    try {
        parse_softening_types(text, gravity, "eps_type");
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
}

EngineConfig engine_config(const std::string& engine, double theta, double eps, double G,
                           const std::optional<std::string>& precision, std::optional<int> nleaf,
                           std::optional<int> ncrit, const std::string& mac = "geometric", double alpha = 1e-3,
                           MemoryLimit gpu_memory = {}, MemoryLimit list_memory = {},
                           const py::object& eps_type = py::none(), std::optional<double> theta_max = std::nullopt)
{
    EngineConfig c;
    if (theta_max) c.theta_max = *theta_max;
    if ((gpu_memory && *gpu_memory == 0) || (list_memory && *list_memory == 0))
        throw py::value_error("gpu_memory and list_memory are bytes > 0 (or None)");
    c.gpu_memory = gpu_memory.value_or(0);
    c.list_memory = list_memory.value_or(0);
    c.engine = engine;
    c.theta = theta;
    c.mac = mac;
    c.alpha = alpha;
    c.gravity = {G, eps};
    set_softening_types(eps_type, c.gravity);
    if (precision) c.precision = *precision;
    if (nleaf) c.nleaf = *nleaf;
    if (ncrit) c.ncrit = *ncrit;
    try {
        c.validate();
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    return c;
}

py::tuple forces(const py::array& pos, const py::array& mass, const std::string& engine, double theta, double eps,
                 double G, const std::optional<std::string>& precision, std::optional<int> nleaf,
                 std::optional<int> ncrit, const std::string& mac, double alpha, MemoryLimit gpu_memory,
                 MemoryLimit list_memory, const py::object& eps_type, const std::optional<py::array>& types,
                 std::optional<double> theta_max)
{
    check_array(pos, -1, 3, "pos");
    check_array(mass, static_cast<Eigen::Index>(pos.shape(0)), 0, "mass");
    Eigen::Matrix3Xd x_owned;
    Eigen::VectorXd m_owned;
    const PositionsRef x = view_of(pos, x_owned, "pos"); // float64: numpy's memory, no copy
    const MassesRef m = view_of(mass, m_owned, "mass");
    if ((m.array() < 0).any()) throw py::value_error("mass holds negative values");
    const EngineConfig config = engine_config(engine, theta, eps, G, precision, nleaf, ncrit, mac, alpha, gpu_memory,
                                              list_memory, eps_type, theta_max);
    std::vector<std::uint8_t> type;
    if (types) {
        const auto t = py::array_t<long long, py::array::c_style | py::array::forcecast>::ensure(*types);
        if (!t || t.ndim() != 1 || t.shape(0) != pos.shape(0))
            throw py::value_error("types must be a 1-d array of one integer type (0..5) per particle");
        for (py::ssize_t i = 0; i < t.shape(0); ++i) {
            if (t.at(i) < 0 || t.at(i) >= kNumParticleTypes)
                throw py::value_error("types[" + std::to_string(i) + "] = " + std::to_string(t.at(i)) +
                                      " is not a particle type (0..5)");
            type.push_back(static_cast<std::uint8_t>(t.at(i)));
        }
    } else if (config.gravity.per_type()) {
        throw py::value_error("eps_type softens by particle type: give types (one per particle)");
    }
    plan(Workload::forces, static_cast<std::size_t>(pos.shape(0)),
         "forces on " + std::to_string(pos.shape(0)) + " particles", engine);
    auto e = engines().make_force(config);
    Forces f;
    {
        py::gil_scoped_release release; // other Python threads run while the engine computes
        e->compute(x, m, type, f);
    }
    return py::make_tuple(array_from(f.acc), array_from(f.pot));
}

ParticleSet checked(ParticleSet p)
{
    p.validate("model");
    return p;
}

// A run a notebook can steer: the integrator and its engine, the particles, the start energy.
class Simulation {
  public:
    Simulation(ParticleSet particles, const std::string& integrator, const std::string& engine, double dt,
               std::optional<double> eta, double dt_max, const std::string& timestep, std::optional<double> eta_dyn,
               double theta, double eps, std::optional<double> G, const std::optional<std::string>& precision,
               std::optional<int> nleaf, std::optional<int> ncrit, const std::string& mac, double alpha,
               MemoryLimit gpu_memory, MemoryLimit list_memory, const py::object& eps_type,
               std::optional<double> theta_max)
        : p_(std::move(particles))
    {
        plan(Workload::run, p_.size(), "a Simulation of " + std::to_string(p_.size()) + " particles", engine,
             integrator);
        IntegratorConfig c;
        c.integrator = integrator;
        c.engine = engine_config(engine, theta, eps, G ? *G : p_.units.G, precision, nleaf, ncrit, mac, alpha,
                                 gpu_memory, list_memory, eps_type, theta_max);
        // The command line's rules: block steps (the leapfrog's) take dt_max and GADGET's eta
        // (0.025 unless given), capped by the dynamical time (eta_dyn, grove run's default unless
        // given); Hermite's eta is Aarseth's.
        const bool block = timestep == "block";
        if (timestep != "shared" && !block) throw py::value_error("timestep must be 'shared' or 'block'");
        if (block && integrator != "leapfrog") throw py::value_error("timestep='block' is the leapfrog's");
        if (block && dt > 0) throw py::value_error("timestep='block' takes dt_max and eta, not dt");
        if (!block && eta_dyn) throw py::value_error("eta_dyn is timestep='block''s");
        c.timestep = timestep;
        c.dt = dt;
        c.eta = eta ? *eta : block ? kDefaultBlockEta : 0.01;
        c.eta_dyn = block ? eta_dyn.value_or(kDefaultEtaDyn) : 0;
        c.dt_max = dt_max;
        if (integrator == "leapfrog" && !block && !(dt > 0)) throw py::value_error("leapfrog needs dt > 0");
        integrator_ = make_integrator(c, engines());
        t_start_ = p_.time;
        py::gil_scoped_release release;
        integrator_->start(p_);
    }
    // Advances to t, a whole number of steps (dt, or dt_max for hermite) after the start. The GIL
    // is released while it computes; another thread's evolve() on the same Simulation waits, and
    // a signal (Ctrl-C) stops it after the step in which it arrived, with the particles of that
    // step and Python's exception.
    void evolve(double t)
    {
        py::gil_scoped_release release;
        const std::lock_guard<std::mutex> lock(mutex_);
        const double interval = integrator_->interval();
        const double steps = (t - p_.time) / interval;
        if (!std::isfinite(t) || !(steps <= 1e12))
            throw py::value_error("evolve(t): t must be finite and at most 1e12 steps of " + std::to_string(interval) +
                                  " after the current time " + std::to_string(p_.time));
        const long long n = std::llround(steps);
        if (!(t >= p_.time) || std::abs(steps - static_cast<double>(n)) > 1e-9 * std::max(1.0, std::abs(steps)))
            throw py::value_error("evolve(t): t must be a whole number of steps of " + std::to_string(interval) +
                                  " after the current time " + std::to_string(p_.time));
        const long long done = std::llround((p_.time - t_start_) / interval);
        bool interrupted = false;
        for (long long k = 1; k <= n && !interrupted; ++k) {
            integrator_->advance_to(t_start_ + static_cast<double>(done + k) * interval, p_);
            const py::gil_scoped_acquire gil;
            interrupted = PyErr_CheckSignals() != 0;
        }
        integrator_->restore_order(p_); // Python sees the particles in the order it gave them
        integrator_->synchronize(p_);
        if (interrupted) {
            const py::gil_scoped_acquire gil;
            throw py::error_already_set();
        }
    }
    double energy()
    {
        py::gil_scoped_release release;
        const std::lock_guard<std::mutex> lock(mutex_);
        integrator_->synchronize(p_);
        return compute_diagnostics(p_, p_.pot).total;
    }
    // f(particles) while no evolve() runs: the lock first, then the GIL, in the order evolve()
    // takes them.
    template <class F> auto locked(F&& f) const
    {
        py::gil_scoped_release release;
        const std::lock_guard<std::mutex> lock(mutex_);
        const py::gil_scoped_acquire gil;
        return f(p_);
    }

  private:
    ParticleSet p_;
    std::unique_ptr<Integrator> integrator_;
    mutable std::mutex mutex_; // one evolve() or energy() at a time: the GIL is released while they run
    double t_start_ = 0;
};

py::dict accuracy(const ParticleSet& p, const std::vector<double>& values, std::optional<std::size_t> sample,
                  const std::string& engine, double eps, std::optional<double> G,
                  const std::optional<std::string>& precision, std::optional<int> nleaf, std::optional<int> ncrit,
                  const std::string& mac, MemoryLimit gpu_memory, MemoryLimit list_memory, const py::object& eps_type,
                  std::optional<double> theta_max)
{
    // The engine keywords as forces() and Simulation() check them (the tree engines compute in
    // their own precision); the swept values as theta or alpha each.
    const EngineConfig c = engine_config(engine, 0.5, eps, G ? *G : p.units.G, precision, nleaf, ncrit, mac, 1e-3,
                                         gpu_memory, list_memory, eps_type, theta_max);
    plan(Workload::accuracy, p.size(), "an accuracy study of " + std::to_string(p.size()) + " particles", engine);
    AccuracyOptions o;
    o.values = values;
    o.theta_max = c.theta_max;
    try {
        o.mac = parse_mac(mac);
        if (values.empty()) throw std::invalid_argument("give one or more theta (or alpha) values");
        for (double v : values) check_opening(o.criterion(v));
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    o.eps = c.gravity.eps;
    o.eps_type = c.gravity.eps_type;
    o.G = c.gravity.G;
    o.nleaf = c.nleaf;
    o.ncrit = c.ncrit;
    o.gpu_memory = c.gpu_memory;
    o.list_memory = c.list_memory;
    if (sample) o.sample = *sample;
    o.tree_engine = engines().resolve(engine);
    if (o.tree_engine != "tree-cpu" && o.tree_engine != "tree-gpu")
        throw py::value_error("engine must be tree, tree-cpu or tree-gpu");
    o.direct_engine = engines().resolve("direct");
    AccuracyStudy s;
    {
        py::gil_scoped_release release;
        s = run_accuracy_study(p, o);
    }
    py::dict out;
    out[OpeningCriterion{o.mac}.parameter_name()] =
        py::array_t<double>(static_cast<py::ssize_t>(values.size()), values.data());
    out["levels"] = py::array_t<double>(static_cast<py::ssize_t>(kErrorLevels.size()), kErrorLevels.data());
    for (std::size_t c = 0; c < s.results.front().errors.size(); ++c) {
        const std::string name = s.results.front().errors[c].component;
        py::array_t<double> table(
            {static_cast<py::ssize_t>(s.results.size()), static_cast<py::ssize_t>(kErrorLevels.size())});
        for (std::size_t r = 0; r < s.results.size(); ++r)
            for (std::size_t k = 0; k < kErrorLevels.size(); ++k)
                table.mutable_at(static_cast<py::ssize_t>(r), static_cast<py::ssize_t>(k)) =
                    s.results[r].errors[c].acc_percentiles[k];
        out[py::str(name)] = table;
    }
    return out;
}

} // namespace

PYBIND11_MODULE(grove, m)
{
    m.doc() = "grove: GPU Barnes-Hut treecode and direct-summation engines for galactic dynamics";

    py::class_<ParticleSet>(m, "Snapshot", "Particles with their header; arrays are numpy copies.")
        .def("__len__", &ParticleSet::size)
        .def_property(
            "positions", [](const ParticleSet& p) { return array_from(p.pos); },
            [](ParticleSet& p, const py::array& a) {
                check_array(a, p.pos.cols(), 3, "positions");
                Eigen::Matrix3Xd owned;
                p.pos = view_of(a, owned, "positions");
            })
        .def_property(
            "velocities", [](const ParticleSet& p) { return array_from(p.vel); },
            [](ParticleSet& p, const py::array& a) {
                check_array(a, p.vel.cols(), 3, "velocities");
                Eigen::Matrix3Xd owned;
                p.vel = view_of(a, owned, "velocities");
            })
        .def_property_readonly("masses", [](const ParticleSet& p) { return array_from(p.mass); })
        .def_property_readonly("ids", [](const ParticleSet& p) { return py::array(py::cast(p.id)); })
        .def_property_readonly("types", [](const ParticleSet& p) { return py::array(py::cast(p.type)); })
        .def_property_readonly("potentials",
                               [](const ParticleSet& p) -> py::object {
                                   if (!p.has_forces()) return py::none();
                                   return array_from(p.pot);
                               })
        .def_property_readonly("accelerations",
                               [](const ParticleSet& p) -> py::object {
                                   if (!p.has_forces()) return py::none();
                                   return array_from(p.acc);
                               })
        .def_readwrite("time", &ParticleSet::time)
        .def_property_readonly("header",
                               [](const ParticleSet& p) {
                                   py::dict h;
                                   h["N"] = p.size();
                                   h["time"] = p.time;
                                   h["units"] = p.units.system;
                                   h["G"] = p.units.G;
                                   return h;
                               })
        .def_readonly("parameters", &ParticleSet::run_parameters);

    m.def(
        "gpu_available", [] { return engines().gpu_available(); },
        "True when this build has the GPU engines and a CUDA device is visible.");
    m.def(
        "read",
        [](const std::filesystem::path& path, const std::optional<std::string>& units) {
            try {
                return read_snapshot(path.string(),
                                     units ? std::optional<Units>(units_by_name(*units)) : std::optional<Units>());
            } catch (const std::invalid_argument& e) {
                throw py::value_error(std::string("units: ") + e.what());
            }
        },
        py::arg("path"), py::kw_only(), py::arg("units") = py::none(),
        "Reads a particle file (a str or os.PathLike): GADGET/SWIFT HDF5 (one file or a snapshot split over "
        "BASE.K.hdf5), tipsy, or GADGET binary format 1 or 2, told apart by their content. units='nbody' or "
        "'gadget' for the formats that hold none (default: nbody for tipsy, gadget for GADGET binary).");
    m.def(
        "convert",
        [](const std::filesystem::path& path, const std::filesystem::path& out, const std::string& format) {
            try {
                write_snapshot_as(out.string(), read_snapshot(path.string()), snapshot_format_by_name(format));
            } catch (const std::invalid_argument& e) {
                throw py::value_error(e.what());
            }
        },
        py::arg("path"), py::arg("out"), py::kw_only(), py::arg("format"),
        "Writes the particles of a file in another format: 'hdf5', 'tipsy' (big-endian, with Bonsai's 64-bit IDs) "
        "or 'gadget1'/'gadget2' (floats), as grove convert does.");
    m.def(
        "write", [](const std::filesystem::path& path, const ParticleSet& p) { write_snapshot(path.string(), p); },
        py::arg("path"), py::arg("snapshot"), "Writes a snapshot (a temporary name, renamed when complete).");
    m.def("forces", &forces, py::arg("pos"), py::arg("mass"), py::kw_only(), py::arg("engine") = "tree",
          py::arg("theta") = 0.5, py::arg("eps") = 0.0, py::arg("G") = 1.0, py::arg("precision") = py::none(),
          py::arg("nleaf") = py::none(), py::arg("ncrit") = py::none(), py::arg("mac") = "geometric",
          py::arg("alpha") = 1e-3, py::arg("gpu_memory") = py::none(), py::arg("list_memory") = py::none(),
          py::arg("eps_type") = py::none(), py::arg("types") = py::none(), py::arg("theta_max") = py::none(),
          "Accelerations (N, 3) and potentials (N,) of particles at pos (N, 3) with masses (N,). eps_type softens by "
          "particle type ('halo=0.1,disk=0.05' or {1: 0.1, 'disk': 0.05}; a pair with sqrt((eps_i^2 + eps_j^2) / 2)) "
          "and then needs types (N,), each particle's type 0..5. Tree engines open "
          "cells by theta (mac='geometric') or by alpha (mac='relative': G M l^2 / d^4 > alpha |a|; theta_max also "
          "opens what theta = theta_max would, as grove's --theta-max). gpu_memory: "
          "bytes a GPU engine may hold on its device; list_memory: bytes a tree engine's interaction lists may hold "
          "at once (walked in batches beyond); both as grove's --gpu-memory and --list-memory.");
    m.def("accuracy", &accuracy, py::arg("snapshot"), py::arg("values"), py::kw_only(), py::arg("sample") = py::none(),
          py::arg("engine") = "tree", py::arg("eps") = 0.0, py::arg("G") = py::none(),
          py::arg("precision") = py::none(), py::arg("nleaf") = py::none(), py::arg("ncrit") = py::none(),
          py::arg("mac") = "geometric", py::arg("gpu_memory") = py::none(), py::arg("list_memory") = py::none(),
          py::arg("eps_type") = py::none(), py::arg("theta_max") = py::none(),
          "Tree-versus-direct error percentiles per theta (or alpha with mac='relative'): {'theta' or 'alpha', "
          "'levels', component: (values, levels)}.");

    auto ic = m.def_submodule("ic", "Initial conditions, as `grove ic` makes them.");
    ic.def(
        "plummer",
        [](std::size_t n, std::uint64_t seed, double cutoff) {
            plan(Workload::make_model, n, "a model of " + std::to_string(n) + " particles");
            return checked(make_plummer(n, seed, cutoff));
        },
        py::arg("n"), py::kw_only(), py::arg("seed") = 1, py::arg("cutoff") = 0.0);
    ic.def(
        "hernquist",
        [](std::size_t n, std::uint64_t seed, double mass, double scale, double truncation, const std::string& units) {
            const Units u = units_by_name(units);
            plan(Workload::make_model, n, "a model of " + std::to_string(n) + " particles");
            ParticleSet p = make_hernquist(n, seed, mass, scale, u.G, truncation);
            p.units = u;
            return checked(std::move(p));
        },
        py::arg("n"), py::kw_only(), py::arg("seed") = 1, py::arg("mass") = 1.0, py::arg("scale") = 1.0,
        py::arg("truncation") = 0.0, py::arg("units") = "nbody");
    ic.def(
        "uniform",
        [](std::size_t n, std::uint64_t seed, bool random_masses) {
            plan(Workload::make_model, n, "a model of " + std::to_string(n) + " particles");
            return checked(make_uniform_cube(n, seed, random_masses));
        },
        py::arg("n"), py::kw_only(), py::arg("seed") = 1, py::arg("random_masses") = false);
    ic.def(
        "galaxy",
        [](std::size_t n, std::uint64_t seed, const py::kwargs& options) {
            GalaxyParams g;
            for (const auto& [key, value] : options) {
                const std::string k = py::cast<std::string>(key);
                if (k == "halo") {
                    const std::string h = py::cast<std::string>(value);
                    if (h != "nfw" && h != "hernquist") throw py::value_error("halo must be 'nfw' or 'hernquist'");
                    g.halo_profile = h == "nfw" ? HaloProfile::Nfw : HaloProfile::Hernquist;
                    continue;
                }
                double* field = k == "bulge_mass"          ? &g.bulge_mass
                                : k == "bulge_scale"       ? &g.bulge_scale
                                : k == "bulge_truncation"  ? &g.bulge_truncation
                                : k == "disk_mass"         ? &g.disk_mass
                                : k == "disk_scale_length" ? &g.disk_scale_length
                                : k == "disk_scale_height" ? &g.disk_scale_height
                                : k == "disk_q"            ? &g.toomre_q
                                : k == "disk_q_radius"     ? &g.q_radius
                                : k == "halo_mass"         ? &g.halo_mass
                                : k == "halo_scale"        ? &g.halo_scale
                                : k == "halo_truncation"   ? &g.halo_truncation
                                                           : nullptr;
                if (!field) throw py::value_error("unknown galaxy option '" + k + "'");
                *field = py::cast<double>(value);
            }
            plan(Workload::make_model, n, "a model of " + std::to_string(n) + " particles");
            try {
                return checked(make_galaxy(n, seed, g));
            } catch (const std::invalid_argument& e) {
                throw py::value_error(e.what());
            }
        },
        py::arg("n"), py::kw_only(), py::arg("seed") = 1);

    py::class_<Simulation>(m, "Simulation", "A leapfrog (shared or block time steps) or Hermite run over any engine.")
        .def(py::init<ParticleSet, std::string, std::string, double, std::optional<double>, double, std::string,
                      std::optional<double>, double, double, std::optional<double>, std::optional<std::string>,
                      std::optional<int>, std::optional<int>, std::string, double, MemoryLimit, MemoryLimit,
                      const py::object&, std::optional<double>>(),
             py::arg("snapshot"), py::kw_only(), py::arg("integrator") = "leapfrog", py::arg("engine") = "tree",
             py::arg("dt") = 0.0, py::arg("eta") = py::none(), py::arg("dt_max") = 0.0625,
             py::arg("timestep") = "shared", py::arg("eta_dyn") = py::none(), py::arg("theta") = 0.5,
             py::arg("eps") = 0.0, py::arg("G") = py::none(), py::arg("precision") = py::none(),
             py::arg("nleaf") = py::none(), py::arg("ncrit") = py::none(), py::arg("mac") = "geometric",
             py::arg("alpha") = 1e-3, py::arg("gpu_memory") = py::none(), py::arg("list_memory") = py::none(),
             py::arg("eps_type") = py::none(), py::arg("theta_max") = py::none())
        .def("evolve", &Simulation::evolve, py::arg("t"))
        .def("energy", &Simulation::energy, "Kinetic plus potential energy now.")
        .def_property_readonly(
            "time", [](const Simulation& s) { return s.locked([](const ParticleSet& p) { return p.time; }); })
        .def_property_readonly(
            "snapshot", [](const Simulation& s) { return s.locked([](const ParticleSet& p) { return p; }); },
            "The current particles (a copy).")
        .def_property_readonly(
            "positions",
            [](const Simulation& s) { return s.locked([](const ParticleSet& p) { return array_from(p.pos); }); })
        .def_property_readonly(
            "velocities",
            [](const Simulation& s) { return s.locked([](const ParticleSet& p) { return array_from(p.vel); }); })
        .def(
            "write",
            [](const Simulation& s, const std::filesystem::path& path) {
                s.locked([&](const ParticleSet& p) {
                    py::gil_scoped_release release; // the write needs no Python
                    write_snapshot(path.string(), p);
                    return 0;
                });
            },
            py::arg("path"));
}
