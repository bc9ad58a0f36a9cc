// Diagnostics of a particle store on the device (core/device_particles.hpp), made where the state
// lives: the sums of a diagnostics line by one reduction, the Lagrangian radii by a sort of the
// radii with their masses and a scan, in the spare array between steps. The host receives a few
// numbers instead of every particle.
#include "gpu/tree_resident.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "gpu/cuda_check.cuh"
#include "gpu/resident_tree_kernels.cuh"

namespace grove {

namespace {

// What compute_diagnostics sums over the particles.
struct StateSums {
    double mass, mv2, mphi;                    // m, m v^2, m phi
    double momentum[3], angular[3], moment[3]; // m v, m x cross v, m x
};

struct AddStateSums {
    __device__ StateSums operator()(const StateSums& a, const StateSums& b) const
    {
        StateSums s;
        s.mass = a.mass + b.mass;
        s.mv2 = a.mv2 + b.mv2;
        s.mphi = a.mphi + b.mphi;
        for (int d = 0; d < 3; ++d) {
            s.momentum[d] = a.momentum[d] + b.momentum[d];
            s.angular[d] = a.angular[d] + b.angular[d];
            s.moment[d] = a.moment[d] + b.moment[d];
        }
        return s;
    }
};

struct SumsOfParticle {
    const Vec4<double>* body;
    const Vec4<double>* vel;
    const float4* sums; // the potentials in w, without G
    double G;
    __device__ StateSums operator()(int k) const
    {
        const Vec4<double> x = body[k], v = vel[k];
        const double m = x.w, phi = G * sums[k].w; // as store() converts it
        StateSums s;
        s.mass = m;
        s.mv2 = m * (v.x * v.x + v.y * v.y + v.z * v.z);
        s.mphi = m * phi;
        const double xv[3] = {x.x, x.y, x.z}, vv[3] = {v.x, v.y, v.z};
        for (int d = 0; d < 3; ++d) {
            s.momentum[d] = m * vv[d];
            s.moment[d] = m * xv[d];
        }
        s.angular[0] = m * (x.y * v.z - x.z * v.y);
        s.angular[1] = m * (x.z * v.x - x.x * v.z);
        s.angular[2] = m * (x.x * v.y - x.y * v.x);
        return s;
    }
};

struct MassMomentOfParticle {
    const Vec4<double>* body;
    __device__ Vec4<double> operator()(int k) const
    {
        const Vec4<double> x = body[k];
        return {x.w * x.x, x.w * x.y, x.w * x.z, x.w};
    }
};

struct AddVec4 {
    __device__ Vec4<double> operator()(const Vec4<double>& a, const Vec4<double>& b) const
    {
        return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};
    }
};

__global__ void radii_kernel(int n, const Vec4<double>* body, Vec4<double> centre, double* radius, double* mass)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const Vec4<double> x = body[k];
    const double dx = x.x - centre.x, dy = x.y - centre.y, dz = x.z - centre.z;
    radius[k] = sqrt(dx * dx + dy * dy + dz * dz);
    mass[k] = x.w;
}

// The radius enclosing each fraction of the mass, as radius_enclosing (core/diagnostics.hpp)
// interpolates it: `enclosed` is the running sum of the masses in the order of the radii.
__global__ void enclosing_kernel(int n, const double* radius, const double* enclosed, const double* fractions,
                                 int count, double* out)
{
    const int f = blockIdx.x * blockDim.x + threadIdx.x;
    if (f >= count) return;
    const double target = fractions[f] * enclosed[n - 1];
    int lo = 0, hi = n - 1; // the first particle whose running sum reaches the target
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (enclosed[mid] >= target)
            hi = mid;
        else
            lo = mid + 1;
    }
    const double r = radius[lo], e = enclosed[lo];
    const double r0 = lo > 0 ? radius[lo - 1] : 0, e0 = lo > 0 ? enclosed[lo - 1] : 0;
    const double span = e - e0;
    out[f] = span > 0 ? r0 + (r - r0) * (target - e0) / span : r;
}

} // namespace

