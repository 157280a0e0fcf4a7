// The joint search of a mixed regression's bandwidths and λ (mixed.h, select_mixed): scans of the continuous scale and
// of each λ over its whole range, Brent's method around their best points, then coordinate descent.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "base/rare.h"
#include "base/scratch.h"
#include "stats/bandwidth_detail.h"
#include "stats/mixed.h"
#include "stats/mixed_detail.h"
#include "stats/search_parts.h"

namespace ka {
namespace {

using bandwidth_detail::brent_of;
using bandwidth_detail::CurveReplay;
using bandwidth_detail::kInf;

// Scan points of a λ range (endpoints included: λ = 0, the cell-by-cell fit, and λ = lambda_max, pooling across
// levels as far as the kernel goes, are often the minimum).
constexpr int kLambdaScan = 11;
// The continuous scale's scan: up to this many points beyond either end while the best one sits there.
constexpr int kScanExtra = 12;

// What a search evaluates and keeps: the curve (resumable, as select_cv's), the best point, failures.
class Evaluator {
 public:
  Evaluator(mixed_detail::MixedCriterion& cv, int64_t size, CvCurve* curve, const SearchProgress& progress,
            double* best)
      : cv_(cv), size_(size), replay_(curve, size, progress), best_(best) {}

  // The criterion at bw (size_ values), recorded and kept when best; +inf after a failure or cancellation.
  double operator()(const double* bw) {
    const double s = replay_.score(bw, &failure, [&](double* out) { return cv_.score(bw, out); });
    if (failure.status != Status::Ok) return kInf;
    if (!any_ || s < score) {
      any_ = true;
      score = s;
      std::copy(bw, bw + size_, best_);
    }
    return s;
  }

  Result failure;
  double score = kInf;

 private:
  mixed_detail::MixedCriterion& cv_;
  int64_t size_;
  CurveReplay replay_;
  double* best_;
  bool any_ = false;
};

// Whether every continuous column is constant: then no bandwidth changes a weight (every scaled distance is 0).
bool all_constant(ConstMatrix x) {
  for (int64_t d = 0; d < x.cols; ++d)
    for (int64_t i = 1; i < x.rows; ++i)
      if (!(x.row(i)[d] == x.row(0)[d])) return false;
  return true;
}

struct Search {
  Evaluator& evaluate;
  const Categories& c;
  int64_t dims;
  double* best;   // dims + count: the best point so far (the Evaluator keeps it)
  double* trial;  // dims + count scratch
  double* base;   // dims + count: the best point when a coordinate's bracket was set
  const double* start;

  // The common scale s (h_d = s · start_d, λ at the best point's): a log-spaced scan from lo to hi (extended while
  // the best point sits at an end), then Brent's method between the best scan point's neighbours.
  void scan_scale(double lo, double hi) {
    const auto at = [&](double log_scale) {
      std::copy(best, best + dims + c.count, trial);
      for (int64_t d = 0; d < dims; ++d) trial[d] = start[d] * std::exp(log_scale);
      return evaluate(trial);
    };
    const int count = std::max(2, int(std::ceil(std::log10(hi / lo) * bandwidth_detail::kSearchScanPerDecade)) + 1);
    const double first = std::log(lo), step = (std::log(hi) - first) / double(count - 1);
    Scratch<double> scores(count + 2 * kScanExtra);
    if (!scores.ok()) {
      evaluate.failure = {Status::OutOfMemory};
      return;
    }
    const auto score_at = [&](int k) -> double& { return scores.get()[k + kScanExtra]; };
    int low = 0, high = count - 1, top = 0;
    for (int k = low; k <= high; ++k) {
      score_at(k) = at(first + k * step);
      if (score_at(k) < score_at(top)) top = k;
    }
    while (top == low && low > -kScanExtra && std::isfinite(score_at(low)) && evaluate.failure.status == Status::Ok) {
      --low;
      score_at(low) = at(first + low * step);
      if (score_at(low) < score_at(top)) top = low;
    }
    while ((top == high || !std::isfinite(score_at(top))) && high < count - 1 + kScanExtra &&
           evaluate.failure.status == Status::Ok) {
      ++high;
      score_at(high) = at(first + high * step);
      if (score_at(high) < score_at(top)) top = high;
    }
    brent_of(at, first + std::max(low, top - 1) * step, first + std::min(high, top + 1) * step, 0.005);
  }

