// Pieces of select_cv's scan-and-refine search (cv_search.cpp) that the mixed search (mixed_search.cpp) shares:
// Brent's minimiser and the range of the common bandwidth scale.
#pragma once
#include "base/status.h"
#include "base/views.h"

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

}  // namespace ka::bandwidth_detail
