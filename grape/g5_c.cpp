// libg5's C-form entry points (scalars by value), in their own object and weak, as libg6's.
#include "grape/grape5.h"

#define GROVE_WEAK __attribute__((weak))

extern "C" {

GROVE_WEAK void g5_open(void)
{
    g5_open_();
}
GROVE_WEAK void g5_close(void)
{
    g5_close_();
}
GROVE_WEAK int g5_get_number_of_pipelines(void)
{
    return g5_get_number_of_pipelines_();
}
GROVE_WEAK int g5_get_jmemsize(void)
{
    return g5_get_jmemsize_();
}
GROVE_WEAK void g5_set_range(double xmin, double xmax, double mmin)
{
    g5_set_range_(&xmin, &xmax, &mmin);
}
GROVE_WEAK void g5_set_n(int n)
{
    g5_set_n_(&n);
}
GROVE_WEAK void g5_set_xmj(int adr, int nj, double (*xj)[3], double* mj)
{
    g5_set_xmj_(&adr, &nj, xj, mj);
}
GROVE_WEAK void g5_set_xj(int adr, int nj, double (*xj)[3])
{
    g5_set_xj_(&adr, &nj, xj);
}
GROVE_WEAK void g5_set_mj(int adr, int nj, double* mj)
{
    g5_set_mj_(&adr, &nj, mj);
}
GROVE_WEAK void g5_set_jp(int adr, int nj, double* mj, double (*xj)[3])
{
    g5_set_jp_(&adr, &nj, mj, xj);
}
GROVE_WEAK void g5_set_eps_to_all(double eps)
{
    g5_set_eps_to_all_(&eps);
}
GROVE_WEAK void g5_set_eps2_to_all(double eps2)
{
    g5_set_eps2_to_all_(&eps2);
}
GROVE_WEAK void g5_set_xi(int ni, double (*xi)[3])
{
    g5_set_xi_(&ni, xi);
}
GROVE_WEAK void g5_run(void)
{
    g5_run_();
}
GROVE_WEAK void g5_get_force(int ni, double (*a)[3], double* p)
{
    g5_get_force_(&ni, a, p);
}
GROVE_WEAK void g5_calculate_force_on_x(double (*x)[3], double (*a)[3], double* p, int ni)
{
    g5_calculate_force_on_x_(x, a, p, &ni);
}
GROVE_WEAK int g5_get_number_of_boards(void)
{
    return g5_get_number_of_boards_();
}
GROVE_WEAK int g5_get_number_of_pipelines_per_board(void)
{
    return g5_get_number_of_pipelines_per_board_();
}
GROVE_WEAK int g5_get_firstcluster(void)
{
    return g5_get_firstcluster_();
}
GROVE_WEAK void g5_set_xiMC(int devid, int ni, double (*xi)[3])
{
    g5_set_ximc_(&devid, &ni, xi);
}
GROVE_WEAK void g5_runMC(int devid)
{
    g5_runmc_(&devid);
}
GROVE_WEAK void g5_get_forceMC(int devid, int ni, double (*a)[3], double* p)
{
    g5_get_forcemc_(&devid, &ni, a, p);
}
GROVE_WEAK void g5_set_nMC(int devid, int n)
{
    g5_set_nmc_(&devid, &n);
}
GROVE_WEAK void g5_set_xmjMC(int devid, int adr, int nj, double (*xj)[3], double* mj)
{
    g5_set_xmjmc_(&devid, &adr, &nj, xj, mj);
}
GROVE_WEAK void g5_calculate_force_on_xMC(int devid, double (*x)[3], double (*a)[3], double* p, int ni)
{
    g5_calculate_force_on_xmc_(&devid, x, a, p, &ni);
}

} // extern "C"