  // λ_d over [a, b] (within its range) by Brent's method, the others at the best point's; the endpoints of the
  // range are evaluated when the minimum comes to lie next to them (Brent's method never evaluates its ends).
  double along_lambda(int32_t d, double a, double b, double tol) {
    const double top = lambda_max(c.kernels[d], c.levels[d]);
    const auto at = [&](double lambda) {
      std::copy(best, best + dims + c.count, trial);
      trial[dims + d] = std::clamp(lambda, 0.0, top);
      return evaluate(trial);
    };
    const double x = brent_of(at, a, b, tol);
    if (x - a < 2 * tol && a == 0) at(0);
    if (b - x < 2 * tol && b == top) at(top);
    return x;
  }

  // λ_d scanned at kLambdaScan evenly spaced values of its range, then Brent's method between the best one's
  // neighbours.
  void scan_lambda(int32_t d) {
    const double top = lambda_max(c.kernels[d], c.levels[d]);
    if (!(top > 0)) return;
    double best_score = kInf;
    int at_best = 0;
    for (int k = 0; k < kLambdaScan; ++k) {
      std::copy(best, best + dims + c.count, trial);
      trial[dims + d] = top * k / (kLambdaScan - 1);
      const double score = evaluate(trial);
      if (score < best_score) {
        best_score = score;
        at_best = k;
      }
    }
    const double step = top / (kLambdaScan - 1);
    along_lambda(d, std::max(0, at_best - 1) * step, std::min(kLambdaScan - 1, at_best + 1) * step, top * 1e-3);
  }

  // Brent's method along the step from `from` to the best point, in log h and λ (λ held within its range): t = 0 is
  // `from`, 1 the best point, up to 4 beyond it.
  void along_step(const double* from) {
    std::copy(best, best + dims + c.count, base);
    const auto at = [&](double t) {
      for (int64_t d = 0; d < dims; ++d) trial[d] = from[d] * std::exp(t * std::log(base[d] / from[d]));
      for (int32_t d = 0; d < c.count; ++d) {
        const double v = from[dims + d] + t * (base[dims + d] - from[dims + d]);
        trial[dims + d] = std::clamp(v, 0.0, lambda_max(c.kernels[d], c.levels[d]));
      }
      return evaluate(trial);
    };
    if (!std::equal(from, from + dims + c.count, base)) brent_of(at, 0.5, 4.0, 0.01);
  }

