// libg6's C-form entry points (scalars by value), in their own object and weak: a client that
// defines its own C wrappers around the Fortran names keeps them, with the shared library and
// with the static one alike.
#include <vector>

#include "grape/g6_unit.hpp"
#include "grape/grape6.h"

using grove::grape::G6Unit;

#define GROVE_WEAK __attribute__((weak))

extern "C" {

GROVE_WEAK int g6_open(int)
{
    return G6Unit::instance().open({});
}
GROVE_WEAK int g6_open_special(int ngpu, int* list)
{
    return G6Unit::instance().open(list && ngpu > 0 ? std::vector<int>(list, list + ngpu) : std::vector<int>{});
}
GROVE_WEAK int g6_close(int)
{
    return G6Unit::instance().close();
}
GROVE_WEAK int g6_npipes(void)
{
    return G6Unit::instance().npipes();
}
GROVE_WEAK int g6_set_tunit(int)
{
    return 0;
}
GROVE_WEAK int g6_set_xunit(int)
{
    return 0;
}
GROVE_WEAK int g6_set_ti(int, double ti)
{
    return G6Unit::instance().set_ti(ti);
}

GROVE_WEAK int g6_set_j_particle(int, int address, int index, double tj, double, double mass, double k18[3],
                                 double j6[3], double a2[3], double v[3], double x[3])
{
    return G6Unit::instance().set_j_particle(address, index, tj, mass, k18, j6, a2, v, x);
}

GROVE_WEAK void g6calc_firsthalf(int, int nj, int ni, int index[], double xi[][3], double vi[][3], double (*)[3],
                                 double (*)[3], double*, double eps2, double h2[])
{
    G6Unit::instance().firsthalf(nj, ni, index, xi, vi, eps2, h2);
}

GROVE_WEAK int g6calc_lasthalf(int, int nj, int ni, int index[], double xi[][3], double vi[][3], double eps2,
                               double h2[], double acc[][3], double jerk[][3], double pot[])
{
    return G6Unit::instance().lasthalf(nj, ni, index, xi, vi, eps2, h2, acc, jerk, pot, nullptr);
}

GROVE_WEAK int g6calc_lasthalf2(int, int nj, int ni, int index[], double xi[][3], double vi[][3], double eps2,
                                double h2[], double acc[][3], double jerk[][3], double pot[], int nnbindex[])
{
    return G6Unit::instance().lasthalf(nj, ni, index, xi, vi, eps2, h2, acc, jerk, pot, nnbindex);
}

GROVE_WEAK int g6_read_neighbour_list(int)
{
    return G6Unit::instance().read_neighbour_list();
}
GROVE_WEAK int g6_get_neighbour_list(int, int ipipe, int maxlength, int* nblen, int nbl[])
{
    return G6Unit::instance().get_neighbour_list(ipipe, maxlength, nblen, nbl);
}
GROVE_WEAK int g6_initialize_jp_buffer(int, int)
{
    return 0;
}
GROVE_WEAK int g6_flush_jp_buffer(int)
{
    return 0;
}
GROVE_WEAK int g6_reset(int)
{
    return 0;
}
GROVE_WEAK int g6_reset_fofpga(int)
{
    return 0;
}

} // extern "C"
