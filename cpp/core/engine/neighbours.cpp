#include "engine/neighbours.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "base/parallel.h"
#include "base/scratch.h"
#include "base/simd.h"

namespace ka {

namespace {

// 1-D: the distance from z to the k-th nearest of the J sorted values v. The k nearest are a run of k consecutive
// values, the run [l, l + k) that the bisection finds (moving right while the value leaving is farther than the one
// coming in), and the k-th distance is the farther of its ends: O(log J) per query, the same number as a search
// among all distances (|a − z| is √((a − z)²) exactly in IEEE arithmetic). NaN for a NaN z.
double kth_distance_1d(const double* v, int64_t J, int64_t k, double z) {
  if (std::isnan(z)) return std::numeric_limits<double>::quiet_NaN();
  int64_t lo = 0, hi = J - k;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (z - v[mid] > v[mid + k] - z)
      lo = mid + 1;
    else
      hi = mid;
  }
  return std::max(std::fabs(z - v[lo]), std::fabs(v[lo + k - 1] - z));
}

}  // namespace

Status kth_neighbour_distances(ConstMatrix keys, ConstMatrix queries, const float* scale, int64_t k, int32_t threads,
                               double* out) {
  const int64_t J = keys.rows, I = queries.rows, dims = keys.cols;
  if (dims < 1 || queries.cols != dims || k < 1 || k > J || (I > 0 && !out)) return Status::BadShape;
  for (int64_t d = 0; d < dims; ++d)
    if (!(scale[d] > 0) || !std::isfinite(scale[d])) return Status::BadArgument;
  // The keys in scaled double coordinates, ordered by the first one.
  std::vector<int64_t> order(static_cast<size_t>(J));
  std::vector<double> scaled(static_cast<size_t>(J * dims));
  for (int64_t j = 0; j < J; ++j)
    for (int64_t d = 0; d < dims; ++d) {
      const double v = double(keys.row(j)[d]) / double(scale[d]);
      if (!std::isfinite(v)) return Status::BadArgument;
      scaled[size_t(j * dims + d)] = v;
    }
  std::vector<double> first(static_cast<size_t>(J));
  for (int64_t j = 0; j < J; ++j) first[size_t(j)] = scaled[size_t(j * dims)];
  order_by(first.data(), order.data(), J);
  std::vector<double> sorted(static_cast<size_t>(J * dims));
  for (int64_t r = 0; r < J; ++r)
    std::copy_n(scaled.begin() + order[size_t(r)] * dims, dims, sorted.begin() + r * dims);
  for (int64_t r = 0; r < J; ++r) first[size_t(r)] = sorted[size_t(r * dims)];

  const int64_t tasks = std::min<int64_t>(I, threads <= 1 ? 1 : int64_t(threads) * 4);
  const int64_t per = tasks ? (I + tasks - 1) / tasks : 0;
  if (dims == 1) {
    parallel_for(tasks, threads, [&](int64_t t) {
      for (int64_t i = t * per; i < std::min(I, (t + 1) * per); ++i)
        out[i] = kth_distance_1d(first.data(), J, k, double(queries.row(i)[0]) / double(scale[0]));
    });
    return Status::Ok;
  }
  parallel_for(tasks, threads, [&](int64_t t) {
    std::vector<double> heap;  // the k smallest squared distances so far, a max-heap
    std::vector<double> q(static_cast<size_t>(dims));
    for (int64_t i = t * per; i < std::min(I, (t + 1) * per); ++i) {
      bool nan = false;
      for (int64_t d = 0; d < dims; ++d) {
        q[size_t(d)] = double(queries.row(i)[d]) / double(scale[d]);
        nan |= std::isnan(q[size_t(d)]);
      }
      if (nan) {
        out[i] = std::numeric_limits<double>::quiet_NaN();
        continue;
      }
      heap.clear();
      int64_t hi = std::lower_bound(first.begin(), first.end(), q[0]) - first.begin(), lo = hi - 1;
      while (lo >= 0 || hi < J) {
        const double gap_lo = lo >= 0 ? q[0] - first[size_t(lo)] : std::numeric_limits<double>::infinity();
        const double gap_hi = hi < J ? first[size_t(hi)] - q[0] : std::numeric_limits<double>::infinity();
        const bool take_lo = gap_lo <= gap_hi;
        const double gap = take_lo ? gap_lo : gap_hi;
        if (int64_t(heap.size()) == k && gap * gap >= heap.front()) break;  // every key left is at least this far
        const int64_t r = take_lo ? lo-- : hi++;
        double s = 0;
        for (int64_t d = 0; d < dims; ++d) {
          const double u = sorted[size_t(r * dims + d)] - q[size_t(d)];
          s += u * u;
        }
        if (int64_t(heap.size()) < k) {
          heap.push_back(s);
          std::push_heap(heap.begin(), heap.end());
        } else if (s < heap.front()) {
          std::pop_heap(heap.begin(), heap.end());
          heap.back() = s;
          std::push_heap(heap.begin(), heap.end());
        }
      }
      out[i] = std::sqrt(heap.front());
    }
  });
  return Status::Ok;
}

