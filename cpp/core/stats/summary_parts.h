// The steps of summarize_fit (regression.h) that a fit made in parts shares with it: the outputs of a fit at its own
// sample, the textbook re-solve of an observation the guard touched, and the sums. A mixed regression (mixed.h) fits
// its sample group by group and re-solves each guarded observation on its group's problem.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_solve.h"
#include "engine/taylor_rows.h"
#include "stats/regression.h"

namespace ka::summary_parts {

// The per-observation outputs of a fit at its own sample (n observations, width columns of y); `in_double` adds
// the fitted values in double (FitOut::mean_double).
struct SampleFit {
  int64_t n, width;
  Scratch<float> mean;
  Scratch<double> mean64, sum_sq, self;
  Scratch<uint8_t> guarded;
  FitOut out;
  SampleFit(int64_t n, int64_t width, bool in_double);
  bool ok() const { return mean.ok() && mean64.ok() && sum_sq.ok() && self.ok() && guarded.ok(); }
  double fitted(int64_t i, int64_t c) const {
    return out.mean_double ? out.mean_double[i * width + c] : double(mean.get()[i * width + c]);
  }
};

// What re-solving guarded observations needs: y's range per column, and the solve's scratch.
struct Resolver {
  Scratch<double> y_lo, y_hi, solve;
  ExactRowScratch rows;
  double* exact;
  Resolver(ConstMatrix y, int64_t design_columns);  // design_columns(estimator, dims), local_fit.h
  bool ok() const { return y_lo.ok() && y_hi.ok() && solve.ok(); }
};

// Observation `at` of `s`, which is query `row` of `p` (its own key `own`), where the guard acted: the textbook float64
// solve replaces its fit and self weight, and `counts` records whether that moved the fit (guard_changed) or whether
// the design is singular (singular, and guard_changed). `sorted`: p's keys are sorted by their first coordinate
// (sorted_by_first_coordinate, key_reach.h), so the solve reads only the keys in the row's reach. `taylor`, where
// given (row = own = at, p the sample itself), solves the rows it can from its expansion (taylor_rows.h).
void resolve_guarded(const Problem& p, int degree, const float* omega, int64_t row, int64_t own, int64_t at,
                     bool sorted, Resolver& r, SampleFit& s, FitSummary& counts, const TaylorRows* taylor = nullptr);

// The summary's sums (regression.h) from the outputs, with the guard counts of `counts`; `y` and `omega` the sample's.
FitSummary sum_up(ConstMatrix y, const float* omega, const SampleFit& s, FitSummary counts, double* column_sigma2);

}  // namespace ka::summary_parts
