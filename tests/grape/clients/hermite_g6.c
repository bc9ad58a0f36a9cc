/* A 4th-order Hermite integrator with block time steps written the way the GRAPE-6 codes were
 * (Makino & Aarseth 1992): the j-particles live in the GRAPE's memory, the active particles are
 * predicted on the host and sent as i-particles. It uses grape6.h's C names only, and mirrors
 * grove's own `hermite` integrator step for step (Aarseth's criterion, start-up criterion
 * 0.01 |a|/|j|, steps powers of two) so that the two can be compared.
 *
 *   hermite_g6 INPUT T_END ETA DT_MAX EPS
 * INPUT: N, then N lines "m x y z vx vy vz". Prints "dE/E block_steps particle_steps".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "grape6.h"

/* b is a power of two, so t / b is exact and t is a multiple of b when the quotient is whole
 * (fmod gives the same answer, several times slower). */
static double block_step_size(double dt, double limit, double t)
{
    double b = limit;
    while (b > dt && b >= 0x1.0p-40) b *= 0.5;
    while (t / b != floor(t / b) && b >= 0x1.0p-40) b *= 0.5;
    return b;
}

static double norm(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: hermite_g6 INPUT T_END ETA DT_MAX EPS\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    int n = 0;
    if (!in || fscanf(in, "%d", &n) != 1 || n < 2) return 2;
    const double t_end = atof(argv[2]), eta = atof(argv[3]), dt_max = atof(argv[4]), eps = atof(argv[5]);
    const double eps2 = eps * eps;
    double (*x)[3] = malloc(sizeof(double[3]) * n), (*v)[3] = malloc(sizeof(double[3]) * n);
    double (*a)[3] = malloc(sizeof(double[3]) * n), (*j)[3] = malloc(sizeof(double[3]) * n);
    double (*xp)[3] = malloc(sizeof(double[3]) * n), (*vp)[3] = malloc(sizeof(double[3]) * n);
    double (*a1)[3] = malloc(sizeof(double[3]) * n), (*j1)[3] = malloc(sizeof(double[3]) * n);
    double *m = malloc(sizeof(double) * n), *t = malloc(sizeof(double) * n), *dt = malloc(sizeof(double) * n);
    double *pot = malloc(sizeof(double) * n), *h2 = calloc((size_t)n, sizeof(double));
    int *active = malloc(sizeof(int) * n), *nn = malloc(sizeof(int) * n);
    for (int i = 0; i < n; ++i)
        if (fscanf(in, "%lf %lf %lf %lf %lf %lf %lf", &m[i], &x[i][0], &x[i][1], &x[i][2], &v[i][0], &v[i][1],
                   &v[i][2]) != 7)
            return 2;
    fclose(in);

    g6_open(0);
    const int npipes = g6_npipes();
    double zero[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i) {
        t[i] = 0;
        g6_set_j_particle(0, i, i, 0.0, 0.0, m[i], zero, zero, zero, v[i], x[i]);
    }
    g6_set_ti(0, 0.0);
    /* forces on particles list[0..count) at their given xi, vi (chunks of npipes) */
#define FORCES(list, count, xs, vs)                                                                                  \
    for (int first = 0; first < (count); first += npipes) {                                                        \
        const int ni = (count) - first < npipes ? (count) - first : npipes;                                        \
        int idx[ni];                                                                                                \
        double xi[ni][3], vi[ni][3], ai[ni][3], ji[ni][3], pi[ni];                                                  \
        for (int k = 0; k < ni; ++k) {                                                                              \
            const int i = (list)[first + k];                                                                        \
            idx[k] = i;                                                                                             \
            for (int d = 0; d < 3; ++d) {                                                                           \
                xi[k][d] = (xs)[i][d];                                                                              \
                vi[k][d] = (vs)[i][d];                                                                              \
            }                                                                                                       \
        }                                                                                                           \
        g6calc_firsthalf(0, n, ni, idx, xi, vi, ai, ji, pi, eps2, h2);                                              \
        g6calc_lasthalf2(0, n, ni, idx, xi, vi, eps2, h2, ai, ji, pi, nn);                                          \
        for (int k = 0; k < ni; ++k) {                                                                              \
            const int i = (list)[first + k];                                                                        \
            for (int d = 0; d < 3; ++d) {                                                                           \
                a1[i][d] = ai[k][d];                                                                                \
                j1[i][d] = ji[k][d];                                                                                \
            }                                                                                                       \
            pot[i] = pi[k];                                                                                         \
        }                                                                                                           \
    }

    for (int i = 0; i < n; ++i) active[i] = i;
    FORCES(active, n, x, v);
    double e0 = 0;
    for (int i = 0; i < n; ++i) {
        for (int d = 0; d < 3; ++d) {
            a[i][d] = a1[i][d];
            j[i][d] = j1[i][d];
        }
        e0 += 0.5 * m[i] * (v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2]) + 0.5 * m[i] * pot[i];
        const double na = norm(a[i]), nj = norm(j[i]);
        dt[i] = block_step_size(nj > 0 ? 0.01 * na / nj : dt_max, dt_max, 0.0);
        double a2[3] = {a[i][0] / 2, a[i][1] / 2, a[i][2] / 2}, j6[3] = {j[i][0] / 6, j[i][1] / 6, j[i][2] / 6};
        g6_set_j_particle(0, i, i, 0.0, dt[i], m[i], zero, j6, a2, v[i], x[i]);
    }

    long long blocks = 0, steps = 0;
    for (;;) {
        /* one pass: the earliest end of step, and the particles that share it */
        double t_next = INFINITY;
        int count = 0;
        for (int i = 0; i < n; ++i) {
            const double end = t[i] + dt[i];
            if (end > t_next) continue;
            if (end < t_next) {
                t_next = end;
                count = 0;
            }
            active[count++] = i;
        }
        if (t_next > t_end) break;
        g6_set_ti(0, t_next);
        for (int k = 0; k < count; ++k) { /* the host predicts the i-particles as grove does */
            const int i = active[k];
            const double h = t_next - t[i], h2d = h * h / 2, h3 = h2d * h / 3;
            for (int d = 0; d < 3; ++d) {
                xp[i][d] = x[i][d] + h * v[i][d] + h2d * a[i][d] + h3 * j[i][d];
                vp[i][d] = v[i][d] + h * a[i][d] + h2d * j[i][d];
            }
        }
        FORCES(active, count, xp, vp);
        for (int k = 0; k < count; ++k) {
            const int i = active[k];
            const double h = dt[i], h3 = h * h * h, h4 = h3 * h, h5 = h4 * h;
            double s2[3], s3[3], s2e[3];
            for (int d = 0; d < 3; ++d) {
                s2[d] = (-6 * (a[i][d] - a1[i][d]) - h * (4 * j[i][d] + 2 * j1[i][d])) / (h * h);
                s3[d] = (12 * (a[i][d] - a1[i][d]) + 6 * h * (j[i][d] + j1[i][d])) / h3;
                x[i][d] = xp[i][d] + s2[d] * h4 / 24 + s3[d] * h5 / 120;
                v[i][d] = vp[i][d] + s2[d] * h3 / 6 + s3[d] * h4 / 24;
                a[i][d] = a1[i][d];
                j[i][d] = j1[i][d];
                s2e[d] = s2[d] + h * s3[d];
            }
            t[i] = t_next;
            const double na = norm(a[i]), nj = norm(j[i]), n2 = norm(s2e), n3 = norm(s3);
            const double num = na * n2 + nj * nj, den = nj * n3 + n2 * n2;
            const double dt_new = den > 0 ? sqrt(eta * num / den) : dt_max;
            dt[i] = block_step_size(dt_new < 2 * h ? dt_new : 2 * h, dt_max, t_next);
            double a2[3], j6[3], k18[3];
            for (int d = 0; d < 3; ++d) {
                a2[d] = a[i][d] / 2;
                j6[d] = j[i][d] / 6;
                k18[d] = s2e[d] / 18; /* the snap at the end of the step, as the GRAPE takes it */
            }
            g6_set_j_particle(0, i, i, t_next, dt[i], m[i], k18, j6, a2, v[i], x[i]);
        }
        ++blocks;
        steps += count;
    }
    g6_set_ti(0, t_end);
    for (int i = 0; i < n; ++i) active[i] = i;
    FORCES(active, n, x, v);
    double e1 = 0;
    for (int i = 0; i < n; ++i)
        e1 += 0.5 * m[i] * (v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2]) + 0.5 * m[i] * pot[i];
    g6_close(0);
    printf("%.6e %lld %lld\n", (e1 - e0) / e0, blocks, steps);
    return 0;
}
