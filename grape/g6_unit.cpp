#include "grape/g6_unit.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "engines/engines.hpp"
#include "grape/engine_choice.hpp"

#include "grape/environment.hpp"

namespace grove::grape {

G6Unit& G6Unit::instance()
{
    static G6Unit unit;
    return unit;
}

int G6Unit::open(const std::vector<int>& devices)
{
    if (engine_) return 0; // already open: GRAPE clients open once per cluster, some twice
    npipes_ = static_cast<int>(env_count("libg6", "GROVE_G6_NPIPES", 16384));
    neighbour_capacity_ = static_cast<std::size_t>(env_count("libg6", "GROVE_G6_NEIGHBOURS", 256));
    const char* precision = std::getenv("GROVE_G6_PRECISION");
    EngineConfig config;
    config.precision = precision && *precision ? precision : "mixed";
    // The device: g6_open_special's list, else GROVE_DEVICES; the first one of either (one device
    // per library until the several-GPU engine).
    bool ok = true;
    const std::vector<int> listed = devices.empty() ? env_devices("libg6", ok) : devices;
    if (!ok) return -1;
    if (!listed.empty()) config.device = listed.front();
    try {
        if (config.precision != "mixed" && config.precision != "double")
            throw std::runtime_error("GROVE_G6_PRECISION must be mixed or double (got '" + config.precision + "')");
        EngineChoice choice = choose_gpu_engine("GROVE_G6_ENGINE", config);
        if (choice.engine) {
            engine_ = std::move(choice.engine);
        } else {
            std::fprintf(stderr, "grove libg6: computing on the CPU in double precision (%s)\n",
                         choice.why_cpu.c_str());
            config.engine = "direct-cpu";
            engine_ = engines().find("direct-cpu").make_grape(config);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "grove libg6: g6_open: %s\n", e.what());
        return -1;
    }
    computed_ = failed_ = lists_read_ = false;
    const char* timing = std::getenv("GROVE_G6_TIMING");
    timing_ = Timing{};
    timing_.on = timing && *timing && std::string(timing) != "0";
    timing_.opened = std::chrono::steady_clock::now();
    return 0;
}

namespace {

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int G6Unit::close()
{
    if (engine_ && timing_.on)
        std::fprintf(stderr,
                     "grove libg6: %.3f s since g6_open: %.3f s in %lld force calls (%lld i-particles), %.3f s in "
                     "%lld g6_set_j_particle calls, the rest in the client\n",
                     seconds_since(timing_.opened), timing_.compute_s, timing_.computes, timing_.i_particles,
                     timing_.set_j_s, timing_.j_sets);
    engine_.reset();
    results_ = GrapeResults{};
    computed_ = false;
    return 0;
}

int G6Unit::npipes() const
{
    return engine_ ? npipes_ : static_cast<int>(env_count("libg6", "GROVE_G6_NPIPES", 16384));
}

bool G6Unit::ready(const char* call)
{
    if (engine_) return true;
    std::fprintf(stderr, "grove libg6: %s before g6_open\n", call);
    return false;
}

int G6Unit::set_ti(double ti)
{
    ti_ = ti;
    return 0;
}

int G6Unit::set_j_particle(int address, int index, double tj, double mass, const double k18[3], const double j6[3],
                           const double a2[3], const double v[3], const double x[3])
{
    if (!ready("g6_set_j_particle")) return -1;
    if (address < 0) {
        std::fprintf(stderr, "grove libg6: g6_set_j_particle: negative address %d\n", address);
        return -1;
    }
    bool finite = std::isfinite(tj) && std::isfinite(mass);
    for (int d = 0; d < 3; ++d)
        finite = finite && std::isfinite(x[d]) && std::isfinite(v[d]) && std::isfinite(a2[d]) && std::isfinite(j6[d]) &&
                 std::isfinite(k18[d]);
    if (!finite) { // a NaN j-particle would make every force NaN, or none, without a word
        std::fprintf(stderr, "grove libg6: g6_set_j_particle: j-particle %d (address %d) is not finite\n", index,
                     address);
        return -1;
    }
    const auto start = timing_.on ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    try {
        const auto slot = static_cast<std::size_t>(address);
        if (slot >= engine_->size()) engine_->resize(std::max<std::size_t>(slot + 1, 2 * engine_->size()));
        GrapeJParticle p;
        for (int d = 0; d < 3; ++d) {
            p.x[d] = x[d];
            p.v[d] = v[d];
            p.a2[d] = a2[d];
            p.j6[d] = j6[d];
            p.k18[d] = k18[d];
        }
        p.t = tj;
        p.mass = mass;
        p.name = index;
        engine_->set(slot, p);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "grove libg6: g6_set_j_particle: %s\n", e.what());
        return -1;
    }
    if (timing_.on) {
        timing_.set_j_s += seconds_since(start);
        ++timing_.j_sets;
    }
    return 0;
}

void G6Unit::compute(int nj, int ni, const int* index, const double (*xi)[3], const double (*vi)[3], double eps2,
                     const double* h2)
{
    computed_ = true;
    failed_ = true;
    lists_read_ = false;
    if (!ready("g6calc_firsthalf")) return;
    if (nj < 0 || ni < 0) {
        std::fprintf(stderr, "grove libg6: negative nj (%d) or ni (%d)\n", nj, ni);
        return;
    }
    if (!std::isfinite(eps2) || !(eps2 >= 0)) {
        std::fprintf(stderr, "grove libg6: eps2 = %g is not a finite number >= 0\n", eps2);
        return;
    }
    const auto start = timing_.on ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    // Everything that allocates inside the try: no exception leaves through the C API (a client
    // asking for more j-particles than memory holds gets -1 and NaN, not an abort).
    try {
        if (static_cast<std::size_t>(nj) > engine_->size()) engine_->resize(static_cast<std::size_t>(nj));
        const auto n = static_cast<std::size_t>(ni);
        i_.x.resize(3 * n);
        i_.v.resize(3 * n);
        i_.name.resize(n);
        i_.h2.resize(n);
        bool lists = false;
        for (std::size_t k = 0; k < n; ++k) {
            for (int d = 0; d < 3; ++d) {
                i_.x[3 * k + d] = xi[k][d];
                i_.v[3 * k + d] = vi[k][d];
                if (!std::isfinite(xi[k][d]) || !std::isfinite(vi[k][d]))
                    throw std::invalid_argument("i-particle " + std::to_string(index[k]) + " is not finite");
            }
            i_.name[k] = index[k];
            i_.h2[k] = h2 ? h2[k] : 0.0;
            lists = lists || i_.h2[k] > 0;
        }
        engine_->evaluate(ti_, static_cast<std::size_t>(nj), i_, eps2, lists ? neighbour_capacity_ : 0, results_);
        failed_ = false;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "grove libg6: %s\n", e.what());
    }
    if (timing_.on) {
        timing_.compute_s += seconds_since(start);
        ++timing_.computes;
        timing_.i_particles += ni;
    }
}

