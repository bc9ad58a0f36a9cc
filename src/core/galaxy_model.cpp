#include "core/galaxy_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/eddington.hpp"
#include "core/rng.hpp"

namespace grove {

namespace {

constexpr double kPi = Rng::kPi;
constexpr std::size_t kGridPoints = 3000;

void require_positive(double value, const char* option)
{
    if (!(value > 0) || !std::isfinite(value))
        throw std::invalid_argument(std::string("galaxy: ") + option + " must be a finite number > 0 (got " +
                                    std::to_string(value) + ")");
}

// A tapered spherical component: Hernquist or NFW shape times exp(-(r / r_t)^2), normalised to
// its mass on the model's radial grid.
struct SphericalComponent {
    const char* name;
    const char* option_prefix; // "--bulge" or "--halo", for error messages
    double mass, scale, truncation;
    bool nfw;

    double shape(double r) const
    {
        const double x = r / scale;
        const double core = nfw ? 1 / (x * (1 + x) * (1 + x)) : 1 / (x * std::pow(1 + x, 3));
        return core * std::exp(-(r / truncation) * (r / truncation));
    }
};

// Radial grid, the component densities on it, and the cumulative masses.
struct ComponentTable {
    std::vector<double> rho, drho_dr, cumulative; // cumulative mass fraction at grid radii
    double inner_fraction = 0;                    // mass fraction inside r[0]
};

ComponentTable tabulate(const SphericalComponent& c, const std::vector<double>& r)
{
    const std::size_t n = r.size();
    ComponentTable t;
    t.rho.resize(n);
    t.drho_dr.resize(n);
    t.cumulative.resize(n);
    const double h = 1e-4; // relative step of the radial derivative
    for (std::size_t i = 0; i < n; ++i) {
        t.rho[i] = c.shape(r[i]);
        t.drho_dr[i] = (c.shape(r[i] * (1 + h)) - c.shape(r[i] * (1 - h))) / (2 * h * r[i]);
    }
    // Both shapes are 1/r cusps inside r[0] << scale, where M(r) = 2 pi rho r^3.
    double m = 2 * kPi * t.rho[0] * std::pow(r[0], 3);
    const double inner = m;
    t.cumulative[0] = m;
    for (std::size_t i = 1; i < n; ++i) {
        m +=
            2 * kPi * std::log(r[i] / r[i - 1]) * (std::pow(r[i], 3) * t.rho[i] + std::pow(r[i - 1], 3) * t.rho[i - 1]);
        t.cumulative[i] = m;
    }
    const double norm = c.mass / m;
    for (std::size_t i = 0; i < n; ++i) {
        t.rho[i] *= norm;
        t.drho_dr[i] *= norm;
        t.cumulative[i] /= m;
    }
    t.inner_fraction = inner / m;
    return t;
}

// Cumulative fraction at radius x by interpolation in ln r (M ~ r^2 inside the grid).
double cumulative_at(const std::vector<double>& r, const std::vector<double>& cum, double x)
{
    if (x <= r.front()) return cum.front() * (x / r.front()) * (x / r.front());
    if (x >= r.back()) return 1;
    const auto i = static_cast<std::size_t>(std::upper_bound(r.begin(), r.end(), x) - r.begin()) - 1;
    const double t = std::log(x / r[i]) / std::log(r[i + 1] / r[i]);
    return cum[i] + t * (cum[i + 1] - cum[i]);
}

// Radius enclosing fraction u, the inverse of cumulative_at.
double radius_at(const std::vector<double>& r, const std::vector<double>& cum, double u)
{
    if (u <= cum.front()) return r.front() * std::sqrt(u / cum.front());
    if (u >= cum.back()) return r.back();
    const auto i = static_cast<std::size_t>(std::upper_bound(cum.begin(), cum.end(), u) - cum.begin()) - 1;
    const double t = (u - cum[i]) / (cum[i + 1] - cum[i]);
    return r[i] * std::pow(r[i + 1] / r[i], t);
}

std::vector<double> radial_grid(const GalaxyParams& p)
{
    const double r_min = 1e-4 * std::min({p.bulge_scale, p.halo_scale, p.disk_scale_length});
    const double r_max = 8 * std::max({p.bulge_truncation, p.halo_truncation, 10 * p.disk_scale_length});
    std::vector<double> r(kGridPoints);
    for (std::size_t i = 0; i < kGridPoints; ++i)
        r[i] = r_min * std::pow(r_max / r_min, static_cast<double>(i) / (kGridPoints - 1));
    return r;
}

SphericalComponent bulge_of(const GalaxyParams& p)
{
    return {"bulge", "--bulge", p.bulge_mass, p.bulge_scale, p.bulge_truncation, false};
}

SphericalComponent halo_of(const GalaxyParams& p)
{
    return {"halo", "--halo", p.halo_mass, p.halo_scale, p.halo_truncation, p.halo_profile == HaloProfile::Nfw};
}

// Disk mass within R of the exponential disk, as a fraction.
double exponential_fraction(double x)
{
    return x < 1e-4 ? x * x / 2 * (1 - 2 * x / 3) : 1 - (1 + x) * std::exp(-x);
}

// Midplane circular speed squared of a razor-thin exponential disk (Freeman 1970).
double thin_disk_vc2(double R, double mass, double scale, double G)
{
    const double y = R / (2 * scale);
    if (y > 40) return G * mass / R; // Keplerian; the Bessel products underflow there
    if (y < 1e-8) return 0;
    const double sigma0 = mass / (2 * kPi * scale * scale);
    return 4 * kPi * G * sigma0 * scale * y * y *
           (std::cyl_bessel_i(0, y) * std::cyl_bessel_k(0, y) - std::cyl_bessel_i(1, y) * std::cyl_bessel_k(1, y));
}

std::string kpc(double r)
{
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g kpc", r);
    return buf;
}

} // namespace

void validate(const GalaxyParams& p)
{
    require_positive(p.bulge_mass, "--bulge-mass");
    require_positive(p.bulge_scale, "--bulge-scale");
    require_positive(p.bulge_truncation, "--bulge-truncation");
    require_positive(p.disk_mass, "--disk-mass");
    require_positive(p.disk_scale_length, "--disk-scale-length");
    require_positive(p.disk_scale_height, "--disk-scale-height");
    require_positive(p.toomre_q, "--disk-q");
    require_positive(p.q_radius, "--disk-q-radius");
    require_positive(p.halo_mass, "--halo-mass");
    require_positive(p.halo_scale, "--halo-scale");
    require_positive(p.halo_truncation, "--halo-truncation");
}

double GalaxyProfiles::bulge_mass_fraction(double x) const
{
    return cumulative_at(r, bulge, x);
}
double GalaxyProfiles::halo_mass_fraction(double x) const
{
    return cumulative_at(r, halo, x);
}
double GalaxyProfiles::disk_mass_fraction(double R) const
{
    return exponential_fraction(R / params.disk_scale_length);
}
double GalaxyProfiles::disk_height_fraction(double abs_z) const
{
    return std::tanh(abs_z / params.disk_scale_height);
}

GalaxyProfiles galaxy_profiles(const GalaxyParams& params)
{
    validate(params);
    GalaxyProfiles g;
    g.params = params;
    g.r = radial_grid(params);
    g.bulge = tabulate(bulge_of(params), g.r).cumulative;
    g.halo = tabulate(halo_of(params), g.r).cumulative;
    return g;
}

namespace {

// x with 1 - (1 + x) e^-x = u (the exponential disk's mass fraction inside R = x R_d), by Newton's
// method (monotone, converges from x = 2).
double exponential_radius(double u)
{
    double x = 2;
    for (int it = 0; it < 60; ++it) {
        const double step = (exponential_fraction(x) - u) / (x * std::exp(-x));
        x = std::max(0.5 * x, x - step);
        if (std::abs(step) < 1e-13 * x) break;
    }
    return x;
}

// Each component recentred on its own centre of mass and momentum, so the whole model is too while
// the components stay concentric: a shift of the whole by the halo's sampling noise (~1 kpc at 1e4
// particles) would lift the disk out of its own plane.
void recentre_components(ParticleSet& out)
{
    const std::size_t n = out.size();
    for (const Component type : {Component::Bulge, Component::Disk, Component::Halo}) {
        Eigen::Vector3d mx = Eigen::Vector3d::Zero(), mv = Eigen::Vector3d::Zero();
        double m = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (out.type[i] == static_cast<std::uint8_t>(type)) {
                const auto c = static_cast<Eigen::Index>(i);
                m += out.mass[c];
                mx += out.mass[c] * out.pos.col(c);
                mv += out.mass[c] * out.vel.col(c);
            }
        for (std::size_t i = 0; i < n; ++i)
            if (out.type[i] == static_cast<std::uint8_t>(type)) {
                const auto c = static_cast<Eigen::Index>(i);
                out.pos.col(c) -= mx / m;
                out.vel.col(c) -= mv / m;
            }
    }
}

// Refuses a spherical component whose isotropic distribution function is negative in the total
// potential, naming the options to change.
void check_distribution_function(const SphericalComponent& c, const EddingtonDf& df)
{
    if (df.worst_negative_ratio() < -1e-3)
        throw std::invalid_argument(
            std::string("galaxy: the ") + c.name + "'s isotropic distribution function is negative near r = " +
            kpc(df.worst_negative_radius()) + " in the total potential; these parameters have no equilibrium (change " +
            c.option_prefix + "-truncation or " + c.option_prefix + "-scale)");
}

} // namespace

ParticleSet make_galaxy(std::size_t n, std::uint64_t seed, const GalaxyParams& p)
{
    validate(p);
    if (n < 3) throw std::invalid_argument("galaxy: N must be >= 3 (one particle per component at least)");
    const double G = gadget_units().G;
    const std::vector<double> r = radial_grid(p);
    const SphericalComponent bulge = bulge_of(p), halo = halo_of(p);
    const ComponentTable tb = tabulate(bulge, r), th = tabulate(halo, r);

    // Total density with the disk spherically averaged: dM_d/dr = M_d r exp(-r/R_d) / R_d^2.
    const double rd = p.disk_scale_length;
    std::vector<double> rho_total(r.size());
    for (std::size_t i = 0; i < r.size(); ++i)
        rho_total[i] = tb.rho[i] + th.rho[i] + p.disk_mass * std::exp(-r[i] / rd) / (4 * kPi * rd * rd * r[i]);
    const double inner_mass = tb.inner_fraction * p.bulge_mass + th.inner_fraction * p.halo_mass +
                              p.disk_mass * exponential_fraction(r[0] / rd);
    const RadialTable table = make_radial_table(r, rho_total, inner_mass, G);

    const EddingtonDf df_bulge(table, tb.rho, tb.drho_dr), df_halo(table, th.rho, th.drho_dr);
    check_distribution_function(bulge, df_bulge);
    check_distribution_function(halo, df_halo);

    // Midplane rotation curve and epicyclic frequency.
    auto vc2 = [&](double R) {
        const double m_sph =
            cumulative_at(r, tb.cumulative, R) * p.bulge_mass + cumulative_at(r, th.cumulative, R) * p.halo_mass;
        return G * m_sph / R + thin_disk_vc2(R, p.disk_mass, rd, G);
    };
    auto kappa2 = [&](double R) {
        const double h = 1e-3 * R;
        const double dvc2 = (vc2(R + h) - vc2(R - h)) / (2 * h);
        return 2 * vc2(R) / (R * R) + dvc2 / R;
    };
    auto surface_density = [&](double R) { return p.disk_mass / (2 * kPi * rd * rd) * std::exp(-R / rd); };
    // sigma_R^2 = sigma_R0^2 exp(-R / R_d), fixed by Q = sigma_R kappa / (3.36 G Sigma) at R_ref.
    const double r_ref = p.q_radius * rd;
    const double sigma_ref = p.toomre_q * 3.36 * G * surface_density(r_ref) / std::sqrt(kappa2(r_ref));
    const double sigma_r0_2 = sigma_ref * sigma_ref * std::exp(r_ref / rd);
    // kappa^2 / (4 Omega^2), the epicyclic ratio.
    auto epicyclic_ratio = [&](double R) { return kappa2(R) * R * R / (4 * vc2(R)); };
    auto mean_vphi2 = [&](double R, double sigma_r2, double ratio) {
        return vc2(R) + sigma_r2 * (1 - ratio - 2 * R / rd);
    };
    if (mean_vphi2(r_ref, sigma_ref * sigma_ref, epicyclic_ratio(r_ref)) <= 0)
        throw std::invalid_argument("galaxy: --disk-q " + std::to_string(p.toomre_q) + " cannot be reached: at R = " +
                                    kpc(r_ref) + " it needs sigma_R = " + std::to_string(sigma_ref) +
                                    " km/s, more than the rotation curve can hold against (asymmetric drift "
                                    "leaves no mean rotation)");

    // Particle numbers in proportion to mass; the halo takes the rounding remainder.
    const double m_total = p.bulge_mass + p.disk_mass + p.halo_mass;
    const auto share = [&](double m) {
        return std::max<std::size_t>(1, static_cast<std::size_t>(std::llround(static_cast<double>(n) * m / m_total)));
    };
    const std::size_t n_bulge = share(p.bulge_mass), n_disk = share(p.disk_mass);
    if (n_bulge + n_disk >= n) throw std::invalid_argument("galaxy: N is too small for three components");
    const std::size_t n_halo = n - n_bulge - n_disk;

    ParticleSet out;
    out.resize(n);
    out.units = gadget_units();
    Rng rng(seed);
    std::size_t next = 0;
    auto sample_spherical = [&](std::size_t count, const ComponentTable& t, const EddingtonDf& df, double mass,
                                Component type) {
        for (std::size_t k = 0; k < count; ++k, ++next) {
            const auto c = static_cast<Eigen::Index>(next);
            const double radius = radius_at(r, t.cumulative, rng.uniform_open());
            out.pos.col(c) = rng.isotropic(radius);
            out.vel.col(c) = rng.isotropic(df.sample_speed(rng, radius));
            out.mass[c] = mass / static_cast<double>(count);
            out.type[next] = static_cast<std::uint8_t>(type);
        }
    };
    sample_spherical(n_bulge, tb, df_bulge, p.bulge_mass, Component::Bulge);
    for (std::size_t k = 0; k < n_disk; ++k, ++next) {
        const auto c = static_cast<Eigen::Index>(next);
        const double R = exponential_radius(rng.uniform_open()) * rd;
        const double z = p.disk_scale_height * std::atanh(2 * rng.uniform_open() - 1);
        const double phi = rng.uniform(0, 2 * kPi);
        const double sigma_r2 = sigma_r0_2 * std::exp(-R / rd);
        const double ratio = epicyclic_ratio(R);
        const double sigma_z = std::sqrt(kPi * G * surface_density(R) * p.disk_scale_height);
        const double v_r = std::sqrt(sigma_r2) * rng.normal();
        const double v_phi =
            std::sqrt(std::max(0.0, mean_vphi2(R, sigma_r2, ratio))) + std::sqrt(sigma_r2 * ratio) * rng.normal();
        const double v_z = sigma_z * rng.normal();
        out.pos.col(c) << R * std::cos(phi), R * std::sin(phi), z;
        out.vel.col(c) << v_r * std::cos(phi) - v_phi * std::sin(phi), v_r * std::sin(phi) + v_phi * std::cos(phi), v_z;
        out.mass[c] = p.disk_mass / static_cast<double>(n_disk);
        out.type[next] = static_cast<std::uint8_t>(Component::Disk);
    }
    sample_spherical(n_halo, th, df_halo, p.halo_mass, Component::Halo);

    recentre_components(out);
    return out;
}

} // namespace grove
