#include "tree/radix_sort.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>

#include <omp.h>

namespace grove {

namespace {

constexpr int kDigitBits = 8;
constexpr int kBuckets = 1 << kDigitBits;
constexpr std::size_t kInsertionLimit = 48;

constexpr std::size_t kInCacheLimit = std::size_t{1} << 16; // pairs sorted by LSD passes within L2

void insertion_sort(std::uint64_t* k, std::uint32_t* v, std::size_t len)
{
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
}

// Stable in-place sort on key bits [0, bits) of a range in cache, by MSD passes on 8-bit digits
// from the top, each sub-range recursing until it is small enough for insertion sort. The sample
// sort's buckets (about 4096 keys) need about two such passes, where LSD needs one per digit below
// their highest differing bit (seven in a 2^20 Plummer sphere).
void sort_in_cache_msd(std::uint64_t* k, std::uint32_t* v, std::uint64_t* tk, std::uint32_t* tv, std::size_t len,
                       int bits)
{
    while (len > kInsertionLimit && bits > 0) {
        const int shift = std::max(0, bits - kDigitBits);
        std::array<std::uint32_t, kBuckets + 1> start{};
        for (std::size_t i = 0; i < len; ++i) ++start[((k[i] >> shift) & (kBuckets - 1)) + 1];
        if (std::any_of(start.begin() + 1, start.end(), [&](std::uint32_t c) { return c == len; })) {
            bits = shift; // every key shares this digit
            continue;
        }
        for (int d = 0; d < kBuckets; ++d) start[d + 1] += start[d];
        std::array<std::uint32_t, kBuckets> next;
        std::copy(start.begin(), start.end() - 1, next.begin());
        for (std::size_t i = 0; i < len; ++i) {
            const std::uint32_t to = next[(k[i] >> shift) & (kBuckets - 1)]++;
            tk[to] = k[i];
            tv[to] = v[i];
        }
        std::copy(tk, tk + len, k);
        std::copy(tv, tv + len, v);
        for (int d = 0; d < kBuckets; ++d) {
            const std::uint32_t o = start[d], n = start[d + 1] - o;
            if (n > 1) sort_in_cache_msd(k + o, v + o, tk + o, tv + o, n, shift);
        }
        return;
    }
    insertion_sort(k, v, len);
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
                sort_in_cache_msd(k + o, v + o, tk + o, tv + o, n, shift);
            }
        }
#pragma omp taskwait
        return;
    }
    sort_in_cache_msd(k, v, tk, tv, len, bits);
}

// Bucket classifier from splitters drawn from a sample of the keys (sample sort): the buckets
// hold about equally many keys however clustered the keys are, which a fixed top digit cannot
// promise (a Plummer sphere puts half its keys into a few of the 256 top-digit buckets). The
// splitters sit in an implicit binary search tree (Eytzinger order), so classifying a key is
// `levels` branch-free steps through at most 2 KB that stay in L1.
class SplitterTree {
  public:
    static constexpr int kMaxLevels = 8;
    static constexpr int kMaxBuckets = 1 << kMaxLevels;

    // 2^levels - 1 splitters from 16 * 2^levels keys at evenly spaced positions: deterministic,
    // so that the sort (stable anyway) does the same work on every run.
    SplitterTree(const std::uint64_t* keys, std::size_t n, int levels) : levels_(levels), buckets_(1 << levels)
    {
        constexpr std::size_t kOversampling = 16;
        std::vector<std::uint64_t> sample(kOversampling * static_cast<std::size_t>(buckets_));
        for (std::size_t i = 0; i < sample.size(); ++i) sample[i] = keys[i * n / sample.size()];
        std::sort(sample.begin(), sample.end());
        std::size_t next_splitter = 0;
        fill(1, [&] { return sample[(++next_splitter) * kOversampling - 1]; });
        // bucket b holds the keys in (bound_[b], bound_[b + 1]]; the outer bounds take every key
        // (a key of 0 compares greater than nothing, so bucket 0's lower bound is never tested).
        bound_[0] = 0;
        for (int b = 1; b < buckets_; ++b) bound_[static_cast<std::size_t>(b)] = sample[b * kOversampling - 1];
        bound_[static_cast<std::size_t>(buckets_)] = ~std::uint64_t{0};
    }

    int buckets() const { return buckets_; }

