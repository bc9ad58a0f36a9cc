#include "core/eddington.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace grove {

namespace {

constexpr double kPi = Rng::kPi;

// Index i with psi[i] >= value > psi[i + 1] for a decreasing table (clamped to the ends).
std::size_t bracket_decreasing(const std::vector<double>& psi, double value)
{
    const auto it = std::upper_bound(psi.begin(), psi.end(), value, [](double v, double p) { return v > p; });
    const auto i = static_cast<std::size_t>(it - psi.begin());
    return std::min(i == 0 ? 0 : i - 1, psi.size() - 2);
}

} // namespace

double RadialTable::psi_at(double radius) const
{
    if (radius <= r.front()) return psi.front();
    if (radius >= r.back()) return psi.back() * r.back() / radius; // Keplerian outside
    const auto i = static_cast<std::size_t>(std::upper_bound(r.begin(), r.end(), radius) - r.begin()) - 1;
    const double t = std::log(radius / r[i]) / std::log(r[i + 1] / r[i]);
    return psi[i] + t * (psi[i + 1] - psi[i]);
}

RadialTable make_radial_table(std::vector<double> r, const std::vector<double>& rho, double mass_inner, double G)
{
    const std::size_t n = r.size();
    RadialTable t;
    t.G = G;
    t.mass.resize(n);
    t.psi.resize(n);
    // Trapezoid rule in ln r: dM = 4 pi r^3 rho dln r, and the outer integral 4 pi r^2 rho dln r.
    t.mass[0] = mass_inner;
    for (std::size_t i = 1; i < n; ++i) {
        const double h = std::log(r[i] / r[i - 1]);
        t.mass[i] = t.mass[i - 1] + 2 * kPi * h * (std::pow(r[i], 3) * rho[i] + std::pow(r[i - 1], 3) * rho[i - 1]);
    }
    double outer = 0; // integral from r[i] to r[n-1] of 4 pi r rho dr
    t.psi[n - 1] = G * t.mass[n - 1] / r[n - 1];
    for (std::size_t i = n - 1; i-- > 0;) {
        const double h = std::log(r[i + 1] / r[i]);
        outer += 2 * kPi * h * (r[i + 1] * r[i + 1] * rho[i + 1] + r[i] * r[i] * rho[i]);
        t.psi[i] = G * (t.mass[i] / r[i] + outer);
    }
    t.r = std::move(r);
    return t;
}

EddingtonDf::EddingtonDf(const RadialTable& table, const std::vector<double>& rho, const std::vector<double>& drho_dr)
    : table_(table)
{
    const std::vector<double>& psi = table.psi;
    const std::size_t n = psi.size();
    if (n < 3 || rho.size() != n || drho_dr.size() != n) throw std::invalid_argument("EddingtonDf: table sizes differ");
    // d rho / d Psi = rho'(r) / Psi'(r) with Psi' = -G M(r) / r^2, then the second derivative by
    // finite differences on the (non-uniform) Psi grid.
    std::vector<double> d1(n), d2(n);
    for (std::size_t i = 0; i < n; ++i) d1[i] = drho_dr[i] / (-table.G * table.mass[i] / (table.r[i] * table.r[i]));
    for (std::size_t i = 1; i + 1 < n; ++i) {
        const double hl = psi[i - 1] - psi[i], hr = psi[i] - psi[i + 1];
        // Three-point derivative on an uneven grid (psi decreases with i).
        d2[i] = (d1[i - 1] * hr * hr - d1[i + 1] * hl * hl + d1[i] * (hl * hl - hr * hr)) / (hl * hr * (hl + hr));
    }
    d2[0] = d2[1];
    d2[n - 1] = d2[n - 2];

    const double norm = 1 / (std::sqrt(8.0) * kPi * kPi);
    f_.assign(n, 0.0);
    // Each energy's integral on a thread of its own (the table's n^2 / 2 segments are most of a
    // model's set-up); the most negative ratio is then found in order, as one thread would.
    std::vector<double> ratio(n, 0.0);
#pragma omp parallel for schedule(dynamic, 16)
    for (std::size_t k = 0; k < n; ++k) {
        const double e = psi[k];
        double sum = 0, sum_abs = 0;
        // Segments [psi[j+1], psi[j]] for j >= k; rho'' linear in Psi on each, integrated exactly
        // against (E - Psi)^(-1/2): with u = E - Psi,
        //   int g du/sqrt(u) = (g_a + s (E - a)) 2 (sqrt(u_a) - sqrt(u_b)) - s 2/3 (u_a^1.5 - u_b^1.5).
        for (std::size_t j = k; j + 1 < n; ++j) {
            const double a = psi[j + 1], b = psi[j];
            const double ga = d2[j + 1], gb = d2[j];
            const double s = (gb - ga) / (b - a);
            const double ua = e - a, ub = std::max(0.0, e - b);
            const double w0 = 2 * (std::sqrt(ua) - std::sqrt(ub));
            const double w1 = (2.0 / 3.0) * (ua * std::sqrt(ua) - ub * std::sqrt(ub));
            sum += (ga + s * (e - a)) * w0 - s * w1;
            sum_abs += std::max(std::abs(ga), std::abs(gb)) * w0;
        }
        f_[k] = norm * sum;
        if (sum_abs > 0) ratio[k] = sum / sum_abs;
    }
    for (std::size_t k = 0; k < n; ++k)
        if (ratio[k] < worst_ratio_) {
            worst_ratio_ = ratio[k];
            worst_radius_ = table.r[k];
        }
    // Rounding-level negatives become zero; clearly negative values are reported by the caller.
    for (double& v : f_) v = std::max(v, 0.0);

    peak_.assign(n, 0.0);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
        const double v_max = std::sqrt(2 * psi[i]);
        for (int s = 1; s < 128; ++s) {
            const double v = v_max * s / 128;
            peak_[i] = std::max(peak_[i], v * v * f(psi[i] - v * v / 2));
        }
    }
}

double EddingtonDf::f(double energy) const
{
    const std::vector<double>& psi = table_.psi;
    if (!(energy > 0) || energy > psi.front()) return 0;
    if (energy <= psi.back()) return f_.back();
    const std::size_t i = bracket_decreasing(psi, energy);
    const double t = (psi[i] - energy) / (psi[i] - psi[i + 1]);
    const double a = f_[i], b = f_[i + 1];
    if (a > 0 && b > 0) return a * std::pow(b / a, t);
    return a + t * (b - a);
}

double EddingtonDf::density_from_df(double psi) const
{
    const int steps = 4000;
    const double v_max = std::sqrt(2 * psi);
    double sum = 0;
    for (int s = 1; s < steps; ++s) { // the integrand vanishes at both ends
        const double v = v_max * s / steps;
        sum += v * v * f(psi - v * v / 2);
    }
    return 4 * kPi * sum * v_max / steps;
}

double EddingtonDf::sample_speed(Rng& rng, double radius) const
{
    const double psi = table_.psi_at(radius);
    const double v_max = std::sqrt(2 * psi);
    const std::size_t i = bracket_decreasing(table_.psi, psi);
    const double envelope = 1.25 * std::max(peak_[i], peak_[i + 1]);
    if (!(envelope > 0)) throw std::runtime_error("distribution function is zero at r = " + std::to_string(radius));
    for (int attempt = 0; attempt < 1000000; ++attempt) {
        const double v = v_max * rng.uniform();
        if (rng.uniform() * envelope <= v * v * f(psi - v * v / 2)) return v;
    }
    throw std::runtime_error("speed sampling did not converge at r = " + std::to_string(radius));
}

} // namespace grove