bool TreeGpuResident::diagnostics(const std::vector<double>& fractions, Diagnostics& out)
{
    if (!loaded_ || ranks_) return false; // a domain's sums are a part: the caller reduces over the ranks
    if (forces_due_ || kick_due_) throw std::logic_error("tree-gpu: diagnostics in the middle of a step");
    check_fractions(fractions);
    guarded([&] {
        make_potentials();
        const auto per_particle = thrust::make_transform_iterator(
            thrust::counting_iterator<int>(0),
            SumsOfParticle{body_.data(), vel_.data(), e_.d_sorted.data(), e_.gravity.G});
        diagnostic_sums_.reserve(sizeof(StateSums), "diagnostics");
        auto* d_sums = reinterpret_cast<StateSums*>(diagnostic_sums_.data());
        std::size_t bytes = 0;
        CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, per_particle, d_sums, n_, AddStateSums{}, StateSums{},
                                             e_.stream));
        reduce_temp_.reserve(bytes, "diagnostics workspace");
        CUDA_CHECK(cub::DeviceReduce::Reduce(reduce_temp_.data(), bytes, per_particle, d_sums, n_, AddStateSums{},
                                             StateSums{}, e_.stream));
        StateSums s;
        CUDA_CHECK(cudaMemcpyAsync(&s, d_sums, sizeof s, cudaMemcpyDeviceToHost, e_.stream));
        CUDA_CHECK(cudaStreamSynchronize(e_.stream));
        out = Diagnostics{};
        out.mass = s.mass;
        out.kinetic = 0.5 * s.mv2;
        out.potential = 0.5 * s.mphi;
        complete_energies(out);
        for (int d = 0; d < 3; ++d) {
            out.momentum[d] = s.momentum[d];
            out.angular_momentum[d] = s.angular[d];
            if (s.mass > 0) out.centre_of_mass[d] = s.moment[d] / s.mass;
        }
        out.lagrangian_radii.assign(fractions.size(), 0.0);
        if (fractions.empty()) return;
        const Vec4<double> centre{out.centre_of_mass[0], out.centre_of_mass[1], out.centre_of_mass[2], 0};
        lagrangian_radii(centre, fractions.data(), fractions.size(), out.lagrangian_radii.data());
    });
    return true;
}

void TreeGpuResident::lagrangian_radii(const Vec4<double>& centre, const double* fractions, std::size_t count,
                                       double* radii)
{
    // The radii about the centre with their masses, sorted, in spare_ (free between steps, once
    // the last keys left it: its 32 bytes a particle hold both of the sort's double buffers).
    static_assert(sizeof(Vec4<double>) >= 4 * sizeof(double));
    const auto n = static_cast<std::size_t>(n_);
    CUDA_CHECK(cudaStreamWaitEvent(e_.stream, ev_[kKeysCopied], 0));
    auto* radius = reinterpret_cast<double*>(spare_.data());
    double* mass = radius + 2 * n;
    radii_kernel<<<blocks_for(n), kBlock, 0, e_.stream>>>(n_, body_.data(), centre, radius, mass);
    gpu::check_launch("radii_kernel", e_.stream);
    cub::DoubleBuffer<double> sorted(radius, radius + n), masses(mass, mass + n);
    std::size_t bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, sorted, masses, n_, 0, 64, e_.stream));
    sort_temp_.reserve(bytes, "diagnostics workspace");
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(sort_temp_.data(), bytes, sorted, masses, n_, 0, 64, e_.stream));
    double* enclosed = masses.Current();
    CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, enclosed, enclosed, n_, e_.stream));
    scan_temp_.reserve(bytes, "diagnostics workspace");
    CUDA_CHECK(cub::DeviceScan::InclusiveSum(scan_temp_.data(), bytes, enclosed, enclosed, n_, e_.stream));
    diagnostic_fractions_.reserve(2 * count, "diagnostics");
    copy_async(diagnostic_fractions_.data(), fractions, count, cudaMemcpyHostToDevice, e_.stream);
    enclosing_kernel<<<blocks_for(count), kBlock, 0, e_.stream>>>(n_, sorted.Current(), enclosed,
                                                                  diagnostic_fractions_.data(), static_cast<int>(count),
                                                                  diagnostic_fractions_.data() + count);
    gpu::check_launch("enclosing_kernel", e_.stream);
    copy_async(radii, diagnostic_fractions_.data() + count, count, cudaMemcpyDeviceToHost, e_.stream);
    CUDA_CHECK(cudaStreamSynchronize(e_.stream));
}

EnclosedMassProfile TreeGpuResident::enclosed_mass_profile()
{
    // The mass and its first moment by one reduction (no potentials: the profile needs none).
    const auto per_particle =
        thrust::make_transform_iterator(thrust::counting_iterator<int>(0), MassMomentOfParticle{body_.data()});
    diagnostic_sums_.reserve(sizeof(Vec4<double>), "diagnostics");
    auto* d_moment = reinterpret_cast<Vec4<double>*>(diagnostic_sums_.data());
    std::size_t bytes = 0;
    CUDA_CHECK(
        cub::DeviceReduce::Reduce(nullptr, bytes, per_particle, d_moment, n_, AddVec4{}, Vec4<double>{}, e_.stream));
    reduce_temp_.reserve(bytes, "diagnostics workspace");
    CUDA_CHECK(cub::DeviceReduce::Reduce(reduce_temp_.data(), bytes, per_particle, d_moment, n_, AddVec4{},
                                         Vec4<double>{}, e_.stream));
    Vec4<double> moment;
    CUDA_CHECK(cudaMemcpyAsync(&moment, d_moment, sizeof moment, cudaMemcpyDeviceToHost, e_.stream));
    CUDA_CHECK(cudaStreamSynchronize(e_.stream));
    const double mass = moment.w;
    if (!(mass > 0)) throw std::runtime_error("tree-gpu: the dynamical time needs a positive total mass");
    const Vec4<double> centre{moment.x / mass, moment.y / mass, moment.z / mass, 0};
    const double at[3] = {centre.x, centre.y, centre.z};
    EnclosedMassProfile p = profile_about(mass, at);
    lagrangian_radii(centre, p.fraction, kProfilePoints, p.radius);
    return p;
}

} // namespace grove