    // Number of splitters below `key`: non-decreasing in the key, so buckets are key ranges.
    int bucket(std::uint64_t key) const
    {
        unsigned j = 1;
        for (int l = 0; l < levels_; ++l) j = 2 * j + (key > tree_[j] ? 1u : 0u);
        return static_cast<int>(j) - buckets_;
    }

    // bucket() of n keys into out[]; eight keys go down the tree side by side so that their
    // dependent loads overlap.
    void classify(const std::uint64_t* keys, std::size_t n, std::uint8_t* out) const
    {
        constexpr std::size_t kLanes = 8;
        std::size_t i = 0;
        for (; i + kLanes <= n; i += kLanes) {
            unsigned j[kLanes];
            for (std::size_t l = 0; l < kLanes; ++l) j[l] = 1;
            for (int level = 0; level < levels_; ++level)
                for (std::size_t l = 0; l < kLanes; ++l) j[l] = 2 * j[l] + (keys[i + l] > tree_[j[l]] ? 1u : 0u);
            for (std::size_t l = 0; l < kLanes; ++l) out[i + l] = static_cast<std::uint8_t>(j[l] - buckets_);
        }
        for (; i < n; ++i) out[i] = static_cast<std::uint8_t>(bucket(keys[i]));
    }

    // classify() for keys in nearly sorted order (a tree's particles kept in the last build's
    // order, a step later): each key is first tested against the previous key's bucket, which
    // holds it most of the time, so the search runs only where the bucket changes. Returns false,
    // having classified a prefix only, when the first keys show that the input is not nearly
    // sorted; the caller then runs classify() on all of them. On success it has also added each
    // bucket's keys to counts[], a run at a time (counting key by key in a second pass is a chain
    // of increments of one counter when consecutive keys share a bucket).
    bool classify_nearly_sorted(const std::uint64_t* keys, std::size_t n, std::uint8_t* out, std::size_t* counts) const
    {
        constexpr std::size_t kProbe = 1024; // keys tried before deciding
        std::size_t misses = 0, run_start = 0;
        int b = n > 0 ? bucket(keys[0]) : 0;
        std::array<std::size_t, kMaxBuckets> local{};
        for (std::size_t i = 0; i < n; ++i) {
            const std::uint64_t key = keys[i];
            const bool inside =
                (b == 0 || key > bound_[static_cast<std::size_t>(b)]) && key <= bound_[static_cast<std::size_t>(b) + 1];
            if (!inside) {
                local[static_cast<std::size_t>(b)] += i - run_start;
                run_start = i;
                b = bucket(key);
                if (++misses * 8 > kProbe && i < kProbe) return false;
            }
            out[i] = static_cast<std::uint8_t>(b);
        }
        local[static_cast<std::size_t>(b)] += n - run_start;
        for (int d = 0; d < buckets_; ++d) counts[d] += local[static_cast<std::size_t>(d)];
        return true;
    }

  private:
    template <class Next> void fill(unsigned node, Next&& next)
    {
        if (node >= static_cast<unsigned>(buckets_)) return;
        fill(2 * node, next);
        tree_[node] = next(); // in-order: the tree's in-order sequence is the sorted splitters
        fill(2 * node + 1, next);
    }

    int levels_, buckets_;
    std::array<std::uint64_t, kMaxBuckets> tree_{};      // tree_[1 .. buckets_ - 1]
    std::array<std::uint64_t, kMaxBuckets + 1> bound_{}; // the splitters in order, with outer bounds
};

// Sorts one bucket in place (scratch of the same length): only the bits below the highest bit in
// which its smallest and largest keys differ need sorting.
void sort_bucket(std::uint64_t* k, std::uint32_t* v, std::uint64_t* tk, std::uint32_t* tv, std::size_t len)
{
    if (len < 2) return;
    const auto [lo, hi] = std::minmax_element(k, k + len);
    const std::uint64_t differ = *lo ^ *hi;
    if (differ == 0) return;
    const int bits = 64 - __builtin_clzll(differ);
    if (len > kInCacheLimit)
        sort_range(k, v, tk, tv, len, bits); // only when many keys repeat one splitter
    else
        sort_in_cache_msd(k, v, tk, tv, len, bits);
}