  // One coordinate of the descent: h_d (log h within a factor `reach` of the best, moving while the minimum sits at
  // the bracket's edge), or the common scale when `common`.
  void along_bandwidth(int64_t d, bool common, double reach) {
    // Brent's method needs one function of one variable: the other coordinates are those of the best point when the
    // bracket was set (`base`), not the best point as it moves.
    const auto at = [&](double log_scale) {
      std::copy(base, base + dims + c.count, trial);
      if (common)
        for (int64_t k = 0; k < dims; ++k) trial[k] = base[k] * std::exp(log_scale);
      else
        trial[d] = base[d] * std::exp(log_scale);
      return evaluate(trial);
    };
    const double tol = 0.002;
    for (int moves = 0; moves < 6; ++moves) {
      std::copy(best, best + dims + c.count, base);
      const double next = brent_of(at, -reach, reach, tol);
      if (!(std::fabs(std::fabs(next) - reach) < 2 * tol) || evaluate.failure.status != Status::Ok) break;
    }
  }
};

}  // namespace

namespace mixed_detail {

KA_COLD MixedSearchKeep::MixedSearchKeep(const Problem& p, const Categories& c, const Criterion& criterion,
                                         const double* start)
    : cv(p, c, criterion), status(cv.status()) {
  if (status == Status::Ok) status = bandwidth_detail::search_scale_range(p.keys, start, &lo, &hi);
}

}  // namespace mixed_detail

KA_COLD Result select_mixed(const Problem& p, const Categories& c, bool per_dimension, double* bw, double* score,
                            CvCurve* curve, const Criterion& criterion, const SearchProgress& progress,
                            CvSearchState* state) {
  const int64_t dims = p.queries.cols, size = dims + c.count;
  for (int64_t d = 0; d < dims; ++d)
    if (!(bw[d] > 0) || !std::isfinite(bw[d])) return {Status::BadArgument};  // the start must be a bandwidth
  // The criterion (its sorted sample, its grids) and the scan's range: kept in `state` across the steps of a search.
  std::unique_ptr<mixed_detail::MixedSearchKeep> own;
  std::unique_ptr<mixed_detail::MixedSearchKeep>& kept = state ? state->mixed : own;
  if (!kept) {
    kept.reset(new (std::nothrow) mixed_detail::MixedSearchKeep(p, c, criterion, bw));
    if (!kept) return {Status::OutOfMemory};
  }
  if (kept->status != Status::Ok) return {kept->status};
  mixed_detail::MixedCriterion& cv = kept->cv;
  Scratch<double> start(dims), best(size), trial(size), base(size);
  if (!start.ok() || !best.ok() || !trial.ok() || !base.ok()) return {Status::OutOfMemory};
  std::copy(bw, bw + dims, start.get());
  std::copy(bw, bw + dims, best.get());
  for (int32_t d = 0; d < c.count; ++d) best.get()[dims + d] = lambda_max(c.kernels[d], c.levels[d]) / 2;
  Evaluator evaluate(cv, size, curve, progress, best.get());
  Search s{evaluate, c, dims, best.get(), trial.get(), base.get(), start.get()};
  const bool continuous = !all_constant(p.keys);
  const double lo = kept->lo, hi = kept->hi;
  const auto failed = [&] { return evaluate.failure.status != Status::Ok; };
  if (!continuous) evaluate(best.get());  // the λ scans compare with it (else the scale's scan makes the first)
  // Scans: the scale over its whole range at the first λ, then each λ over its whole range at that scale.
  if (continuous) s.scan_scale(lo, hi);
  for (int32_t d = 0; d < c.count && !failed(); ++d) s.scan_lambda(d);
  // Coordinate descent: sweeps until a sweep improves the criterion by less than 1e-6 (relative), at most 12, each
  // followed by a line search along the sweep's own step (Powell 1964): h and λ are coupled (a wider h with less
  // pooling across levels fits about as well), and their valley is curved, where steps along the axes alone zig-zag.
  Scratch<double> swept(size);
  if (!swept.ok()) return {Status::OutOfMemory};
  for (int sweep = 0; sweep < 12 && !failed(); ++sweep) {
    const double before = evaluate.score;
    std::copy(best.get(), best.get() + size, swept.get());
    const double reach = std::log(2.0);  // the scans and Brent's method put the scale within a few % already
    if (continuous) {
      if (per_dimension && dims > 1)
        for (int64_t d = 0; d < dims && !failed(); ++d) s.along_bandwidth(d, false, reach);
      else
        s.along_bandwidth(0, true, reach);
    }
    for (int32_t d = 0; d < c.count && !failed(); ++d) {
      const double top = lambda_max(c.kernels[d], c.levels[d]), width = top / 8;
      if (!(top > 0)) continue;
      const double at = best.get()[dims + d];
      s.along_lambda(d, std::max(0.0, at - width), std::min(top, at + width), top * 1e-3);
    }
    if (!failed()) s.along_step(swept.get());
    if (!(before - evaluate.score > 1e-6 * std::fabs(before))) break;  // AICc may be negative
  }
  if (failed()) return evaluate.failure;
  // bw is written only now: a cancelled search leaves it as the start, so that it can be resumed.
  std::copy(best.get(), best.get() + size, bw);
  *score = evaluate.score;
  return {};
}

}  // namespace ka
