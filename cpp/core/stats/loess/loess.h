// R's loess(): local regression of degree 0, 1 or 2 over nearest-neighbour spans with tricube weights, robust
// ("symmetric") iterations, the k-d tree surface blended between exact vertex fits or exact fits everywhere, and
// the statistics and standard errors R reports. Computed as R 4.2's loess(), predict.loess() and their Fortran
// (loessf.f, by Cleveland, Grosse and Shyu) compute them, in float64.
//   Cleveland, W. S. & Grosse, E. (1991). Computational methods for local regression. Statistics and Computing 1,
//   47–62.  Cleveland, W. S., Grosse, E. & Shyu, W. M. (1992). Local regression models. In Chambers & Hastie (eds),
//   Statistical Models in S, ch. 8.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"

namespace ka {

enum class LoessFamily : int32_t { Gaussian = 0, Symmetric = 1 };
enum class LoessSurface : int32_t { Interpolate = 0, Direct = 1 };
enum class LoessStatistics : int32_t { Approximate = 0, Exact = 1, None = 2 };
enum class LoessTraceHat : int32_t { Exact = 0, Approximate = 1 };

// What made a fit fail, beyond its Status.
enum class LoessProblem : int32_t {
  None = 0,
  SpanTooSmall,  // ⌊n·span⌋ points per fit are fewer than the degree's columns + 1 (R: "span too small")
  ZeroWidth,     // a fit point had at least ⌊n·span⌋ points at distance 0 (R: "zero-width neighborhood")
};

struct LoessOptions {
  int32_t dims = 1;    // predictors, 1 … 4
  double span = 0.75;  // > 0: q = min(n, ⌊n·span⌋) points per fit; above 1 the radius grows by √span
  int32_t degree = 2;  // 0, 1 or 2
  LoessFamily family = LoessFamily::Gaussian;
  LoessSurface surface = LoessSurface::Interpolate;
  bool normalize = true;   // dims > 1: scale each predictor by its 10 %-trimmed standard deviation
  int32_t iterations = 4;  // symmetric: fits in all (R's control$iterations), >= 1
  double cell = 0.2;       // interpolate: leaves hold at most ⌊n·span·cell⌋ points, > 0
  LoessStatistics statistics = LoessStatistics::Approximate;
  LoessTraceHat trace_hat = LoessTraceHat::Exact;  // interpolate with approximate statistics
  int32_t threads = 1;  // >= 1: the local fits run on up to this many threads (fit and predict; the same results)
};

// R's statistics: enp = δ1 + 2·trace − n, s = √(Σ w·r²/δ1) (r the residuals, or for the symmetric family those of
// R's pseudovalues), δ1, δ2 and the trace of the operator. NaN with statistics None.
struct LoessSummary {
  double enp, residual_scale, one_delta, two_delta, trace_hat;
};

namespace loess {
struct ModelState;
}

class LoessModel {
 public:
  LoessModel();
  ~LoessModel();
  LoessModel(const LoessModel&) = delete;
  LoessModel& operator=(const LoessModel&) = delete;

  // Fits y (n) on x (n × dims, row-major) with prior weights (n values >= 0, not all 0, or null for all 1), as
  // loess(y ~ x, weights, span, degree, family, control = loess.control(surface, statistics, trace.hat, cell,
  // iterations)) does. Returns BadShape for n < 1 or dims outside 1 … 4 (or, with normalize, a predictor whose
  // trimmed values do not spread), BadArgument for a non-finite value, a negative weight or all 0, an option out
  // of range, or the problems `problem` names; OutOfMemory when exact statistics' n² scratch cannot be had. Inputs
  // are not modified.
  Status fit(const double* x, const double* y, const double* weights, int64_t n, const LoessOptions& options);

  LoessProblem problem() const;
  int64_t size() const;
  int32_t dims() const;
  const LoessSummary& summary() const;
  // Whether some local fit dropped a singular value (R warns "pseudoinverse used").
  bool pseudo_inverse() const;
  // Per input row: the fitted values, the residuals y − fitted, and the robustness weights of the last fit (1 for
  // the gaussian family).
  void fitted(double* out) const;
  void residuals(double* out) const;
  void robustness_weights(double* out) const;

  // The fit (and with se non-null its standard error, R's se.fit) at m points q (m × dims, row-major, in the
  // original units), as predict(fit, q, se = TRUE). Interpolate: NaN for points outside the data's range in any
  // coordinate (R's NA). se needs statistics other than None (BadArgument otherwise). Not thread-safe: standard
  // errors of the interpolated surface fill a cache in the model.
  Status predict(const double* q, int64_t m, double* fit, double* se);

 private:
  std::unique_ptr<loess::ModelState> state_;
};

}  // namespace ka
