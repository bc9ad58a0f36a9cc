/* A kick-drift-kick leapfrog written the way GRAPE-5 tree and direct codes were: all particles
 * are j-particles, forces come from g5_calculate_force_on_x in chunks of the pipelines, and the
 * positive, self-including potential is corrected on the host (subtract m_i/eps, negate). C
 * names of grape5.h only.
 *
 *   leapfrog_g5 INPUT T_END DT EPS
 * INPUT: N, then N lines "m x y z vx vy vz". Prints "dE/E steps".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "grape5.h"

static int n;
static double (*x)[3], (*v)[3], (*acc)[3], *m, *pot;

static void forces(double eps)
{
    const int np = g5_get_number_of_pipelines();
    g5_set_n(n);
    g5_set_xmj(0, n, x, m);
    g5_set_eps_to_all(eps);
    for (int first = 0; first < n; first += np) {
        const int ni = n - first < np ? n - first : np;
        g5_calculate_force_on_x(x + first, acc + first, pot + first, ni);
    }
    for (int i = 0; i < n; ++i) pot[i] = -(pot[i] - m[i] / eps); /* GRAPE-5's convention, undone */
}

static double energy(void)
{
    double e = 0;
    for (int i = 0; i < n; ++i)
        e += 0.5 * m[i] * (v[i][0] * v[i][0] + v[i][1] * v[i][1] + v[i][2] * v[i][2]) + 0.5 * m[i] * pot[i];
    return e;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: leapfrog_g5 INPUT T_END DT EPS\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (!in || fscanf(in, "%d", &n) != 1 || n < 2) return 2;
    const double t_end = atof(argv[2]), dt = atof(argv[3]), eps = atof(argv[4]);
    x = malloc(sizeof(double[3]) * n);
    v = malloc(sizeof(double[3]) * n);
    acc = malloc(sizeof(double[3]) * n);
    m = malloc(sizeof(double) * n);
    pot = malloc(sizeof(double) * n);
    for (int i = 0; i < n; ++i)
        if (fscanf(in, "%lf %lf %lf %lf %lf %lf %lf", &m[i], &x[i][0], &x[i][1], &x[i][2], &v[i][0], &v[i][1],
                   &v[i][2]) != 7)
            return 2;
    fclose(in);
    g5_open();
    forces(eps);
    const double e0 = energy();
    const long steps = lround(t_end / dt);
    for (long s = 0; s < steps; ++s) {
        for (int i = 0; i < n; ++i)
            for (int d = 0; d < 3; ++d) {
                v[i][d] += 0.5 * dt * acc[i][d];
                x[i][d] += dt * v[i][d];
            }
        forces(eps);
        for (int i = 0; i < n; ++i)
            for (int d = 0; d < 3; ++d) v[i][d] += 0.5 * dt * acc[i][d];
    }
    const double e1 = energy();
    g5_close();
    printf("%.6e %ld\n", (e1 - e0) / e0, steps);
    return 0;
}
