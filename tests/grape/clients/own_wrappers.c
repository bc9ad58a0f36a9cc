/* A client that, like several old codes, defines its own C wrappers around the GRAPE-6 library's
 * Fortran names. It must link against libg6 (shared or static) without a duplicate definition,
 * and its wrappers must be the ones called. Prints the x acceleration of a unit mass at distance 2.
 */
#include <stdio.h>

int g6_open_(int *id);
int g6_close_(int *id);
int g6_set_ti_(int *id, double *ti);
int g6_set_j_particle_(int *id, int *address, int *index, double *tj, double *dtj, double *mass, double k18[3],
                       double j6[3], double a2[3], double v[3], double x[3]);
int g6calc_lasthalf_(int *id, int *nj, int *ni, int index[], double xi[][3], double vi[][3], double *eps2, double h2[],
                     double acc[][3], double jerk[][3], double pot[]);

static int wrapper_calls = 0;

int g6_open(int id)
{
    ++wrapper_calls;
    return g6_open_(&id);
}

int g6_close(int id)
{
    ++wrapper_calls;
    return g6_close_(&id);
}

int main(void)
{
    int id = 0, address = 0, index = 7, nj = 1, ni = 1, self = 1;
    double t = 0, mass = 1, zero[3] = {0, 0, 0}, x[3] = {2, 0, 0};
    double xi[1][3] = {{0, 0, 0}}, vi[1][3] = {{0, 0, 0}}, acc[1][3], jerk[1][3], pot[1], h2[1] = {0}, eps2 = 0;
    g6_open(0);
    g6_set_j_particle_(&id, &address, &index, &t, &t, &mass, zero, zero, zero, zero, x);
    g6_set_ti_(&id, &t);
    if (g6calc_lasthalf_(&id, &nj, &ni, &self, xi, vi, &eps2, h2, acc, jerk, pot) != 0) return 1;
    g6_close(0);
    printf("%.17g %.17g %d\n", acc[0][0], pot[0], wrapper_calls);
    return wrapper_calls == 2 ? 0 : 1;
}
