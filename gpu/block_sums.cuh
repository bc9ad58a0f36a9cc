// Where a direct-summation thread keeps the double-precision totals of its targets, which it adds
// its float (or double) sums of a tile into once per tile. Two places with one interface:
// - BlockSums: shared memory, a column per thread (no thread reads another's, so no barrier).
//   In registers the totals take 2 x 4 x 4 (acc + pot, four targets) or 2 x 7 x 2 (acc, jerk,
//   pot, two targets) registers, which cost the float and mixed Hermite kernels resident warps.
// - RegisterSums: registers, for kernels that gained nothing from the move or lost (the mixed
//   acc + pot kernel spilled).
#pragma once

namespace grove::gpu {

// The storage is a __shared__ array of the constructor, one per block and instantiation: a kernel
// makes one BlockSums of a given type (two would share their columns).
template <int kTargets, int kWords, int kThreads> class BlockSums {
  public:
    __device__ BlockSums()
    {
        __shared__ double storage[kTargets][kWords][kThreads]; // one per instantiation and block
        v_ = storage;
#pragma unroll
        for (int k = 0; k < kTargets; ++k)
#pragma unroll
            for (int w = 0; w < kWords; ++w) v_[k][w][threadIdx.x] = 0.0;
    }
    // Adds the calling thread's kWords partial sums of its target k.
    template <class T> __device__ void add(int k, const T (&part)[kWords])
    {
#pragma unroll
        for (int w = 0; w < kWords; ++w) v_[k][w][threadIdx.x] += part[w];
    }
    __device__ double get(int k, int w) const
    {
        return v_[k][w][threadIdx.x];
    }

  private:
    double (*v_)[kWords][kThreads];
};

template <int kTargets, int kWords> class RegisterSums {
  public:
    template <class T> __device__ void add(int k, const T (&part)[kWords])
    {
#pragma unroll
        for (int w = 0; w < kWords; ++w) v_[k][w] += part[w];
    }
    __device__ double get(int k, int w) const
    {
        return v_[k][w];
    }

  private:
    double v_[kTargets][kWords] = {};
};

} // namespace grove::gpu
