/* grape6.h: the GRAPE-6 library interface of grove's libg6 (grape/README.md).
 *
 * Two forms of every call. The Fortran form (lower case, one trailing underscore, every argument a
 * pointer) is what Fortran clients call and what most C clients of the hardware library used; the
 * C form takes scalars by value. Arrays of vectors are C double[n][3] (Fortran x(3,n)).
 *
 * Semantics are the hardware's: j-particles predicted to g6_set_ti's time with x + v dt + a2 dt^2
 * + j6 dt^3 + (3/4) k18 dt^4 (a2 = a/2, j6 = jerk/6, k18 = snap/18); acceleration, jerk and
 * potential (negative) of the given i-particles with one eps2 per call; a j-particle whose index
 * equals the i-particle's index is skipped; g6calc_lasthalf2 also returns the index of the nearest
 * other j-particle by unsoftened distance; neighbour lists hold the j indices within each i's
 * radius sqrt(h2) (unsoftened), sorted, the particle itself excluded. fold/jold/phiold are ignored.
 * Return values: 0 on success; g6calc_lasthalf* return -1 after an error (printed on stderr, the
 * results set to NaN); g6_read_neighbour_list returns 1 when some list outgrew the library's
 * per-particle capacity (GROVE_G6_NEIGHBOURS, default 256), g6_get_neighbour_list returns 1 when
 * the list is longer than maxlength (*nblen is then the true length, maxlength entries stored).
 */
#ifndef GROVE_GRAPE6_H
#define GROVE_GRAPE6_H

#ifdef __cplusplus
extern "C" {
#endif

/* C form */
int g6_open(int clusterid);
int g6_open_special(int ngpu, int* list);
int g6_close(int clusterid);
int g6_npipes(void);
int g6_set_tunit(int newtunit);
int g6_set_xunit(int newxunit);
int g6_set_ti(int clusterid, double ti);
int g6_set_j_particle(int clusterid, int address, int index, double tj, double dtj, double mass, double k18[3],
                      double j6[3], double a2[3], double v[3], double x[3]);
void g6calc_firsthalf(int clusterid, int nj, int ni, int index[], double xi[][3], double vi[][3], double fold[][3],
                      double jold[][3], double phiold[], double eps2, double h2[]);
int g6calc_lasthalf(int clusterid, int nj, int ni, int index[], double xi[][3], double vi[][3], double eps2,
                    double h2[], double acc[][3], double jerk[][3], double pot[]);
int g6calc_lasthalf2(int clusterid, int nj, int ni, int index[], double xi[][3], double vi[][3], double eps2,
                     double h2[], double acc[][3], double jerk[][3], double pot[], int nnbindex[]);
int g6_read_neighbour_list(int clusterid);
int g6_get_neighbour_list(int clusterid, int ipipe, int maxlength, int* nblen, int nbl[]);
int g6_initialize_jp_buffer(int clusterid, int size);
int g6_flush_jp_buffer(int clusterid);
int g6_reset(int clusterid);
int g6_reset_fofpga(int clusterid);

/* Fortran form */
int g6_open_(int* clusterid);
int g6_close_(int* clusterid);
int g6_npipes_(void);
int g6_set_tunit_(int* newtunit);
int g6_set_xunit_(int* newxunit);
int g6_set_ti_(int* clusterid, double* ti);
int g6_set_j_particle_(int* clusterid, int* address, int* index, double* tj, double* dtj, double* mass, double k18[3],
                       double j6[3], double a2[3], double v[3], double x[3]);
void g6calc_firsthalf_(int* clusterid, int* nj, int* ni, int index[], double xi[][3], double vi[][3], double fold[][3],
                       double jold[][3], double phiold[], double* eps2, double h2[]);
int g6calc_lasthalf_(int* clusterid, int* nj, int* ni, int index[], double xi[][3], double vi[][3], double* eps2,
                     double h2[], double acc[][3], double jerk[][3], double pot[]);
int g6calc_lasthalf2_(int* clusterid, int* nj, int* ni, int index[], double xi[][3], double vi[][3], double* eps2,
                      double h2[], double acc[][3], double jerk[][3], double pot[], int nnbindex[]);
int g6_read_neighbour_list_(int* clusterid);
int g6_get_neighbour_list_(int* clusterid, int* ipipe, int* maxlength, int* nblen, int nbl[]);
int g6_initialize_jp_buffer_(int* clusterid, int* size);
int g6_flush_jp_buffer_(int* clusterid);
int g6_reset_(int* clusterid);
int g6_reset_fofpga_(int* clusterid);

#ifdef __cplusplus
}
#endif

#endif
