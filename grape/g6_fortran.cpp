// libg6's Fortran-form entry points (grape6.h): every argument a pointer. They convert and call
// the unit (g6_unit.hpp); the C forms are in g6_c.cpp, a separate object.
#include "grape/g6_unit.hpp"
#include "grape/grape6.h"

using grove::grape::G6Unit;

extern "C" {

int g6_open_(int*)
{
    return G6Unit::instance().open({});
}
int g6_close_(int*)
{
    return G6Unit::instance().close();
}
int g6_npipes_(void)
{
    return G6Unit::instance().npipes();
}
// The hardware's fixed-point units: grove computes in floating point and needs none.
int g6_set_tunit_(int*)
{
    return 0;
}
int g6_set_xunit_(int*)
{
    return 0;
}
int g6_set_ti_(int*, double* ti)
{
    return G6Unit::instance().set_ti(*ti);
}

int g6_set_j_particle_(int*, int* address, int* index, double* tj, double*, double* mass, double k18[3], double j6[3],
                       double a2[3], double v[3], double x[3])
{
    return G6Unit::instance().set_j_particle(*address, *index, *tj, *mass, k18, j6, a2, v, x);
}

void g6calc_firsthalf_(int*, int* nj, int* ni, int index[], double xi[][3], double vi[][3], double (*)[3],
                       double (*)[3], double*, double* eps2, double h2[])
{
    G6Unit::instance().firsthalf(*nj, *ni, index, xi, vi, *eps2, h2);
}

int g6calc_lasthalf_(int*, int* nj, int* ni, int index[], double xi[][3], double vi[][3], double* eps2, double h2[],
                     double acc[][3], double jerk[][3], double pot[])
{
    return G6Unit::instance().lasthalf(*nj, *ni, index, xi, vi, *eps2, h2, acc, jerk, pot, nullptr);
}

int g6calc_lasthalf2_(int*, int* nj, int* ni, int index[], double xi[][3], double vi[][3], double* eps2, double h2[],
                      double acc[][3], double jerk[][3], double pot[], int nnbindex[])
{
    return G6Unit::instance().lasthalf(*nj, *ni, index, xi, vi, *eps2, h2, acc, jerk, pot, nnbindex);
}

int g6_read_neighbour_list_(int*)
{
    return G6Unit::instance().read_neighbour_list();
}

int g6_get_neighbour_list_(int*, int* ipipe, int* maxlength, int* nblen, int nbl[])
{
    return G6Unit::instance().get_neighbour_list(*ipipe, *maxlength, nblen, nbl);
}

// The hardware's DMA buffer and FPGA resets: nothing to do.
int g6_initialize_jp_buffer_(int*, int*)
{
    return 0;
}
int g6_flush_jp_buffer_(int*)
{
    return 0;
}
int g6_reset_(int*)
{
    return 0;
}
int g6_reset_fofpga_(int*)
{
    return 0;
}

} // extern "C"
