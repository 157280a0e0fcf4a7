// The sums of one query of the local fit in double (local_rows.h), shared by local_fit_scaled and local_gradient:
// what a row accumulates over the keys, its guarded inverse, and the loop over the queries.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/parallel.h"
#include "engine/head.h"
#include "engine/local_fit.h"
#include "engine/shifted_sums.h"

namespace ka::row_sums {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What one query accumulates: its moments (MomentSums, shifted_sums.h) in units of e^max, with z the design row of
// the estimator's degree (design_row, local_fit.h: [1], [1, u] or [1, u, u_a·u_b], u = (x_j − q)/h),
//   a = Σ w z zᵀ, b = Σ w² z zᵀ (p × p, full), t = Σ w z yᵀ (p × width);
// and for Nadaraya–Watson derivatives the extra sums G = Σ w g, GY = Σ w g yᵀ (of weights), B1 = Σ w² g,
// B2 = Σ w² g² (of squared weights), g = ∂ln K/∂q.
struct Row {
  int64_t dims, width, p;
  int degree;  // of the polynomial: design_degree(p, dims)
  bool nw_grad;
  bool with_b = true;  // b (Σ w² z zᵀ) is needed: Σℓ² or effective keys are asked for
  std::vector<double> h, u, z, g, l, inv, block;
  MomentSums<double> sums;  // over `block`
  double *a, *t, *G, *GY, *b, *B1, *B2;
  Row(int64_t dims_, int64_t width_, int64_t p_, bool nw_grad_)
      : dims(dims_),
        width(width_),
        p(p_),
        degree(design_degree(p_, dims_)),
        nw_grad(nw_grad_),
        h(size_t(dims)),
        u(size_t(dims)),
        z(size_t(p)),
        g(size_t(dims)),
        l(size_t(p * p)),
        inv(size_t(p * p)) {
    const MomentLayout layout{p, width, true, dims + dims * width, 2 * dims};
    block.resize(size_t(layout.size()));
    sums = MomentSums<double>(block.data(), layout);
    a = sums.a();
    t = sums.t();
    G = sums.extra();
    GY = G + dims;
    b = sums.b();
    B1 = sums.extra_squared();
    B2 = B1 + dims;
  }
  Row(const Row&) = delete;  // its pointers are into its own block
  Row& operator=(const Row&) = delete;
};

struct Context {
  const Problem& p;
  Head hd;
  const float* omega;  // null: all ones
  const double* query_scale;
  bool sorted;           // keys in increasing order of their first coordinate
  double log_omega_max;  // ln max ω (0 without observation weights)
};

// ln K((q − k)/h) over the dimensions and, when `grad` is given, its derivative in each q_d.
double log_kernel(KernelKind kind, const float* q, const float* k, const double* h, int64_t dims, double* grad);

// Query i's bandwidths into r.h; false where the query's scale is not a number.
bool row_bandwidths(const Context& c, int64_t i, Row& r);

// Accumulates query i's sums over the keys that can matter. On keys sorted by their first coordinate, those beyond
// q₀ ± reach·h₀ are left out: they have no weight under a compact kernel (the reach widened against rounding), and
// below 1e-30 of the peak under the Gaussian (11.8 bandwidths) and Laplacian (69.1) kernels, whose score is at most
// that of the first coordinate alone. Where the best key kept is itself below e^-20 of the largest ω (a query far
// from every key), the row is summed over every key instead. The Cauchy kernel's tail is too heavy: every key.
void accumulate(const Context& c, int64_t i, Row& r);

// With the sums of a non-empty row: the guarded inverse A⁻¹ (columns in r.inv, p × p); returns whether the guard acted.
bool invert(Row& r);

// uᵀ B u for column x of the inverse.
double quadratic_b(const Row& r, int64_t x);

// ln max ω over the J observation weights (0 without them): the score of the heaviest key at distance 0.
double log_max(const Fit& f, int64_t J);

// Whether the keys are in increasing order of their first coordinate (accumulate() then visits only those in reach).
bool sorted_by_first(const ConstMatrix& keys);

// Argument checks of a fit with per-query bandwidths or in double.
Status check_fit(const Fit& f);

// Runs body(i, row) for every query, split over p.threads; the first error in query order is returned.
template <class Body>
Result for_rows(const Context& c, int64_t p_cols, bool nw_grad, Body&& body) {
  const int64_t I = c.p.queries.rows;
  const int32_t threads = c.p.threads;
  const int64_t tasks = std::min<int64_t>(I, threads == 1 ? 1 : int64_t(threads) * 4);
  const int64_t per = tasks ? (I + tasks - 1) / tasks : 0;
  std::vector<Result> results(size_t(std::max<int64_t>(tasks, 1)));
  parallel_for(tasks, threads, [&](int64_t t) {
    Row r(c.p.queries.cols, c.p.values.cols, p_cols, nw_grad);
    std::vector<uint8_t> chosen(static_cast<size_t>(c.p.keys.rows));
    for (int64_t i = t * per; i < std::min(I, (t + 1) * per); ++i) {
      const Result res = body(i, r, chosen.data());
      if (res.status != Status::Ok) {
        results[size_t(t)] = res;
        return;
      }
    }
  });
  for (const Result& r : results)
    if (r.status != Status::Ok) return r;
  return {};
}

}  // namespace ka::row_sums
