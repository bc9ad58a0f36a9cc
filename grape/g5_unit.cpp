#include "grape/g5_unit.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "grape/engine_choice.hpp"
#include "grape/environment.hpp"

namespace grove::grape {

G5Unit& G5Unit::instance()
{
    static G5Unit unit;
    return unit;
}

void G5Unit::open()
{
    if (open_) return;
    boards_.clear();
    boards_.resize(static_cast<std::size_t>(env_count("libg5", "GROVE_G5_BOARDS", 1)));
    pipelines_ = static_cast<int>(env_count("libg5", "GROVE_G5_NPIPES", 16384));
    std::string why_cpu;
    try {
        // Boards go round the devices GROVE_DEVICES lists, else all on the current device.
        bool ok = true;
        const std::vector<int> devices = env_devices("libg5", ok);
        if (!ok) throw std::runtime_error("bad GROVE_DEVICES");
        EngineConfig config;
        config.precision = "mixed";
        for (std::size_t k = 0; k < boards_.size(); ++k) {
            Board& b = boards_[k];
            if (!devices.empty()) config.device = devices[k % devices.size()];
            EngineChoice choice = choose_gpu_engine("GROVE_G5_ENGINE", config);
            if (!choice.engine) {
                why_cpu = choice.why_cpu;
                break;
            }
            b.gpu = std::move(choice.engine);
        }
    } catch (const std::exception& e) {
        why_cpu = e.what();
    }
    if (!why_cpu.empty()) {
        for (Board& b : boards_) b.gpu.reset();
        std::fprintf(stderr, "grove libg5: computing on the CPU in float, %zu board%s (%s)\n", boards_.size(),
                     boards_.size() == 1 ? "" : "s", why_cpu.c_str());
    }
    open_ = true;
}

void G5Unit::close()
{
    boards_.clear();
    open_ = false;
}

G5Unit::Board* G5Unit::board(int id, const char* call)
{
    if (!open_) {
        std::fprintf(stderr, "grove libg5: %s before g5_open\n", call);
        return nullptr;
    }
    if (id < 0 || id >= boards()) {
        std::fprintf(stderr, "grove libg5: %s: board %d outside 0..%d\n", call, id, boards() - 1);
        return nullptr;
    }
    return &boards_[static_cast<std::size_t>(id)];
}

void G5Unit::set_n(int id, int n)
{
    Board* b = board(id, "g5_set_n");
    if (!b) return;
    if (n < 0 || n > jmemsize_) {
        std::fprintf(stderr, "grove libg5: g5_set_n: n = %d outside 0..%d\n", n, jmemsize_);
        b->refused = true;
        return;
    }
    b->refused = false;
    b->n = n;
    if (b->mj.size() < static_cast<std::size_t>(n)) { // unset j-particles have mass 0
        b->mj.resize(static_cast<std::size_t>(n), 0.f);
        b->xj.resize(3 * static_cast<std::size_t>(n), 0.f);
    }
}

void G5Unit::set_j(int id, int adr, int nj, const double (*xj)[3], const double* mj)
{
    Board* b = board(id, "g5_set_xmj");
    if (!b) return;
    if (adr < 0 || nj < 0 || static_cast<long>(adr) + nj > jmemsize_) {
        std::fprintf(stderr, "grove libg5: j-particles %d..%d outside the memory of %d\n", adr, adr + nj - 1,
                     jmemsize_);
        b->refused = true;
        return;
    }
    b->refused = false;
    const auto end = static_cast<std::size_t>(adr) + static_cast<std::size_t>(nj);
    if (b->mj.size() < end) {
        b->mj.resize(end, 0.f);
        b->xj.resize(3 * end, 0.f);
    }
    for (int k = 0; k < nj; ++k) {
        const auto s = static_cast<std::size_t>(adr + k);
        if (xj)
            for (int d = 0; d < 3; ++d) b->xj[3 * s + d] = static_cast<float>(xj[k][d]);
        if (mj) b->mj[s] = static_cast<float>(mj[k]);
    }
}

void G5Unit::set_eps2(double eps2)
{
    eps2_ = static_cast<float>(eps2);
}

void G5Unit::set_xi(int id, int ni, const double (*xi)[3])
{
    Board* b = board(id, "g5_set_xi");
    if (!b) return;
    try {
        b->xi.resize(3 * static_cast<std::size_t>(std::max(ni, 0)));
    } catch (const std::exception& e) { // no exception leaves through the C API
        std::fprintf(stderr, "grove libg5: g5_set_xi: %s\n", e.what());
        b->xi.clear();
        b->failed = true;
        return;
    }
    for (int k = 0; k < ni; ++k)
        for (int d = 0; d < 3; ++d) b->xi[3 * static_cast<std::size_t>(k) + d] = static_cast<float>(xi[k][d]);
}

void G5Unit::run(int id)
{
    Board* b = board(id, "g5_run");
    if (!b) return;
    if (b->refused) { // the refused call's forces stay NaN: nothing computed from a memory it left wrong
        std::fprintf(stderr, "grove libg5: g5_run: an earlier call on the j-particles was refused; set them again\n");
        b->failed = true;
        return;
    }
    if (b->gpu)
        run_on_gpu(*b);
    else
        run_on_cpu(*b);
}

// The GRAPE engine with every j-particle at rest at time 0 and i-particles of no name, so nothing
// is excluded: an i-particle on a j-particle adds m/eps, as on the hardware.
void G5Unit::run_on_gpu(Board& b)
{
    const std::size_t nj = std::min(static_cast<std::size_t>(b.n), b.mj.size());
    const std::size_t ni = b.xi.size() / 3;
    b.failed = false;
    try {
        if (b.gpu->size() < nj) b.gpu->resize(nj);
        GrapeJParticle p;
        for (std::size_t j = 0; j < nj; ++j) {
            for (int d = 0; d < 3; ++d) p.x[d] = b.xj[3 * j + static_cast<std::size_t>(d)];
            p.mass = b.mj[j];
            p.name = p.mass != 0 ? static_cast<std::int64_t>(j) : -1; // unset ones: empty slots
            b.gpu->set(j, p);
        }
        GrapeIParticles in;
        in.x.assign(b.xi.begin(), b.xi.end());
        in.v.assign(3 * ni, 0.0);
        in.name.assign(ni, -2); // no j-particle's name
        in.h2.assign(ni, 0.0);
        GrapeResults out;
        b.gpu->evaluate(0.0, nj, in, static_cast<double>(eps2_), 0, out);
        b.acc.assign(out.acc.begin(), out.acc.end());
        b.pot.resize(ni);
        for (std::size_t k = 0; k < ni; ++k) b.pot[k] = static_cast<float>(-out.pot[k]); // GRAPE-5's sign
    } catch (const std::exception& e) {
        b.failed = true;
        std::fprintf(stderr, "grove libg5: g5_run: %s\n", e.what());
    }
}

void G5Unit::run_on_cpu(Board& b)
{
    const auto ni = static_cast<std::int64_t>(b.xi.size() / 3);
    const std::int64_t nj = std::min<std::int64_t>(b.n, static_cast<std::int64_t>(b.mj.size()));
    try {
        b.acc.assign(3 * static_cast<std::size_t>(ni), 0.f);
        b.pot.assign(static_cast<std::size_t>(ni), 0.f);
    } catch (const std::exception& e) { // no exception leaves through the C API
        b.failed = true;
        std::fprintf(stderr, "grove libg5: g5_run: %s\n", e.what());
        return;
    }
    bool infinite = false;
    const float eps2 = eps2_;
#pragma omp parallel for schedule(static) reduction(|| : infinite) if (ni * nj > 65536)
    for (std::int64_t i = 0; i < ni; ++i) {
        const float* x = &b.xi[3 * i];
        float ax = 0, ay = 0, az = 0, p = 0;
        for (std::int64_t j = 0; j < nj; ++j) {
            const float dx = b.xj[3 * j] - x[0], dy = b.xj[3 * j + 1] - x[1], dz = b.xj[3 * j + 2] - x[2];
            const float r2 = dx * dx + dy * dy + dz * dz + eps2;
            if (r2 == 0.f) { // eps = 0 and the i-particle is a j-particle: the hardware's m/eps diverges
                infinite = infinite || b.mj[j] != 0.f;
                continue;
            }
            const float inv_r = 1.f / std::sqrt(r2);
            const float m_inv_r3 = b.mj[j] * inv_r * inv_r * inv_r;
            ax += m_inv_r3 * dx;
            ay += m_inv_r3 * dy;
            az += m_inv_r3 * dz;
            p += b.mj[j] * inv_r;
        }
        b.acc[3 * i] = ax;
        b.acc[3 * i + 1] = ay;
        b.acc[3 * i + 2] = az;
        b.pot[i] = p;
    }
    b.failed = infinite;
    if (infinite)
        std::fprintf(stderr, "grove libg5: eps = 0 and an i-particle sits on a j-particle: its potential m/eps is "
                             "infinite (set eps > 0)\n");
}

void G5Unit::get_force(int id, int ni, double (*a)[3], double* p)
{
    Board* b = board(id, "g5_get_force");
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const bool bad = !b || b->failed || static_cast<std::size_t>(ni) > b->pot.size();
    if (b && !b->failed && static_cast<std::size_t>(ni) > b->pot.size())
        std::fprintf(stderr, "grove libg5: g5_get_force: %d forces asked, %zu computed\n", ni, b->pot.size());
    for (int k = 0; k < ni; ++k) {
        const auto s = static_cast<std::size_t>(k);
        for (int d = 0; d < 3; ++d) a[k][d] = bad ? nan : b->acc[3 * s + d];
        p[k] = bad ? nan : b->pot[s];
    }
}

} // namespace grove::grape
