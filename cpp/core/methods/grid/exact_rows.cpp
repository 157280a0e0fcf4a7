// The rows a grid fit hands to the exact engine (exact_rows.h).
#include "methods/grid/exact_rows.h"

#include <algorithm>

#include "base/scratch.h"

namespace ka {

Result fit_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& into) {
  const Problem& p = f.problem;
  const int64_t dims = p.queries.cols, width = p.values.cols;
  const bool loo = p.masks.leave_one_out;
  Scratch<float> q(count * dims);
  Scratch<uint8_t> padding(loo ? p.keys.rows : 0);
  if (!q.ok() || !padding.ok()) return {Status::OutOfMemory};
  for (int64_t r = 0; r < count; ++r)
    std::copy(p.queries.row(rows[r]), p.queries.row(rows[r]) + dims, q.get() + r * dims);
  Fit sub = f;
  sub.problem.masks.leave_one_out = false;
  sub.query_keys = nullptr;  // rows of a subset (no self weight asked): their own keys are padded out below
  const auto at = [](auto* v, int64_t first) { return v ? v + first : nullptr; };
  const auto run = [&](int64_t first, int64_t n) {
    sub.problem.queries = {q.get() + first * dims, n, dims, dims};
    return local_fit(
        sub, FitOut{Matrix{into.mean.row(first), n, width, into.mean.stride}, at(into.sum_sq_weights, first), nullptr,
                    at(into.effective_keys, first), at(into.log_denominator, first), at(into.guarded, first)});
  };
  if (loo) {
    std::fill(padding.get(), padding.get() + p.keys.rows, uint8_t(0));
    sub.problem.masks.key_padding = padding.get();
    for (int64_t r = 0; r < count; ++r) {
      const int64_t own = f.query_keys ? f.query_keys[rows[r]] : rows[r];
      padding.get()[own] = 1;
      Result res = run(r, 1);
      padding.get()[own] = 0;
      if (res.status != Status::Ok) return {res.status, res.status == Status::EmptyRow ? rows[r] : -1, 0};
    }
    return {};
  }
  const Result res = run(0, count);
  if (res.status != Status::Ok) return {res.status, res.row >= 0 ? rows[res.row] : -1, 0};
  return {};
}

Result exact_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out) {
  PackedRows packed(count, f.problem.values.cols);
  if (!packed.ok()) return {Status::OutOfMemory};
  std::fill(packed.guarded(), packed.guarded() + count, uint8_t(0));
  if (const Result r = fit_rows(f, rows, count, packed.view(count)); r.status != Status::Ok) return r;
  packed.scatter(rows, count, out);
  return {};
}

}  // namespace ka