void G6Unit::firsthalf(int nj, int ni, const int* index, const double (*xi)[3], const double (*vi)[3], double eps2,
                       const double* h2)
{
    compute(nj, ni, index, xi, vi, eps2, h2);
}

int G6Unit::lasthalf(int nj, int ni, const int* index, const double (*xi)[3], const double (*vi)[3], double eps2,
                     const double* h2, double (*acc)[3], double (*jerk)[3], double* pot, int* nearest)
{
    if (!computed_ || i_.size() != static_cast<std::size_t>(ni)) compute(nj, ni, index, xi, vi, eps2, h2);
    computed_ = false; // the next lasthalf without a firsthalf computes again
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int k = 0; k < ni; ++k) {
        const auto s = static_cast<std::size_t>(k);
        for (int d = 0; d < 3; ++d) {
            acc[k][d] = failed_ ? nan : results_.acc[3 * s + d];
            jerk[k][d] = failed_ ? nan : results_.jerk[3 * s + d];
        }
        pot[k] = failed_ ? nan : results_.pot[s];
        if (nearest) {
            // Only one particle: it is its own nearest (the name stays valid).
            const std::int64_t nn = failed_ ? -1 : results_.nearest[s];
            nearest[k] = static_cast<int>(nn >= 0 ? nn : index[k]);
        }
    }
    return failed_ ? -1 : 0;
}

int G6Unit::read_neighbour_list()
{
    if (!ready("g6_read_neighbour_list")) return -1;
    if (failed_) return -1;
    lists_read_ = true;
    for (std::uint8_t o : results_.overflowed)
        if (o) return 1;
    return 0;
}

int G6Unit::get_neighbour_list(int ipipe, int maxlength, int* nblen, int* nbl)
{
    if (!lists_read_) {
        std::fprintf(stderr, "grove libg6: g6_get_neighbour_list before g6_read_neighbour_list\n");
        return -1;
    }
    if (ipipe < 0 || static_cast<std::size_t>(ipipe) >= i_.size()) {
        std::fprintf(stderr, "grove libg6: g6_get_neighbour_list: pipe %d outside the last %zu i-particles\n", ipipe,
                     i_.size());
        return -1;
    }
    const auto k = static_cast<std::size_t>(ipipe);
    if (results_.count.empty()) { // every h2 was 0: no lists
        *nblen = 0;
        return 0;
    }
    const std::int64_t count = results_.count[k];
    const std::int64_t stored = std::min<std::int64_t>(count, static_cast<std::int64_t>(neighbour_capacity_));
    const std::int64_t copied = std::min<std::int64_t>(stored, std::max(0, maxlength));
    for (std::int64_t m = 0; m < copied; ++m)
        nbl[m] = static_cast<int>(results_.neighbours[static_cast<std::size_t>(results_.offset[k] + m)]);
    *nblen = static_cast<int>(count);
    return count > maxlength || results_.overflowed[k] ? 1 : 0;
}

} // namespace grove::grape
