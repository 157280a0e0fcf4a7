// See local_row_sums.h. Plain double loops: these paths serve per-query bandwidths, criteria in double and
// derivatives, whose cost is the kernel evaluations themselves (O(I · J · dims), or the keys within reach for compact
// kernels on sorted keys).
#include "engine/local_row_sums.h"

#include <cmath>

#include "engine/local_solve.h"

namespace ka::row_sums {

// ln K((q − k)/h) over the dimensions and, when `grad` is given, its derivative in each q_d. The support of compact
// kernels is decided by compact_log_factor, as the other paths decide it.
double log_kernel(KernelKind kind, const float* q, const float* k, const double* h, int64_t dims, double* grad) {
  if (is_compact(kind)) {
    double acc = 0;
    for (int64_t d = 0; d < dims; ++d) {
      const double f = compact_log_factor<double>(kind, double(q[d]), double(k[d]), h[d]);
      if (f == -kInf) return -kInf;
      acc += f;
      if (!grad) continue;
      const double u = (double(q[d]) - double(k[d])) / h[d], a = std::fabs(u);
      // d/du ln(1 − u²) and d/du 3 ln(1 − |u|³); the uniform kernel is flat inside (and refused for derivatives).
      const double du = kind == KernelKind::Epanechnikov ? -2 * u / (1 - u * u)
                        : kind == KernelKind::Tricube    ? -9 * u * a / (1 - a * a * a)
                                                         : 0.0;
      grad[d] = du / h[d];
    }
    return acc;
  }
  double acc = 0;
  for (int64_t d = 0; d < dims; ++d) {
    const double u = (double(q[d]) - double(k[d])) / h[d];
    acc += kind == KernelKind::Laplacian ? std::fabs(u) : u * u;
    if (grad) grad[d] = kind == KernelKind::Laplacian ? -(u > 0 ? 1.0 : u < 0 ? -1.0 : 0.0) / h[d] : -u / h[d];
  }
  if (kind == KernelKind::Gaussian) return -acc / 2;
  if (kind == KernelKind::Laplacian) return -acc;
  if (grad)  // Cauchy: −ln(1 + Σu²), whose derivative is −2u_d / (h_d (1 + Σu²)); grad holds −u_d/h_d so far
    for (int64_t d = 0; d < dims; ++d) grad[d] *= 2 / (1 + acc);
  return -std::log1p(acc);
}

namespace {

// A compact kernel's weight along one dimension, 0 outside its support: exp of compact_log_factor (kernels.h), with
// the same support test, without the logarithm (the inner loop of span fits, where every visited key is in reach).
double compact_factor(KernelKind kind, double q, double k, double h) {
  const double s = q - k, qv = s + k;
  const double e = (q - qv) + (qv - s - k);
  const double gap = (h - std::fabs(s)) - (s < 0 ? -e : e);
  if (kind == KernelKind::Uniform ? !(gap >= 0) : !(gap > 0)) return 0;
  const double one_minus_a = gap / h, a = std::fabs(s) / h;
  if (kind == KernelKind::Epanechnikov) return one_minus_a * (1 + a);
  if (kind == KernelKind::Tricube) {
    const double t = one_minus_a * (1 + a + a * a);
    return t * t * t;
  }
  return 1;
}

// Accumulates query i's sums over keys [first, last), with P = r.p known at compile time (0: read at run time) so that
// the loops over the moments unroll: the same arithmetic, in the same order, for every P (measured: 1-D span fits
// 10-25 % faster, the same bytes).
template <int64_t P>
void accumulate_range_p(const Context& c, int64_t i, Row& r, int64_t first, int64_t last) {
  const Problem& p = c.p;
  const int64_t J = p.keys.rows;
  const float* q = p.queries.row(i);
  r.sums.clear();
  double* g = r.nw_grad ? r.g.data() : nullptr;
  const KernelKind kind = p.kernel.kind;
  const bool compact = is_compact(kind);
  const bool masked = p.masks.any();
  const int64_t np = P > 0 ? P : r.p, width = r.width;
  double *z = r.z.data(), *a = r.a, *b = r.with_b ? r.b : nullptr, *t = r.t;
  const double* h = r.h.data();
  for (int64_t j = first; j < last; ++j) {
    if ((masked && !p.masks.allows(i, j, J)) || (c.omega && !(c.omega[j] > 0))) continue;
    const float* k = p.keys.row(j);
    double w;
    if (compact) {  // weights at most ω: no shift (max stays 0), no logarithms
      w = c.omega ? double(c.omega[j]) : 1.0;
      for (int64_t d = 0; d < r.dims && w > 0; ++d) {
        const double hd = r.h[size_t(d)];
        w *= compact_factor(kind, double(q[d]), double(k[d]), hd);
        if (!g) continue;
        const double u = (double(q[d]) - double(k[d])) / hd, a = std::fabs(u);
        g[d] = (kind == KernelKind::Epanechnikov ? -2 * u / (1 - u * u)
                : kind == KernelKind::Tricube    ? -9 * u * a / (1 - a * a * a)
                                                 : 0.0) /
               hd;  // as log_kernel's
      }
      if (!(w > 0)) continue;
      r.sums.max = 0;
    } else {
      double score = log_kernel(kind, q, k, r.h.data(), r.dims, g);
      if (score == -kInf) continue;
      if (c.omega) score += std::log(double(c.omega[j]));
      if (score > r.sums.max) r.sums.rescale_to(score);
      w = std::exp(score - r.sums.max);
      if (!(w > 0)) continue;
    }
    z[0] = 1;
    if constexpr (P == 2) {  // 1-D local-linear, the span fits' common case, without design_row's loops
      z[1] = (double(k[0]) - double(q[0])) / h[0];
    } else if (np > 1) {
      offsets(q, k, h, r.dims, r.u.data());
      design_row(r.degree, r.u.data(), r.dims, z);
    }
    const float* y = p.values.row(j);
    for (int64_t x = 0; x < np; ++x) {
      const double wz = w * z[x];
      for (int64_t v = 0; v < np; ++v) a[x * np + v] += wz * z[v];
      if (b)
        for (int64_t v = 0; v < np; ++v) b[x * np + v] += wz * w * z[v];
      for (int64_t col = 0; col < width; ++col) t[x * width + col] += wz * double(y[col]);
    }
    if (!g) continue;
    for (int64_t d = 0; d < r.dims; ++d) {
      const double wg = w * g[d];
      r.G[size_t(d)] += wg;
      r.B1[size_t(d)] += w * wg;
      r.B2[size_t(d)] += wg * wg;
      for (int64_t col = 0; col < r.width; ++col) r.GY[size_t(d * r.width + col)] += wg * double(y[col]);
    }
  }
}

void accumulate_range(const Context& c, int64_t i, Row& r, int64_t first, int64_t last) {
  switch (r.p) {
    case 1: return accumulate_range_p<1>(c, i, r, first, last);
    case 2: return accumulate_range_p<2>(c, i, r, first, last);
    case 3: return accumulate_range_p<3>(c, i, r, first, last);
    default: return accumulate_range_p<0>(c, i, r, first, last);
  }
}

}  // namespace

// Query i's bandwidths into r.h; false where the query's scale is not a number.
bool row_bandwidths(const Context& c, int64_t i, Row& r) {
  double s = c.query_scale ? c.query_scale[i] : 1.0;
  if (!(s >= 0)) return false;
  if (s == 0) s = std::numeric_limits<double>::min();
  for (int64_t d = 0; d < r.dims; ++d) r.h[size_t(d)] = double(c.p.kernel.bandwidth[d]) * s;
  return true;
}

// Accumulates query i's sums over the keys that can matter. On keys sorted by their first coordinate, those beyond
// q₀ ± reach·h₀ are left out: they have no weight under a compact kernel (the reach widened against rounding), and
// below 1e-30 of the peak under the Gaussian (11.8 bandwidths) and Laplacian (69.1) kernels, whose score is at most
// that of the first coordinate alone. Where the best key kept is itself below e^-20 of the largest ω (a query far
// from every key), the row is summed over every key instead. The Cauchy kernel's tail is too heavy: every key.
void accumulate(const Context& c, int64_t i, Row& r) {
  const Problem& p = c.p;
  const KernelKind kind = p.kernel.kind;
  const int64_t J = p.keys.rows;
  const float* q = p.queries.row(i);
  const double units = is_compact(kind)                ? 1 + 1e-6
                       : kind == KernelKind::Gaussian  ? 11.8
                       : kind == KernelKind::Laplacian ? 69.1
                                                       : 0.0;
  if (!c.sorted || units == 0) return accumulate_range(c, i, r, 0, J);
  int64_t first = 0, last = J;
  {
    const double reach = r.h[0] * units + 1e-300;
    const auto below = [&](int64_t j, double v) { return double(p.keys.row(j)[0]) < v; };
    int64_t lo = 0, hi = J;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (below(mid, double(q[0]) - reach))
        lo = mid + 1;
      else
        hi = mid;
    }
    first = lo;
    hi = J;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (below(mid, double(q[0]) + reach) || double(p.keys.row(mid)[0]) == double(q[0]) + reach)
        lo = mid + 1;
      else
        hi = mid;
    }
    last = lo;
  }
  accumulate_range(c, i, r, first, last);
  if (!is_compact(kind) && (first > 0 || last < J) && !(r.sums.max > c.log_omega_max - 20))
    accumulate_range(c, i, r, 0, J);
}

