#include "tree/radix_sort.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <omp.h>

namespace grove {

namespace {
constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
} // namespace

void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values)
{
    if (keys.size() != values.size()) throw std::invalid_argument("radix_sort_pairs: keys and values differ in length");
    const std::size_t n = keys.size();
    if (n < 2) return;
    std::vector<std::uint64_t> keys_out(n);
    std::vector<std::uint32_t> values_out(n);
    const int num_threads = std::max(1, std::min<int>(omp_get_max_threads(), static_cast<int>(n / 4096) + 1));
    std::vector<std::array<std::size_t, kBuckets>> histogram(static_cast<std::size_t>(num_threads));

    for (int shift = 0; shift < 64; shift += kDigitBits) {
        bool all_same_digit = false;
#pragma omp parallel num_threads(num_threads)
        {
            const int t = omp_get_thread_num();
            const std::size_t begin = n * static_cast<std::size_t>(t) / num_threads;
            const std::size_t end = n * static_cast<std::size_t>(t + 1) / num_threads;
            auto& local = histogram[static_cast<std::size_t>(t)];
            local.fill(0);
            for (std::size_t i = begin; i < end; ++i) ++local[(keys[i] >> shift) & (kBuckets - 1)];
#pragma omp barrier
#pragma omp single
            {
                // Offsets in (digit, thread) order make the scatter stable.
                std::size_t running = 0;
                for (int d = 0; d < kBuckets; ++d) {
                    std::size_t digit_total = 0;
                    for (int s = 0; s < num_threads; ++s) {
                        const std::size_t count = histogram[static_cast<std::size_t>(s)][d];
                        histogram[static_cast<std::size_t>(s)][d] = running;
                        running += count;
                        digit_total += count;
                    }
                    if (digit_total == n) all_same_digit = true;
                }
            }
            if (!all_same_digit) {
                for (std::size_t i = begin; i < end; ++i) {
                    const std::size_t dest = local[(keys[i] >> shift) & (kBuckets - 1)]++;
                    keys_out[dest] = keys[i];
                    values_out[dest] = values[i];
                }
            }
        }
        if (!all_same_digit) {
            keys.swap(keys_out);
            values.swap(values_out);
        }
    }
}

} // namespace grove
