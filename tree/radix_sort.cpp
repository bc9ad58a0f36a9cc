#include "tree/radix_sort.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include <omp.h>

namespace grove {

namespace {

constexpr int kTopBits = 8;
constexpr int kTopBuckets = 1 << kTopBits;
constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
constexpr std::size_t kInsertionLimit = 48;

constexpr std::size_t kInCacheLimit = 16384; // pairs sorted by LSD passes within L2

// Stable in-place sort of (k, v) on key bits [0, bits) by LSD passes, ping-ponging with the
// scratch (tk, tv) of the same length.
void sort_in_cache(std::uint64_t* k, std::uint32_t* v, std::uint64_t* tk, std::uint32_t* tv, std::size_t len, int bits)
{
    if (len <= kInsertionLimit) {
        for (std::size_t i = 1; i < len; ++i) {
            const std::uint64_t key = k[i];
            const std::uint32_t value = v[i];
            std::size_t j = i;
            for (; j > 0 && k[j - 1] > key; --j) {
                k[j] = k[j - 1];
                v[j] = v[j - 1];
            }
            k[j] = key;
            v[j] = value;
        }
        return;
    }
    std::uint64_t *src_k = k, *dst_k = tk;
    std::uint32_t *src_v = v, *dst_v = tv;
    std::array<std::size_t, kBuckets> count;
    for (int shift = 0; shift < bits; shift += kDigitBits) {
        count.fill(0);
        for (std::size_t i = 0; i < len; ++i) ++count[(src_k[i] >> shift) & (kBuckets - 1)];
        if (std::any_of(count.begin(), count.end(), [&](std::size_t c) { return c == len; })) continue;
        std::size_t running = 0;
        for (std::size_t& c : count) {
            const std::size_t here = c;
            c = running;
            running += here;
        }
        for (std::size_t i = 0; i < len; ++i) {
            const std::size_t d = count[(src_k[i] >> shift) & (kBuckets - 1)]++;
            dst_k[d] = src_k[i];
            dst_v[d] = src_v[i];
        }
        std::swap(src_k, dst_k);
        std::swap(src_v, dst_v);
    }
    if (src_k != k) {
        std::copy(src_k, src_k + len, k);
        std::copy(src_v, src_v + len, v);
    }
}

// start[d + 1] = number of keys whose 8-bit digit at `shift` is d (start[0] = 0); large ranges
// are counted in parallel chunks.
void count_digits(const std::uint64_t* k, std::size_t len, int shift, std::array<std::size_t, kBuckets + 1>& start)
{
    constexpr std::size_t kChunk = std::size_t{1} << 16;
    const std::size_t chunks = std::min<std::size_t>(64, (len + kChunk - 1) / kChunk);
    std::vector<std::array<std::size_t, kBuckets>> hist(chunks);
    for (std::size_t c = 0; c < chunks; ++c) {
#pragma omp task default(shared) firstprivate(c) if (chunks > 1)
        {
            auto& h = hist[c];
            h.fill(0);
            for (std::size_t i = len * c / chunks; i < len * (c + 1) / chunks; ++i)
                ++h[(k[i] >> shift) & (kBuckets - 1)];
        }
    }
#pragma omp taskwait
    start.fill(0);
    for (const auto& h : hist)
        for (int d = 0; d < kBuckets; ++d) start[static_cast<std::size_t>(d) + 1] += h[static_cast<std::size_t>(d)];
}

// Stable scatter of (k, v) by the 8-bit digit at `shift` into (tk, tv) at the bucket starts
// `start`, then copied back. Large ranges run as parallel chunks (tasks): a clustered input can
// put most of the keys into one bucket, whose pass would otherwise run on one thread.
void scatter_by_digit(std::uint64_t* k, std::uint32_t* v, std::uint64_t* tk, std::uint32_t* tv, std::size_t len,
                      int shift, const std::array<std::size_t, kBuckets + 1>& start)
{
    constexpr std::size_t kChunk = std::size_t{1} << 16;
    const std::size_t chunks = std::min<std::size_t>(64, (len + kChunk - 1) / kChunk);
    if (chunks <= 1) {
        std::array<std::size_t, kBuckets> next;
        std::copy(start.begin(), start.end() - 1, next.begin());
        for (std::size_t i = 0; i < len; ++i) {
            const std::size_t d = next[(k[i] >> shift) & (kBuckets - 1)]++;
            tk[d] = k[i];
            tv[d] = v[i];
        }
        std::copy(tk, tk + len, k);
        std::copy(tv, tv + len, v);
        return;
    }
    std::vector<std::array<std::size_t, kBuckets>> hist(chunks);
    auto bounds = [&](std::size_t c) { return std::pair{len * c / chunks, len * (c + 1) / chunks}; };
    for (std::size_t c = 0; c < chunks; ++c) {
#pragma omp task default(shared) firstprivate(c)
        {
            auto& h = hist[c];
            h.fill(0);
            const auto [b, e] = bounds(c);
            for (std::size_t i = b; i < e; ++i) ++h[(k[i] >> shift) & (kBuckets - 1)];
        }
    }
#pragma omp taskwait
    for (int d = 0; d < kBuckets; ++d) { // (digit, chunk) order keeps the scatter stable
        std::size_t running = start[static_cast<std::size_t>(d)];
        for (std::size_t c = 0; c < chunks; ++c) {
            const std::size_t count = hist[c][static_cast<std::size_t>(d)];
            hist[c][static_cast<std::size_t>(d)] = running;
            running += count;
        }
    }
    for (std::size_t c = 0; c < chunks; ++c) {
#pragma omp task default(shared) firstprivate(c)
        {
            auto& next = hist[c];
            const auto [b, e] = bounds(c);
            for (std::size_t i = b; i < e; ++i) {
                const std::size_t d = next[(k[i] >> shift) & (kBuckets - 1)]++;
                tk[d] = k[i];
                tv[d] = v[i];
            }
        }
    }
#pragma omp taskwait
    for (std::size_t c = 0; c < chunks; ++c) {
#pragma omp task default(shared) firstprivate(c)
        {
            const auto [b, e] = bounds(c);
            std::copy(tk + b, tk + e, k + b);
            std::copy(tv + b, tv + e, v + b);
        }
    }
#pragma omp taskwait
}

// Stable in-place sort on key bits [0, bits): buckets larger than the cache take one more MSD
// pass on their top 8 bits and sort their sub-buckets as OpenMP tasks (clustered inputs put
// most keys in a few top-level buckets; this keeps them parallel and in cache).
void sort_range(std::uint64_t* k, std::uint32_t* v, std::uint64_t* tk, std::uint32_t* tv, std::size_t len, int bits)
{
    while (len > kInCacheLimit && bits > 0) {
        const int shift = std::max(0, bits - kDigitBits);
        std::array<std::size_t, kBuckets + 1> start;
        count_digits(k, len, shift, start);
        if (std::any_of(start.begin(), start.end(), [&](std::size_t c) { return c == len; })) {
            bits = shift; // every key shares this digit
            continue;
        }
        for (int d = 0; d < kBuckets; ++d) start[d + 1] += start[d];
        scatter_by_digit(k, v, tk, tv, len, shift, start);
        for (int d = 0; d < kBuckets; ++d) {
            const std::size_t o = start[d], n = start[d + 1] - o;
            if (n < 2) continue;
            if (n > kInCacheLimit) {
#pragma omp task default(none) firstprivate(k, v, tk, tv, o, n, shift)
                sort_range(k + o, v + o, tk + o, tv + o, n, shift);
            } else {
                sort_in_cache(k + o, v + o, tk + o, tv + o, n, shift);
            }
        }
#pragma omp taskwait
        return;
    }
    sort_in_cache(k, v, tk, tv, len, bits);
}

} // namespace

void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values)
{
    if (keys.size() != values.size()) throw std::invalid_argument("radix_sort_pairs: keys and values differ in length");
    const std::size_t n = keys.size();
    if (n < 2) return;
    const int num_threads = std::max(1, std::min<int>(omp_get_max_threads(), static_cast<int>(n / 4096) + 1));

    // The MSD digit is the top 8 bits that any key has set.
    std::uint64_t any_bits = 0;
#pragma omp parallel for num_threads(num_threads) reduction(| : any_bits)
    for (std::size_t i = 0; i < n; ++i) any_bits |= keys[i];
    int significant = 0;
    while (significant < 64 && (any_bits >> significant) != 0) ++significant;
    const int shift = std::max(0, significant - kTopBits);

    // Kept between calls (and exchanged with the caller's buffers below), so that repeated sorts
    // touch no fresh pages.
    thread_local std::vector<std::uint64_t> keys_mid;
    thread_local std::vector<std::uint32_t> values_mid;
    keys_mid.resize(n);
    values_mid.resize(n);
    std::uint64_t* const mid_k = keys_mid.data(); // thread_local names would mean each thread's own
    std::uint32_t* const mid_v = values_mid.data();
    std::vector<std::array<std::size_t, kTopBuckets>> histogram(static_cast<std::size_t>(num_threads));
    std::array<std::size_t, kTopBuckets + 1> bucket_start{};
#pragma omp parallel num_threads(num_threads)
    {
        const int t = omp_get_thread_num();
        const std::size_t begin = n * static_cast<std::size_t>(t) / num_threads;
        const std::size_t end = n * static_cast<std::size_t>(t + 1) / num_threads;
        auto& local = histogram[static_cast<std::size_t>(t)];
        local.fill(0);
        for (std::size_t i = begin; i < end; ++i) ++local[keys[i] >> shift];
#pragma omp barrier
#pragma omp single
        {
            // Offsets in (digit, thread) order make the scatter stable.
            std::size_t running = 0;
            for (int d = 0; d < kTopBuckets; ++d) {
                bucket_start[static_cast<std::size_t>(d)] = running;
                for (int s = 0; s < num_threads; ++s) {
                    const std::size_t count = histogram[static_cast<std::size_t>(s)][d];
                    histogram[static_cast<std::size_t>(s)][d] = running;
                    running += count;
                }
            }
            bucket_start[kTopBuckets] = running;
        }
        for (std::size_t i = begin; i < end; ++i) {
            const std::size_t dest = local[keys[i] >> shift]++;
            mid_k[dest] = keys[i];
            mid_v[dest] = values[i];
        }
#pragma omp barrier
        // Each bucket sorts in place in keys_mid, with the same range of keys/values as scratch.
#pragma omp single
        for (int d = 0; d < kTopBuckets; ++d) {
            const std::size_t b0 = bucket_start[static_cast<std::size_t>(d)];
            const std::size_t len = bucket_start[static_cast<std::size_t>(d) + 1] - b0;
            if (len < 2) continue;
            std::uint64_t* k = mid_k + b0;
            std::uint32_t* v = mid_v + b0;
            std::uint64_t* tk = keys.data() + b0;
            std::uint32_t* tv = values.data() + b0;
#pragma omp task default(none) firstprivate(k, v, tk, tv, len, shift)
            sort_range(k, v, tk, tv, len, shift);
        }
    }
    keys.swap(keys_mid);
    values.swap(values_mid);
}

} // namespace grove