// values_are_index: the values are 0, 1, 2, ... and are written, not read, by the first pass.
void sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values, bool values_are_index)
{
    const std::size_t n = keys.size();
    if (n < 2) {
        if (values_are_index && n == 1) values[0] = 0; // the caller's vector may hold an old value
        return;
    }

    // Kept between calls (and exchanged with the caller's buffers below), so that repeated sorts
    // touch no fresh pages.
    thread_local std::vector<std::uint64_t> keys_mid;
    thread_local std::vector<std::uint32_t> values_mid;
    thread_local std::vector<std::uint8_t> bucket_of;
    keys_mid.resize(n);
    values_mid.resize(n);
    std::uint64_t* const mid_k = keys_mid.data(); // thread_local names would mean each thread's own
    std::uint32_t* const mid_v = values_mid.data();
    if (n <= kInCacheLimit) {
        if (values_are_index)
            for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<std::uint32_t>(i);
        sort_bucket(keys.data(), values.data(), mid_k, mid_v, n);
        return;
    }
    bucket_of.resize(n);
    std::uint8_t* const bucket_k = bucket_of.data();

    constexpr int kMaxB = SplitterTree::kMaxBuckets;
    static_assert(kMaxB <= 256, "bucket numbers are stored in one byte");
    // Buckets of at least about 4096 keys: smaller ones cost more in per-bucket histograms than
    // in keys.
    int levels = 1;
    while (levels < SplitterTree::kMaxLevels && (std::size_t{4096} << levels) < n) ++levels;
    const SplitterTree splitters(keys.data(), n, levels);
    const int num_buckets = splitters.buckets();
    const int num_threads = std::max(1, std::min<int>(omp_get_max_threads(), static_cast<int>(n / 16384) + 1));
    std::vector<std::array<std::size_t, kMaxB>> histogram(static_cast<std::size_t>(num_threads));
    std::array<std::size_t, kMaxB + 1> bucket_start{};
#pragma omp parallel num_threads(num_threads)
    {
        const int t = omp_get_thread_num();
        const std::size_t begin = n * static_cast<std::size_t>(t) / num_threads;
        const std::size_t end = n * static_cast<std::size_t>(t + 1) / num_threads;
        auto& local = histogram[static_cast<std::size_t>(t)];
        std::fill(local.begin(), local.begin() + num_buckets, std::size_t{0});
        if (!splitters.classify_nearly_sorted(keys.data() + begin, end - begin, bucket_k + begin, local.data())) {
            splitters.classify(keys.data() + begin, end - begin, bucket_k + begin);
            for (std::size_t i = begin; i < end; ++i) ++local[bucket_k[i]];
        }
#pragma omp barrier
#pragma omp single
        {
            // Offsets in (bucket, thread) order make the scatter stable.
            std::size_t running = 0;
            for (int d = 0; d < num_buckets; ++d) {
                bucket_start[static_cast<std::size_t>(d)] = running;
                for (int s = 0; s < num_threads; ++s) {
                    const std::size_t count = histogram[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)];
                    histogram[static_cast<std::size_t>(s)][static_cast<std::size_t>(d)] = running;
                    running += count;
                }
            }
            bucket_start[num_buckets] = running;
        }
        for (std::size_t i = begin; i < end; ++i) {
            const std::size_t dest = local[bucket_k[i]]++;
            mid_k[dest] = keys[i];
            mid_v[dest] = values_are_index ? static_cast<std::uint32_t>(i) : values[i];
        }
#pragma omp barrier
        // Each bucket sorts in place in keys_mid, with the same range of keys/values as scratch.
#pragma omp for schedule(dynamic, 1)
        for (int d = 0; d < num_buckets; ++d) {
            const std::size_t b0 = bucket_start[static_cast<std::size_t>(d)];
            const std::size_t len = bucket_start[static_cast<std::size_t>(d) + 1] - b0;
            sort_bucket(mid_k + b0, mid_v + b0, keys.data() + b0, values.data() + b0, len);
        }
    }
    keys.swap(keys_mid);
    values.swap(values_mid);
}

} // namespace

void radix_sort_pairs(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& values)
{
    if (keys.size() != values.size()) throw std::invalid_argument("radix_sort_pairs: keys and values differ in length");
    sort_pairs(keys, values, false);
}

void radix_sort_with_order(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& order)
{
    if (keys.size() > std::numeric_limits<std::uint32_t>::max())
        throw std::invalid_argument("radix_sort_with_order: more keys than 32-bit indices");
    order.resize(keys.size());
    sort_pairs(keys, order, true);
}

} // namespace grove
