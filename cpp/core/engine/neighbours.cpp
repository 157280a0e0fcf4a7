#include "engine/neighbours.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "base/parallel.h"

namespace ka {

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

void order_by(const double* key, int64_t* idx, int64_t n) {
  std::iota(idx, idx + n, int64_t(0));
  std::stable_sort(idx, idx + n, [key](int64_t a, int64_t b) { return key[a] < key[b]; });
}

}  // namespace ka
