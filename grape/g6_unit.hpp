// The state behind libg6's calls (grape6.h): one GRAPE-6 "cluster" served by a GRAPE engine
// (core/grape_engine.hpp) from the registry. The extern "C" entry points (g6_fortran.cpp,
// g6_c.cpp) only convert arguments; everything else is here, and nothing throws past it.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/grape_engine.hpp"

namespace grove::grape {

class G6Unit {
  public:
    // The one unit of the process (clients address it by cluster id; every id maps to it).
    static G6Unit& instance();

    int open(const std::vector<int>& devices); // devices empty: GROVE_DEVICES or the default
    int close();
    int npipes() const;
    int set_ti(double ti);
    int set_j_particle(int address, int index, double tj, double mass, const double k18[3], const double j6[3],
                       const double a2[3], const double v[3], const double x[3]);
    // firsthalf computes; lasthalf copies out (computing first if firsthalf was not called).
    void firsthalf(int nj, int ni, const int* index, const double (*xi)[3], const double (*vi)[3], double eps2,
                   const double* h2);
    int lasthalf(int nj, int ni, const int* index, const double (*xi)[3], const double (*vi)[3], double eps2,
                 const double* h2, double (*acc)[3], double (*jerk)[3], double* pot, int* nearest);
    int read_neighbour_list();
    int get_neighbour_list(int ipipe, int maxlength, int* nblen, int* nbl);

  private:
    bool ready(const char* call);
    void compute(int nj, int ni, const int* index, const double (*xi)[3], const double (*vi)[3], double eps2,
                 const double* h2);

    std::unique_ptr<GrapeEngine> engine_;
    double ti_ = 0;
    int npipes_ = 16384;
    std::size_t neighbour_capacity_ = 256;
    GrapeIParticles i_;
    GrapeResults results_;
    bool computed_ = false, failed_ = false, lists_read_ = false;

    // GROVE_G6_TIMING=1: where the time went, printed by g6_close (the library's share of a
    // client's run, for comparing a legacy code with grove's own integrators).
    struct Timing {
        bool on = false;
        std::chrono::steady_clock::time_point opened;
        double compute_s = 0, set_j_s = 0;
        long long computes = 0, i_particles = 0, j_sets = 0;
    } timing_;
};

} // namespace grove::grape
