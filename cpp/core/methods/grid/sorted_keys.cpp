// A grid model's sample in the order of its first coordinate, and the exact rows over the keys in their reach
// (sorted_keys.h).
#include "methods/grid/sorted_keys.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/neighbours.h"
#include "methods/grid/exact_rows.h"
#include "kernel/kernels.h"

namespace ka {

Status SortedKeys::prepare(const Fit& f) {
  if (ready_) return Status::Ok;
  const Problem& p = f.problem;
  n_ = p.keys.rows;
  dims_ = p.keys.cols;
  width_ = p.values.cols;
  const bool weighted = f.observation_weights;
  Scratch<double> first(n_);
  Scratch<int64_t> order(n_);
  if (!first.ok() || !order.ok() || !x_.reset_zeroed(n_ * dims_) || !y_.reset_zeroed(n_ * width_) ||
      !w_.reset_zeroed(weighted ? n_ : 0))
    return Status::OutOfMemory;
  for (int64_t j = 0; j < n_; ++j) {
    first.get()[j] = double(p.keys.row(j)[0]);  // exact: the floats' order
    if (std::isnan(first.get()[j])) return Status::BadArgument;
  }
  order_by(first.get(), order.get(), n_);  // stable: ties in sample order
  omega_max_ = weighted ? 0.0 : 1.0;
  y_lo_ = std::numeric_limits<double>::infinity();
  y_hi_ = -y_lo_;
  for (int64_t k = 0; k < n_; ++k) {
    const int64_t j = order.get()[k];
    std::copy(p.keys.row(j), p.keys.row(j) + dims_, x_.get() + k * dims_);
    std::copy(p.values.row(j), p.values.row(j) + width_, y_.get() + k * width_);
    if (weighted) {
      w_.get()[k] = f.observation_weights[j];
      omega_max_ = std::max(omega_max_, double(f.observation_weights[j]));
    }
    for (int64_t c = 0; c < width_; ++c) {
      y_lo_ = std::min(y_lo_, double(p.values.row(j)[c]));
      y_hi_ = std::max(y_hi_, double(p.values.row(j)[c]));
    }
  }
  if (dims_ == 2) bands_.prepare(x_.get(), n_);  // where it cannot, rows read x₁ windows
  ++sorts;
  ready_ = true;
  return Status::Ok;
}

double SortedKeys::skip() const {
  const double ln2 = 0.6931471805599453;  // log2 by log: libm's log2 is not linked (docs/package.md)
  return std::min(126.0, 25 + std::log(double(std::max<int64_t>(n_, 1))) / ln2) * ln2;
}

Fit SortedKeys::sorted(const Fit& f) const {
  Fit g = f;
  g.problem.keys = {x_.get(), n_, dims_, dims_};
  g.problem.values = {y_.get(), n_, width_, width_};
  g.observation_weights = f.observation_weights ? w_.get() : nullptr;
  return g;
}

void SortedKeys::window(const Fit& f, const float* q, int64_t* first, int64_t* last) {
  const Problem& p = f.problem;
  const float* x = x_.get();
  const auto at = [&](int64_t k) { return x[k * dims_]; };
  const auto place = [&](double v, bool after) {  // the first key above v (after) or at or above it
    int64_t lo = 0, hi = n_;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (after ? !(double(at(mid)) > v) : double(at(mid)) < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  *first = 0;
  *last = n_;
  const bool nearest_anywhere = p.empty == EmptyPolicy::Nearest && dims_ > 1;
  if (!(q[0] == q[0]) || nearest_anywhere) {
    keys_read += n_;
    return;
  }
  const int64_t pos = place(double(q[0]), false);
  // A key near q, the better of its neighbours in sorted order: the row's largest weight ω·K is at least its, and a
  // key left out weighs at most ω_max·K, so its K must fall below K_near·ω_near/ω_max by the skip.
  double near = -std::numeric_limits<double>::infinity();
  for (int64_t k = std::max<int64_t>(0, pos - 1); k < std::min(n_, pos + 1); ++k) {
    const double omega = f.observation_weights ? double(w_.get()[k]) / omega_max_ : 1.0;
    if (omega > 0) near = std::max(near, log_score<double>(p.kernel, q, x + k * dims_, dims_) + std::log(omega));
  }
  if (!(near > -std::numeric_limits<double>::infinity())) {  // no admissible key near q: every key
    keys_read += n_;
    return;
  }
  const double drop = skip() - near, h0 = double(p.kernel.bandwidth[0]);
  double reach = std::numeric_limits<double>::infinity();
  if (p.kernel.kind == KernelKind::Gaussian) reach = h0 * std::sqrt(2 * drop);
  if (p.kernel.kind == KernelKind::Laplacian) reach = h0 * drop;
  if (is_compact(p.kernel.kind)) reach = h0 * (1 + 1e-6);
  if (std::isfinite(reach)) {
    *first = place(double(q[0]) - reach, false);
    *last = place(double(q[0]) + reach, true);
    if (p.empty == EmptyPolicy::Nearest) {  // the keys next to q's place, ties and all: the nearest in 1-D
      int64_t below = std::max<int64_t>(0, pos - 1), above = std::min(n_, pos + 1);
      while (below > 0 && at(below - 1) == at(below)) --below;
      while (above < n_ && above > 0 && at(above) == at(above - 1)) ++above;
      *first = std::min(*first, below);
      *last = std::max(*last, above);
    }
  }
  keys_read += *last - *first;
}

Result SortedKeys::window_row(const Fit& f, int64_t i, const FitOut& out) {
  const float* q = f.problem.queries.row(i);
  int64_t first = 0, last = 0;
  window(f, q, &first, &last);
  Fit row = sorted(f);
  row.problem.queries = {q, 1, dims_, dims_};
  row.problem.keys = {x_.get() + first * dims_, last - first, dims_, dims_};
  row.problem.values = {y_.get() + first * width_, last - first, width_, width_};
  row.observation_weights = f.observation_weights ? w_.get() + first : nullptr;
  const auto at = [](auto* v, int64_t k) { return v ? v + k : nullptr; };
  const FitOut one{Matrix{out.mean.row(i), 1, width_, out.mean.stride},
                   at(out.sum_sq_weights, i),
                   nullptr,
                   at(out.effective_keys, i),
                   at(out.log_denominator, i),
                   at(out.guarded, i)};
  const Result res = local_fit(row, one);
  if (res.status != Status::Ok) return {res.status, res.status == Status::EmptyRow ? i : -1, 0};
  return {};
}

Result SortedKeys::exact_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out) {
  if (const Status st = prepare(f); st != Status::Ok) return {st};
  if (banded(f)) return banded_rows(f, rows, count, out);
  for (int64_t r = 0; r < count; ++r)
    if (const Result res = window_row(f, rows[r], out); res.status != Status::Ok) return res;
  return {};
}

Result SortedKeys::exact_rows_together(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out) {
  if (const Status st = prepare(f); st != Status::Ok) return {st};
  const Problem& p = f.problem;
  if (dims_ != 1 || p.empty == EmptyPolicy::Error) return exact_rows(f, rows, count, out);  // Error: the first in order
  Scratch<int64_t> order(count);
  Scratch<float> q(count);
  PackedRows packed(count, width_);
  if (!order.ok() || !q.ok() || !packed.ok()) return {Status::OutOfMemory};
  std::copy(rows, rows + count, order.get());
  const auto x_of = [&](int64_t i) { return p.queries.row(i)[0]; };
  std::sort(order.get(), order.get() + count, [&](int64_t a, int64_t b) {  // by x₁, NaN last, ties by row
    const float xa = x_of(a), xb = x_of(b);
    if (std::isnan(xa) != std::isnan(xb)) return std::isnan(xb);
    return xa != xb && !std::isnan(xa) ? xa < xb : a < b;
  });
  for (int64_t r = 0; r < count; ++r) {
    q.get()[r] = x_of(order.get()[r]);
    int64_t first = 0, last = 0;
    window(f, q.get() + r, &first, &last);  // keys_read as exact_rows counts them
  }
  Fit all = sorted(f);
  all.problem.queries = {q.get(), count, 1, 1};
  if (const Result res = local_fit(all, packed.view(count, &out)); res.status != Status::Ok) return {res.status};
  packed.scatter(order.get(), count, out);
  return {};
}

}  // namespace ka