// With the sums of a non-empty row: the guarded inverse A⁻¹ (columns in r.inv, p × p); returns whether the guard acted.
bool invert(Row& r) {
  if (r.p == 1) {
    r.inv[0] = 1 / r.a[0];
    return false;
  }
  const bool guarded = guarded_factor(r.a, r.p, r.l.data());
  for (int64_t col = 0; col < r.p; ++col) solve_factored(r.l.data(), r.p, col, r.inv.data() + col * r.p);
  return guarded;
}

// uᵀ B u for column x of the inverse.
double quadratic_b(const Row& r, int64_t x) {
  const double* u = r.inv.data() + x * r.p;
  double v = 0;
  for (int64_t m = 0; m < r.p; ++m)
    for (int64_t n = 0; n < r.p; ++n) v += u[m] * u[n] * r.b[size_t(m * r.p + n)];
  return v;
}

double log_max(const Fit& f, int64_t J) {
  if (!f.observation_weights) return 0;
  float top = 0;
  for (int64_t j = 0; j < J; ++j) top = std::max(top, f.observation_weights[j]);
  return std::log(double(top));
}

bool sorted_by_first(const ConstMatrix& keys) {
  for (int64_t j = 1; j < keys.rows; ++j)
    if (!(keys.row(j - 1)[0] <= keys.row(j)[0])) return false;
  return true;
}

Status check_fit(const Fit& f) {
  const Problem& p = f.problem;
  if (const Status st = check(p, true); st != Status::Ok) return st;
  if (p.heads != 1 || p.kernel.kind == KernelKind::Softmax) return Status::BadArgument;
  if (!known_estimator(f.estimator)) return Status::BadArgument;
  for (int64_t j = 0; j < p.keys.rows; ++j) {
    const float v = f.observation_weights ? f.observation_weights[j] : 1.0f;
    if (!(v >= 0) || !std::isfinite(v)) return Status::BadArgument;
  }
  return Status::Ok;
}

}  // namespace ka::row_sums
