/* grape5.h: the GRAPE-5 library interface of grove's libg5 (grape/README.md).
 *
 * Semantics are the hardware's: float arithmetic; g5_set_eps_to_all takes eps (not eps^2); the
 * acceleration of an i-particle at x_i is sum_j m_j (x_j - x_i) / (r^2 + eps^2)^(3/2) and its
 * potential is returned POSITIVE, sum_j m_j / sqrt(r^2 + eps^2), with no self-exclusion (an i that
 * is also a j adds m / eps): every GRAPE-5 client corrects for both. g5_set_range is accepted and
 * has no effect. Boards are virtual (GROVE_G5_BOARDS, default 1): each has its own j-memory and
 * i-particles; the calls without MC act on board 0.
 */
#ifndef GROVE_GRAPE5_H
#define GROVE_GRAPE5_H

#ifdef __cplusplus
extern "C" {
#endif

void g5_open(void);
void g5_close(void);
int g5_get_number_of_pipelines(void);
int g5_get_jmemsize(void);
void g5_set_range(double xmin, double xmax, double mmin);
void g5_set_n(int n);
void g5_set_xmj(int adr, int nj, double (*xj)[3], double* mj);
void g5_set_xj(int adr, int nj, double (*xj)[3]);
void g5_set_mj(int adr, int nj, double* mj);
void g5_set_jp(int adr, int nj, double* mj, double (*xj)[3]);
void g5_set_eps_to_all(double eps);
void g5_set_eps2_to_all(double eps2);
void g5_set_xi(int ni, double (*xi)[3]);
void g5_run(void);
void g5_get_force(int ni, double (*a)[3], double* p);
void g5_calculate_force_on_x(double (*x)[3], double (*a)[3], double* p, int ni);
int g5_get_number_of_boards(void);
int g5_get_number_of_pipelines_per_board(void);
int g5_get_firstcluster(void);
void g5_set_xiMC(int devid, int ni, double (*xi)[3]);
void g5_runMC(int devid);
void g5_get_forceMC(int devid, int ni, double (*a)[3], double* p);
void g5_set_nMC(int devid, int n);
void g5_set_xmjMC(int devid, int adr, int nj, double (*xj)[3], double* mj);
void g5_calculate_force_on_xMC(int devid, double (*x)[3], double (*a)[3], double* p, int ni);

/* Fortran form: every argument a pointer */
void g5_open_(void);
void g5_close_(void);
int g5_get_number_of_pipelines_(void);
int g5_get_jmemsize_(void);
void g5_set_range_(double* xmin, double* xmax, double* mmin);
void g5_set_n_(int* n);
void g5_set_xmj_(int* adr, int* nj, double (*xj)[3], double* mj);
void g5_set_xj_(int* adr, int* nj, double (*xj)[3]);
void g5_set_mj_(int* adr, int* nj, double* mj);
void g5_set_jp_(int* adr, int* nj, double* mj, double (*xj)[3]);
void g5_set_eps_to_all_(double* eps);
void g5_set_eps2_to_all_(double* eps2);
void g5_set_xi_(int* ni, double (*xi)[3]);
void g5_run_(void);
void g5_get_force_(int* ni, double (*a)[3], double* p);
void g5_calculate_force_on_x_(double (*x)[3], double (*a)[3], double* p, int* ni);
int g5_get_number_of_boards_(void);
int g5_get_number_of_pipelines_per_board_(void);
int g5_get_firstcluster_(void);
void g5_set_ximc_(int* devid, int* ni, double (*xi)[3]);
void g5_runmc_(int* devid);
void g5_get_forcemc_(int* devid, int* ni, double (*a)[3], double* p);
void g5_set_nmc_(int* devid, int* n);
void g5_set_xmjmc_(int* devid, int* adr, int* nj, double (*xj)[3], double* mj);
void g5_calculate_force_on_xmc_(int* devid, double (*x)[3], double (*a)[3], double* p, int* ni);

#ifdef __cplusplus
}
#endif

#endif
