// Pieces of select_cv's scan-and-refine search (cv_search.cpp) that the mixed search (mixed_search.cpp) shares:
// Brent's minimiser, the range of the common bandwidth scale, and the replay of a resumed search's curve.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

#include "base/status.h"
#include "base/views.h"
#include "stats/bandwidth.h"

namespace ka::bandwidth_detail {

// Brent's minimiser (Brent 1973, ch. 5) of call(objective, x) over [a, b], to a bracket narrower than `tol`: the best
// x it evaluated.
double brent_minimum(double (*call)(const void*, double), const void* objective, double a, double b, double tol);

template <class F>
double brent_of(const F& f, double a, double b, double tol) {
  return brent_minimum([](const void* o, double x) { return (*static_cast<const F*>(o))(x); }, &f, a, b, tol);
}

// The common scale s (h_d = s · start_d) that select_cv scans (bandwidth.h): from 1/4 of the smallest median gap
// between the sorted distinct values of x_d to 4 × the largest range, over the dimensions with a spread; 2^-5 … 1
// without any.
Status search_scale_range(ConstMatrix x, const double* start, double* lo, double* hi);

// Points per decade of select_cv's scan.
constexpr double kSearchScanPerDecade = 6;

// One search's evaluations against its curve (CvCurve): a search resumed in steps asks for the same bandwidths in the
// same order, so its first `recorded` evaluations are read back from the curve (a bandwidth that differs, bit for bit,
// means other inputs: BadArgument); later ones are computed, appended while the curve has room, and reported to the
// progress hook, which may cancel. (select_cv_gradient's curve also holds gradients: it keeps its own.)
class CurveReplay {
 public:
  CurveReplay(CvCurve* curve, int64_t size, const SearchProgress& progress)
      : curve_(curve),
        size_(size),
        progress_(progress),
        recorded_(curve ? std::clamp(curve->count, 0, curve->capacity) : 0) {}

  // The score at bw (`size` values): the recorded one, or compute(&s) (a Result; s starts at +inf) recorded. After a
  // failure (in *failure on entry, a mismatch, compute's error or a cancellation, all kept in *failure) nothing more
  // is computed and the score is +inf.
  template <class Compute>
  double score(const double* bw, Result* failure, Compute&& compute) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    if (failure->status != Status::Ok) return kInf;
    if (evaluations_ < recorded_) {
      if (!std::equal(bw, bw + size_, curve_->bandwidths + int64_t(evaluations_) * size_)) {
        *failure = {Status::BadArgument};
        return kInf;
      }
      return curve_->scores[evaluations_++];
    }
    double s = kInf;
    if (const Result r = compute(&s); r.status != Status::Ok) *failure = r;
    if (curve_ && curve_->count < curve_->capacity) {
      std::copy(bw, bw + size_, curve_->bandwidths + int64_t(curve_->count) * size_);
      curve_->scores[curve_->count++] = s;
    }
    ++evaluations_;
    if (failure->status == Status::Ok && progress_.after_evaluation &&
        !progress_.after_evaluation(progress_.context, evaluations_))
      *failure = {Status::Cancelled};
    return s;
  }

 private:
  CvCurve* curve_;
  int64_t size_;
  SearchProgress progress_;
  int32_t recorded_, evaluations_ = 0;
};

}  // namespace ka::bandwidth_detail
