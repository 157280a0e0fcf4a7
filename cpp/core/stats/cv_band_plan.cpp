// The exact band within a search (cv_band_window.h): whether a descending scan takes bandwidth h on the band rather
// than the grid (band_window_plan: plan_band_cv with the sample's own count of keys in reach) and its score on the
// search's sorted sample (band_window_score).
#include <cmath>

#include "methods/plan.h"
#include "stats/cv_band_window.h"

namespace ka {
namespace bandwidth_detail {

Result band_window_plan(SearchSample& sample, const Problem& p, const Criterion& c, float h, bool* planned,
                        bool counted) {
  *planned = false;
  if (c.observation_weights || c.exclude > 0 || c.score != Score::LeaveOneOut || p.masks.any() ||
      p.kernel.kind != KernelKind::Gaussian || p.keys.cols != 1 || p.values.cols != 1)
    return {};
  const Problem* sorted = sample.sorted_problem(p, c);
  if (!sorted) return {Status::OutOfMemory};
  const int64_t n = sorted->keys.rows;
  const double range = n > 0 ? double(sorted->keys.row(n - 1)[0]) - double(sorted->keys.row(0)[0]) : 0;
  // The uniform spread's count of keys in reach first; a sample's own count is never below it but at its ends, so
  // only a band it plans is checked against the sample's: two pointers over the sorted keys, every 16th row's keys
  // counted (a count for each row cost 13 % of a 10⁵-point search in mispredicted branches).
  if (!plan_band_cv(range, p.kernel.kind, c.estimator, h, n, c.grid_tolerance)) return {};
  if (!counted) {
    *planned = true;
    return {};
  }
  constexpr int64_t kStride = 16;
  const float* x = sorted->keys.data;
  const double reach = band_reach(double(n)) * double(h);
  double pairs = 0;
  for (int64_t i = kStride / 2, lo = 0, hi = 0; i < n; i += kStride) {
    while (double(x[i]) - double(x[lo]) > reach) ++lo;
    while (hi < n && double(x[hi]) - double(x[i]) <= reach) ++hi;
    pairs += double(kStride * (hi - lo - 1));
  }
  *planned = plan_band_cv(range, p.kernel.kind, c.estimator, h, n, c.grid_tolerance, pairs);
  return {};
}

Result band_window_score(SearchSample& sample, const Problem& p, const Criterion& c, float h, double* score,
                         bool* served) {
  *served = false;
  bool planned;
  if (const Result r = band_window_plan(sample, p, c, h, &planned); r.status != Status::Ok || !planned) return r;
  Problem q = *sample.sorted_problem(p, c);
  q.kernel.bandwidth = &h;
  q.masks.leave_one_out = true;
  q.empty = EmptyPolicy::NaN;
  *served = band_window_cv(q, c.estimator, score);
  return {};
}

}  // namespace bandwidth_detail
}  // namespace ka
