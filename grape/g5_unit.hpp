// The state behind libg5's calls (grape5.h): virtual boards, each a j-memory (positions, masses)
// and a set of i-particles. A board computes on the GPU through grove's GRAPE engine when there is
// one (grape/engine_choice.hpp; mixed precision, which is more than the GRAPE-5's float), else in
// float on the CPU with OpenMP, as the hardware did. Nothing throws past it: errors are printed on
// stderr and the results set to NaN.
#pragma once

#include <memory>
#include <vector>

#include "core/grape_engine.hpp"

namespace grove::grape {

class G5Unit {
  public:
    static G5Unit& instance();

    void open();
    void close();
    int boards() const { return static_cast<int>(boards_.size()); }
    int pipelines() const { return pipelines_; }
    int jmemsize() const { return jmemsize_; }
    void set_n(int board, int n);
    // Either array may be null (g5_set_xj, g5_set_mj).
    void set_j(int board, int adr, int nj, const double (*xj)[3], const double* mj);
    void set_eps2(double eps2);
    void set_xi(int board, int ni, const double (*xi)[3]);
    void run(int board);
    void get_force(int board, int ni, double (*a)[3], double* p);

  private:
    struct Board {
        std::vector<float> xj, mj, xi; // 3, 1, 3 per particle
        int n = 0;
        std::vector<float> acc, pot;
        bool failed = false;              // the last run failed: its forces read as NaN
        bool refused = false;             // a j-particle call was refused: every run fails until g5_set_n
                                          // or a g5_set_xmj that fits the memory
        std::unique_ptr<GrapeEngine> gpu; // null: the CPU
    };
    Board* board(int id, const char* call);
    void run_on_cpu(Board& b);
    void run_on_gpu(Board& b);

    std::vector<Board> boards_;
    float eps2_ = 0;
    int pipelines_ = 16384, jmemsize_ = 1 << 24;
    bool open_ = false;
};

} // namespace grove::grape
