// libg5's Fortran-form entry points (grape5.h): every argument a pointer, names in lower case with
// one trailing underscore. The C forms are in g5_c.cpp.
#include "grape/g5_unit.hpp"
#include "grape/grape5.h"

using grove::grape::G5Unit;

extern "C" {

void g5_open_(void)
{
    G5Unit::instance().open();
}
void g5_close_(void)
{
    G5Unit::instance().close();
}
int g5_get_number_of_pipelines_(void)
{
    return G5Unit::instance().pipelines();
}
int g5_get_jmemsize_(void)
{
    return G5Unit::instance().jmemsize();
}
void g5_set_range_(double*, double*, double*) {} // fixed-point ranges: floating point needs none
void g5_set_n_(int* n)
{
    G5Unit::instance().set_n(0, *n);
}
void g5_set_xmj_(int* adr, int* nj, double (*xj)[3], double* mj)
{
    G5Unit::instance().set_j(0, *adr, *nj, xj, mj);
}
void g5_set_xj_(int* adr, int* nj, double (*xj)[3])
{
    G5Unit::instance().set_j(0, *adr, *nj, xj, nullptr);
}
void g5_set_mj_(int* adr, int* nj, double* mj)
{
    G5Unit::instance().set_j(0, *adr, *nj, nullptr, mj);
}
void g5_set_jp_(int* adr, int* nj, double* mj, double (*xj)[3])
{
    G5Unit::instance().set_j(0, *adr, *nj, xj, mj);
}
void g5_set_eps_to_all_(double* eps)
{
    G5Unit::instance().set_eps2(*eps * *eps);
}
void g5_set_eps2_to_all_(double* eps2)
{
    G5Unit::instance().set_eps2(*eps2);
}
void g5_set_xi_(int* ni, double (*xi)[3])
{
    G5Unit::instance().set_xi(0, *ni, xi);
}
void g5_run_(void)
{
    G5Unit::instance().run(0);
}
void g5_get_force_(int* ni, double (*a)[3], double* p)
{
    G5Unit::instance().get_force(0, *ni, a, p);
}
void g5_calculate_force_on_x_(double (*x)[3], double (*a)[3], double* p, int* ni)
{
    G5Unit& u = G5Unit::instance();
    u.set_xi(0, *ni, x);
    u.run(0);
    u.get_force(0, *ni, a, p);
}
int g5_get_number_of_boards_(void)
{
    return G5Unit::instance().boards();
}
int g5_get_number_of_pipelines_per_board_(void)
{
    return G5Unit::instance().pipelines();
}
int g5_get_firstcluster_(void)
{
    return 0;
}
void g5_set_ximc_(int* devid, int* ni, double (*xi)[3])
{
    G5Unit::instance().set_xi(*devid, *ni, xi);
}
void g5_runmc_(int* devid)
{
    G5Unit::instance().run(*devid);
}
void g5_get_forcemc_(int* devid, int* ni, double (*a)[3], double* p)
{
    G5Unit::instance().get_force(*devid, *ni, a, p);
}
void g5_set_nmc_(int* devid, int* n)
{
    G5Unit::instance().set_n(*devid, *n);
}
void g5_set_xmjmc_(int* devid, int* adr, int* nj, double (*xj)[3], double* mj)
{
    G5Unit::instance().set_j(*devid, *adr, *nj, xj, mj);
}
void g5_calculate_force_on_xmc_(int* devid, double (*x)[3], double (*a)[3], double* p, int* ni)
{
    G5Unit& u = G5Unit::instance();
    u.set_xi(*devid, *ni, x);
    u.run(*devid);
    u.get_force(*devid, *ni, a, p);
}

} // extern "C"