namespace {

// v's bits as an unsigned integer in v's order: the sign bit set for v >= 0, every bit flipped for v < 0; −0 as +0,
// so that keys equal under < are equal here too.
uint64_t ordered_bits(double v) {
  if (v == 0) v = 0;
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits >> 63 ? ~bits : bits | (uint64_t(1) << 63);
}

// The radix sort's digits: 6 passes of 11 bits (2,048 counters a pass stay in L1 and touch few pages as they
// scatter).
constexpr int kDigitBits = 11;
constexpr int64_t kDigits = int64_t(1) << kDigitBits;
constexpr int kPasses = (64 + kDigitBits - 1) / kDigitBits;

// The sort's loops run over blocks of this many keys, each a call of its own: under WebAssembly, V8 optimises a
// function only between calls (simd::keep_out_of_line).
constexpr int64_t kSortBlock = int64_t(1) << 16;

// The inverse of ordered_bits (−0 comes back as +0).
double from_ordered_bits(uint64_t bits) {
  bits = bits >> 63 ? bits & ~(uint64_t(1) << 63) : ~bits;
  double v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// Keys [first, end): their ordered bits, the identity order (with `idx`), and every pass's digit counts.
void count_digits(const double* key, int64_t first, int64_t end, uint64_t* bits, int64_t* idx, int64_t* count) {
  for (int64_t j = first; j < end; ++j) {
    const uint64_t b = bits[j] = ordered_bits(key[j]);
    if (idx) idx[j] = j;
    for (int p = 0; p < kPasses; ++p) ++count[p * kDigits + int64_t((b >> (p * kDigitBits)) & (kDigits - 1))];
  }
}

// One pass over entries [first, end): each to the next place of its digit (its index too, with `from_idx`).
void scatter_digits(const uint64_t* from_bits, const int64_t* from_idx, int64_t first, int64_t end, int shift,
                    int64_t* next, uint64_t* to_bits, int64_t* to_idx) {
  if (!from_idx) {
    for (int64_t j = first; j < end; ++j) {
      const uint64_t b = from_bits[j];
      to_bits[next[int64_t((b >> shift) & (kDigits - 1))]++] = b;
    }
    return;
  }
  for (int64_t j = first; j < end; ++j) {
    const uint64_t b = from_bits[j];
    const int64_t at = next[int64_t((b >> shift) & (kDigits - 1))]++;
    to_bits[at] = b;
    to_idx[at] = from_idx[j];
  }
}

// A least-significant-digit radix sort of ordered_bits(key), which moves equal digits in their order, so ties keep
// their index order: the comparison sort's permutation, into idx. A pass where every key has the same digit moves
// nothing and is skipped (data on [0, 1) share their top digits). Without idx (null), the keys alone: `sorted`
// receives them in increasing order. False when its scratch (3n words, 2n without idx) cannot be had.
bool radix_sort(const double* key, int64_t* idx, double* sorted, int64_t n) {
  Scratch<uint64_t> bits(n), spare_bits(n);
  Scratch<int64_t> spare_idx(idx ? n : 0), counts;
  if (!bits.ok() || !spare_bits.ok() || !spare_idx.ok() || !counts.reset_zeroed(kPasses * kDigits)) return false;
  int64_t* count = counts.get();
  const auto count_block = simd::keep_out_of_line(&count_digits);
  const auto scatter_block = simd::keep_out_of_line(&scatter_digits);
  for (int64_t j = 0; j < n; j += kSortBlock) count_block(key, j, std::min(n, j + kSortBlock), bits.get(), idx, count);
  uint64_t* from_bits = bits.get();
  uint64_t* to_bits = spare_bits.get();
  int64_t* from_idx = idx;
  int64_t* to_idx = idx ? spare_idx.get() : nullptr;
  for (int p = 0; p < kPasses; ++p) {
    int64_t* next = count + p * kDigits;
    if (std::find(next, next + kDigits, n) != next + kDigits) continue;
    for (int64_t d = 0, start = 0; d < kDigits; ++d) start += std::exchange(next[d], start);
    for (int64_t j = 0; j < n; j += kSortBlock)
      scatter_block(from_bits, from_idx, j, std::min(n, j + kSortBlock), p * kDigitBits, next, to_bits, to_idx);
    std::swap(from_bits, to_bits);
    std::swap(from_idx, to_idx);
  }
  if (idx && from_idx != idx) std::copy(from_idx, from_idx + n, idx);
  if (!idx)
    for (int64_t j = 0; j < n; ++j) sorted[j] = from_ordered_bits(from_bits[j]);
  return true;
}

}  // namespace

void order_by(const double* key, int64_t* idx, int64_t n) {
  // The radix sort from a few thousand points: at 10⁶ it took 0.15 s where std::stable_sort took 0.45 s.
  if (n >= 4096 && radix_sort(key, idx, nullptr, n)) return;
  std::iota(idx, idx + n, int64_t(0));
  std::stable_sort(idx, idx + n, [key](int64_t a, int64_t b) { return key[a] < key[b]; });
}

void sort_values(double* values, int64_t n) {
  if (n >= 4096 && radix_sort(values, nullptr, values, n)) return;
  std::sort(values, values + n);
}

}  // namespace ka
