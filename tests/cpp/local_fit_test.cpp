// local_fit() against the float64 weighted-least-squares definition (reference::local_weights): estimates, Σℓ²,
// the smoother's diagonal, effective keys and log-denominators, at tile-boundary sizes, with masks, observation
// weights and several value columns; then the behaviours the estimator promises (linear trends reproduced,
// degenerate designs, far queries, thread counts).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cases.h"
#include "engine/local_fit.h"
#include "engine/local_solve.h"
#include "reference.h"
#include "stats/regression.h"

using namespace ka;
using namespace ka::testing;

namespace {

struct Outputs {
  std::vector<float> mean;
  std::vector<double> sum_sq, self, eff, logden;
  Outputs(int64_t I, int64_t D)
      : mean(size_t(I * D)), sum_sq(size_t(I)), self(size_t(I)), eff(size_t(I)), logden(size_t(I)) {}
  FitOut view(int64_t I, int64_t D, bool with_self) {
    return {Matrix{mean.data(), I, D, D}, sum_sq.data(), with_self ? self.data() : nullptr, eff.data(), logden.data()};
  }
};

std::vector<float> random_weights(int64_t J, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 2.0f);
  std::vector<float> w(static_cast<size_t>(J));
  for (auto& x : w) x = u(rng) < 0.2f ? 0.0f : u(rng);  // some zero weights
  return w;
}

// Checks every output of query i against the reference equivalent kernel.
void check_row(const Case& c, const Outputs& o, int64_t i, int degree, const std::vector<float>& omega,
               bool with_self) {
  const Problem& p = c.problem;
  const auto ref = reference::local_weights(p, i, degree, omega);
  const auto& ell = ref.ell;
  CAPTURE(i);
  if (ell.empty()) {
    CHECK(std::isnan(o.mean[size_t(i * c.D)]));
    CHECK(o.eff[size_t(i)] == 0);
    return;
  }
  // A nearly singular local design (few keys in reach, all near a plane) leaves the slopes to float32 rounding,
  // amplified up to 1/kPivotFloor² times where the guard acts: the estimate must stay sensible, not match to 1e-4.
  const double tol = ref.conditioning > 0.1 ? 1e-4 : ref.conditioning > kPivotFloor ? 1e-2 : 5e-2;
  CAPTURE(ref.conditioning);
  for (int64_t d = 0; d < c.D; ++d) {
    double want = 0, spread = 0;
    for (int64_t j = 0; j < c.J; ++j) {
      want += ell[size_t(j)] * p.values.row(j)[d];
      spread += std::fabs(ell[size_t(j)] * p.values.row(j)[d]);
    }
    CHECK(std::fabs(o.mean[size_t(i * c.D + d)] - want) <= tol * (spread + 1e-2));
  }
  double sum_sq = 0, wsum = 0, wsq = 0, max = -1e300;
  for (int64_t j = 0; j < c.J; ++j) sum_sq += ell[size_t(j)] * ell[size_t(j)];
  // Σℓ² = gᵀBg is a difference of large float32-rounded terms where the design is thin (local_fit.h): on the
  // 10-column design of 3-D local-quadratic with a pivot ratio below 0.1 (few keys in reach for 10 coefficients) the
  // float32 moments leave it off by factors (docs/regression.md, "Estimators"); it stays positive there.
  if (degree == 2 && c.M > 2 && ref.conditioning < 0.1)
    CHECK(o.sum_sq[size_t(i)] > 0);
  else
    CHECK(std::fabs(o.sum_sq[size_t(i)] - sum_sq) <= 10 * tol * sum_sq);
  if (with_self) CHECK(std::fabs(o.self[size_t(i)] - ell[size_t(i)]) <= tol * (1 + std::fabs(ell[size_t(i)])));
  // Effective keys and the log-denominator from the raw weights ω_j K.
  for (int64_t j = 0; j < c.J; ++j)
    if (p.masks.allows(i, j, c.J) && (omega.empty() || omega[size_t(j)] > 0))
      max = std::max(max, reference::log_weight(p, 0, i, j));
  for (int64_t j = 0; j < c.J; ++j) {
    if (!p.masks.allows(i, j, c.J) || (!omega.empty() && !(omega[size_t(j)] > 0))) continue;
    const double w = std::exp(reference::log_weight(p, 0, i, j) - max) * (omega.empty() ? 1.0 : omega[size_t(j)]);
    wsum += w;
    wsq += w * w;
  }
  CHECK(o.eff[size_t(i)] == doctest::Approx(wsum * wsum / wsq).epsilon(1e-4));
  CHECK(o.logden[size_t(i)] == doctest::Approx(std::log(wsum) + max).epsilon(1e-5));
}

}  // namespace

TEST_CASE("local_fit matches the weighted least-squares definition") {
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear, Estimator::LocalQuadratic})
    for (const KernelKind kind :
         {KernelKind::Gaussian, KernelKind::Epanechnikov, KernelKind::Tricube, KernelKind::Cauchy})
      for (const int64_t M : {1, 2, 3})
        for (const int64_t J : {1, 5, 63, 64, 65, 130})
          for (const bool weighted : {false, true})
            for (const MaskKind mask : {MaskKind::None, MaskKind::LeaveOneOut}) {
              const int64_t I = mask == MaskKind::LeaveOneOut ? J : 17, D = J % 2 ? 1 : 2;
              Case c(I, J, M, D, kind, mask, 1, uint32_t(J * 7 + M * 3 + int(kind)));
              if (mask == MaskKind::LeaveOneOut) c.problem.queries = c.problem.keys;
              const auto omega = weighted ? random_weights(J, uint32_t(J)) : std::vector<float>{};
              const bool with_self = I == J;
              Outputs o(I, D);
              const Fit f{c.problem, est, weighted ? omega.data() : nullptr};
              CAPTURE(int(est));
              CAPTURE(int(kind));
              CAPTURE(M);
              CAPTURE(J);
              CAPTURE(weighted);
              CAPTURE(int(mask));
              REQUIRE(local_fit(f, o.view(I, D, with_self)).status == Status::Ok);
              for (int64_t i = 0; i < I; ++i) check_row(c, o, i, degree_of(est), omega, with_self);
            }
}

TEST_CASE("local-linear reproduces a linear trend exactly, where Nadaraya-Watson is biased at the edges") {
  const int64_t n = 200;
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = float(i) / float(n - 1);
    y[size_t(i)] = 2 * x[size_t(i)] + 1;
  }
  const float h = 0.1f;
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, &h};
  std::vector<float> ll(n), nw(n);
  REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{ll.data(), n, 1, 1}}).status == Status::Ok);
  REQUIRE(local_fit({p, Estimator::NadarayaWatson}, {Matrix{nw.data(), n, 1, 1}}).status == Status::Ok);
  CHECK(std::fabs(ll[0] - 1.0f) < 1e-4);
  CHECK(std::fabs(ll[n - 1] - 3.0f) < 1e-4);
  CHECK(std::fabs(nw[0] - 1.0f) > 0.1);  // about 2·h·sqrt(2/π)
}

TEST_CASE("degenerate local designs fall back to Nadaraya-Watson instead of garbage") {
  SUBCASE("one key in reach") {
    std::vector<float> x = {0.0f, 10.0f, 20.0f}, y = {1.0f, 5.0f, -3.0f}, q = {0.3f, 19.5f};
    const float h = 1.0f;
    Problem p;
    p.queries = {q.data(), 2, 1, 1};
    p.keys = {x.data(), 3, 1, 1};
    p.values = {y.data(), 3, 1, 1};
    p.kernel = {KernelKind::Epanechnikov, 1.0, &h};
    std::vector<float> out(2);
    REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{out.data(), 2, 1, 1}}).status == Status::Ok);
    CHECK(out[0] == doctest::Approx(1.0f));
    CHECK(out[1] == doctest::Approx(-3.0f));
  }
  SUBCASE("a dimension with no spread") {
    const int64_t n = 50;
    std::vector<float> x(size_t(2 * n)), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[size_t(2 * i)] = float(i) / n;
      x[size_t(2 * i + 1)] = 3.0f;  // constant column
      y[size_t(i)] = 4 * x[size_t(2 * i)] - 1;
    }
    const float h[2] = {0.2f, 0.2f};
    Problem p;
    p.queries = p.keys = {x.data(), n, 2, 2};
    p.values = {y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, h};
    std::vector<float> out(n);
    REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{out.data(), n, 1, 1}}).status == Status::Ok);
    for (int64_t i = 0; i < n; i += 7) CHECK(std::isfinite(out[size_t(i)]));
  }
}

// The weighted least-squares intercept of y on (1, u₁, u₂) by Gaussian elimination with partial pivoting in double,
// from the normal equations written out: the reference for the closed form below.
static double planar_intercept(const double A[3][3], const double t[3]) {
  double m[3][4];
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) m[r][c] = A[r][c];
    m[r][3] = t[r];
  }
  for (int c = 0; c < 3; ++c) {
    int pivot = c;
    for (int r = c + 1; r < 3; ++r)
      if (std::fabs(m[r][c]) > std::fabs(m[pivot][c])) pivot = r;
    std::swap(m[c], m[pivot]);
    for (int r = c + 1; r < 3; ++r) {
      const double f = m[r][c] / m[c][c];
      for (int k = c; k < 4; ++k) m[r][k] -= f * m[c][k];
    }
  }
  double b[3];
  for (int r = 2; r >= 0; --r) {
    double v = m[r][3];
    for (int k = r + 1; k < 3; ++k) v -= m[r][k] * b[k];
    b[r] = v / m[r][r];
  }
  return b[0];
}

TEST_CASE("2-D local-linear in closed form: the least-squares intercept where the guard would not act, else declined") {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(-2, 2);
  // Moments of `count` weighted points about the query, in the grid's power order, their u₂ = slope·u₁ + spread·noise.
  const auto moments = [&](int count, double slope, double spread, double* S, double* t, double A[3][3]) {
    std::fill(S, S + 6, 0.0);
    std::fill(t, t + 3, 0.0);
    for (int k = 0; k < count; ++k) {
      const double u1 = u(g), u2 = slope * u1 + spread * u(g), w = std::exp(-0.5 * (u1 * u1 + u2 * u2));
      const double y = 3 + 2 * u1 - u2 + 0.5 * u(g);
      const double z[6] = {1, u1, u2, u1 * u1, u1 * u2, u2 * u2};
      for (int i = 0; i < 6; ++i) S[i] += w * z[i];
      for (int i = 0; i < 3; ++i) t[i] += w * y * z[i];
    }
    const double a[3][3] = {{S[0], S[1], S[2]}, {S[1], S[3], S[4]}, {S[2], S[4], S[5]}};
    std::copy(&a[0][0], &a[0][0] + 9, &A[0][0]);
  };
  double S[6], t[3], A[3][3], value = 0, l[9], col[3];
  for (int trial = 0; trial < 200; ++trial) {  // spread designs: served, the intercept to rounding
    moments(5 + trial % 40, u(g), 1.0, S, t, A);
    const double upper[9] = {A[0][0], A[0][1], A[0][2], 0, A[1][1], A[1][2], 0, 0, A[2][2]};
    if (first_column_of_inverse(upper, 3, l, col)) continue;  // the guard acted (few points): not this case
    REQUIRE(planar_linear_value(S, t, &value));
    CHECK(value == doctest::Approx(planar_intercept(A, t)).epsilon(1e-11));
  }
  for (int trial = 0; trial < 50; ++trial) {  // points nearly on a line: the guard acts, the closed form declines
    moments(30, u(g), 1e-4, S, t, A);
    const double upper[9] = {A[0][0], A[0][1], A[0][2], 0, A[1][1], A[1][2], 0, 0, A[2][2]};
    CHECK(first_column_of_inverse(upper, 3, l, col));
    CHECK_FALSE(planar_linear_value(S, t, &value));
  }
  moments(30, 0, 0, S, t, A);  // no spread along u₂ at all
  CHECK_FALSE(planar_linear_value(S, t, &value));
}

TEST_CASE("1-D local-linear in closed form: A⁻¹e₁ by Cramer's rule where the guard would not act, else declined") {
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> u(-2, 2);
  // Moments Σw, Σw·u, Σw·u² of `count` weighted points about the query, u = centre + spread·noise.
  const auto moments = [&](int count, double centre, double spread, double* S) {
    std::fill(S, S + 3, 0.0);
    for (int k = 0; k < count; ++k) {
      const double v = centre + spread * u(g), w = std::exp(-0.5 * v * v);
      S[0] += w;
      S[1] += w * v;
      S[2] += w * v * v;
    }
  };
  double S[3], gc[2], l[4], col[2];
  for (int trial = 0; trial < 200; ++trial) {  // spread designs: (S₂, −S₁)/(S₀S₂ − S₁²) to rounding
    moments(3 + trial % 40, u(g), 1.0, S);
    const double upper[4] = {S[0], S[1], 0, S[2]};
    if (first_column_of_inverse(upper, 2, l, col)) continue;  // the guard acted (few points): not this case
    REQUIRE(linear_first_column(S, gc));
    const double det = S[0] * S[2] - S[1] * S[1];
    CHECK(gc[0] == doctest::Approx(S[2] / det).epsilon(1e-11));
    CHECK(gc[1] == doctest::Approx(-S[1] / det).epsilon(1e-11));
  }
  for (int trial = 0; trial < 50; ++trial) {  // points nearly at one u: the guard acts, the closed form declines
    moments(30, u(g), 1e-7, S);
    const double upper[4] = {S[0], S[1], 0, S[2]};
    CHECK(first_column_of_inverse(upper, 2, l, col));
    CHECK_FALSE(linear_first_column(S, gc));
  }
  moments(30, 0.5, 0, S);  // no spread at all
  CHECK_FALSE(linear_first_column(S, gc));
}

TEST_CASE("queries far from the data are fitted in double, and empty rows follow the policy") {
  std::vector<float> x = {0.0f, 1.0f, 2.0f, 3.0f}, y = {1.0f, 3.0f, 5.0f, 7.0f}, q = {300.0f, -1e4f};
  const float h = 0.5f;
  Problem p;
  p.queries = {q.data(), 2, 1, 1};
  p.keys = {x.data(), 4, 1, 1};
  p.values = {y.data(), 4, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, &h};
  std::vector<float> nw(2), ll(2);
  std::vector<double> logden(2);
  REQUIRE(
      local_fit({p, Estimator::NadarayaWatson}, {Matrix{nw.data(), 2, 1, 1}, nullptr, nullptr, nullptr, logden.data()})
          .status == Status::Ok);
  CHECK(nw[0] == doctest::Approx(7.0f));  // the nearest key, as the weights' limit
  CHECK(nw[1] == doctest::Approx(1.0f));
  CHECK(logden[0] == doctest::Approx(-0.5 * std::pow(297.0 / 0.5, 2)).epsilon(1e-6));
  REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{ll.data(), 2, 1, 1}}).status == Status::Ok);
  CHECK(std::isfinite(ll[0]));
  p.kernel.kind = KernelKind::Uniform;
  for (const EmptyPolicy policy : {EmptyPolicy::NaN, EmptyPolicy::Zero, EmptyPolicy::Nearest, EmptyPolicy::Error}) {
    p.empty = policy;
    const Result r = local_fit({p, Estimator::LocalLinear}, {Matrix{ll.data(), 2, 1, 1}});
    CAPTURE(int(policy));
    if (policy == EmptyPolicy::Error) {
      CHECK(r.status == Status::EmptyRow);
      CHECK(r.row == 0);
      continue;
    }
    REQUIRE(r.status == Status::Ok);
    if (policy == EmptyPolicy::NaN) CHECK(std::isnan(ll[0]));
    if (policy == EmptyPolicy::Zero) CHECK(ll[0] == 0.0f);
    if (policy == EmptyPolicy::Nearest) CHECK(ll[1] == 1.0f);
  }
}

TEST_CASE("local_fit gives the same bytes for every thread count") {
  Case c(300, 300, 2, 1, KernelKind::Gaussian, MaskKind::None, 1, 11);
  Outputs one(300, 1);
  REQUIRE(local_fit({c.problem, Estimator::LocalLinear}, one.view(300, 1, true)).status == Status::Ok);
  for (const int32_t threads : {2, 3}) {
    Outputs many(300, 1);
    c.problem.threads = threads;
    REQUIRE(local_fit({c.problem, Estimator::LocalLinear}, many.view(300, 1, true)).status == Status::Ok);
    CHECK(std::memcmp(one.mean.data(), many.mean.data(), 300 * sizeof(float)) == 0);
    CHECK(std::memcmp(one.sum_sq.data(), many.sum_sq.data(), 300 * sizeof(double)) == 0);
  }
}

TEST_CASE("bad arguments are refused") {
  Case c(10, 10, 1, 1, KernelKind::Gaussian, MaskKind::None, 1, 3);
  std::vector<float> out(10);
  Fit f{c.problem, Estimator::LocalLinear};
  f.problem.kernel.kind = KernelKind::Softmax;
  CHECK(local_fit(f, {Matrix{out.data(), 10, 1, 1}}).status == Status::BadArgument);
  f = Fit{c.problem, Estimator(7)};
  CHECK(local_fit(f, {Matrix{out.data(), 10, 1, 1}}).status == Status::BadArgument);
  std::vector<float> bad(10, 1.0f);
  bad[3] = -1.0f;
  f = Fit{c.problem, Estimator::LocalLinear, bad.data()};
  CHECK(local_fit(f, {Matrix{out.data(), 10, 1, 1}}).status == Status::BadArgument);
  bad[3] = std::nanf("");
  CHECK(local_fit(f, {Matrix{out.data(), 10, 1, 1}}).status == Status::BadArgument);
}

TEST_CASE("summarize_fit: the trace, tr(LᵀL) and residual variance of the smoother matrix") {
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    Case c(90, 90, 1, 1, KernelKind::Gaussian, MaskKind::None, 1, 5);
    c.problem.queries = c.problem.keys;
    FitSummary s;
    REQUIRE(summarize_fit({c.problem, est}, &s).status == Status::Ok);
    double trace = 0, trace_sq = 0, rss = 0;
    for (int64_t i = 0; i < 90; ++i) {
      const auto ell = reference::local_weights(c.problem, i, est == Estimator::LocalLinear ? 1 : 0, {}).ell;
      double fit = 0;
      for (int64_t j = 0; j < 90; ++j) {
        fit += ell[size_t(j)] * c.v[size_t(j)];
        trace_sq += ell[size_t(j)] * ell[size_t(j)];
      }
      trace += ell[size_t(i)];
      rss += std::pow(c.v[size_t(i)] - fit, 2);
    }
    CHECK(s.trace == doctest::Approx(trace).epsilon(1e-4));
    CHECK(s.trace_sq == doctest::Approx(trace_sq).epsilon(1e-4));
    CHECK(s.rss == doctest::Approx(rss).epsilon(1e-4));
    CHECK(s.sigma2 == doctest::Approx(rss / (90 - 2 * trace + trace_sq)).epsilon(1e-4));
    const double want_aicc = std::log(rss / 90) + (1 + trace / 90) / (1 - (trace + 2) / 90);
    CHECK(aicc(s, 1) == doctest::Approx(want_aicc).epsilon(1e-4));
  }
}

TEST_CASE("sorted keys and small bandwidths: skipped tiles change nothing beyond float32 rounding") {
  // With keys in order, most tiles lie far beyond a query's kernel and are skipped; the rows must still equal the
  // reference, including queries between tiles, at the ends, and with leave-one-out.
  const int64_t n = 1500;
  std::vector<float> x(n), y(n);
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (auto& v : x) v = u(rng);
  std::sort(x.begin(), x.end());
  for (int64_t i = 0; i < n; ++i) y[size_t(i)] = std::sin(20 * x[size_t(i)]) + 0.1f * u(rng);
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Laplacian, KernelKind::Epanechnikov})
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
      const float h = 0.004f;
      Problem p;
      p.queries = p.keys = {x.data(), n, 1, 1};
      p.values = {y.data(), n, 1, 1};
      p.kernel = {kind, 1.0, &h};
      p.masks.leave_one_out = true;
      std::vector<float> out(n);
      REQUIRE(local_fit({p, est}, {Matrix{out.data(), n, 1, 1}}).status == Status::Ok);
      for (int64_t i = 0; i < n; i += 37) {
        const auto ref = reference::local_weights(p, i, est == Estimator::LocalLinear ? 1 : 0, {});
        CAPTURE(int(kind));
        CAPTURE(int(est));
        CAPTURE(i);
        if (ref.ell.empty()) {
          CHECK(std::isnan(out[size_t(i)]));
          continue;
        }
        double want = 0, spread = 0;
        for (int64_t j = 0; j < n; ++j) {
          want += ref.ell[size_t(j)] * y[size_t(j)];
          spread += std::fabs(ref.ell[size_t(j)] * y[size_t(j)]);
        }
        CHECK(std::fabs(out[size_t(i)] - want) <= (ref.conditioning > 0.1 ? 1e-4 : 1e-2) * (spread + 1e-2));
      }
    }
}

TEST_CASE("queries in any order over sorted keys: the bytes of the same queries in order; Error names the first") {
  // local_fit takes such queries in the order of their first coordinate (a block then reads the key tiles in reach of
  // its neighbouring queries, not of queries spread over the sample) and writes each row in its own place.
  const int64_t n = 1500, I = 400;
  std::vector<float> x(n), y(n), sorted_q(I);
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (auto& v : x) v = u(rng);
  std::sort(x.begin(), x.end());
  for (int64_t i = 0; i < n; ++i) y[size_t(i)] = std::sin(20 * x[size_t(i)]) + 0.1f * u(rng);
  for (int64_t i = 0; i < I; ++i) sorted_q[size_t(i)] = -0.02f + 1.04f * float(i) / float(I - 1);
  std::vector<int64_t> perm(I);
  for (int64_t i = 0; i < I; ++i) perm[size_t(i)] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  std::vector<float> q(I);
  for (int64_t i = 0; i < I; ++i) q[size_t(i)] = sorted_q[size_t(perm[size_t(i)])];
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Epanechnikov})
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
      for (const int32_t threads : {1, 3}) {
        const float h = 0.01f;
        Problem p;
        p.keys = {x.data(), n, 1, 1};
        p.values = {y.data(), n, 1, 1};
        p.kernel = {kind, 1.0, &h};
        p.threads = threads;
        p.queries = {sorted_q.data(), I, 1, 1};
        Outputs in_order(I, 1), shuffled(I, 1);
        REQUIRE(local_fit({p, est}, in_order.view(I, 1, false)).status == Status::Ok);
        p.queries = {q.data(), I, 1, 1};
        REQUIRE(local_fit({p, est}, shuffled.view(I, 1, false)).status == Status::Ok);
        CAPTURE(int(kind));
        CAPTURE(int(est));
        CAPTURE(threads);
        for (int64_t i = 0; i < I; ++i) {
          const size_t at = size_t(i), from = size_t(perm[at]);
          CHECK(std::memcmp(&shuffled.mean[at], &in_order.mean[from], sizeof(float)) == 0);
          CHECK(std::memcmp(&shuffled.sum_sq[at], &in_order.sum_sq[from], sizeof(double)) == 0);
          CHECK(std::memcmp(&shuffled.logden[at], &in_order.logden[from], sizeof(double)) == 0);
        }
        if (kind != KernelKind::Epanechnikov) continue;
        // Two queries out of every key's reach: row 37 beyond the right end, row 100 left of the left end (taken
        // first in the order of the first coordinate). The error names row 37, as queries in their own order meet it.
        std::vector<float> empty_rows = q;  // the others inside the sample, where 1,500 keys leave no gap of h
        for (auto& v : empty_rows) v = std::clamp(v, x.front(), x.back());
        empty_rows[37] = 2.0f;
        empty_rows[100] = -1.0f;
        p.queries = {empty_rows.data(), I, 1, 1};
        p.empty = EmptyPolicy::Error;
        const Result r = local_fit({p, est}, shuffled.view(I, 1, false));
        CHECK(r.status == Status::EmptyRow);
        CHECK(r.row == 37);
      }
}

TEST_CASE("3-D local-linear: one value column gives the bytes of that column fitted beside another") {
  // One column takes the single-pass accumulation (accumulate_linear_3d), two the general one: the same sums, term by
  // term, so the same bytes, with and without Σw² (standard errors), observation weights and leave-one-out; and the
  // float64 definition to float32 accuracy.
  const int64_t n = 700, dims = 3;
  std::mt19937 rng(41);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n * dims)), y(static_cast<size_t>(n)), y2(static_cast<size_t>(2 * n));
  for (auto& v : x) v = u(rng);
  for (int64_t i = 0; i < n; ++i) {
    y[size_t(i)] = std::sin(6 * x[size_t(3 * i)]) + x[size_t(3 * i + 1)] + 0.2f * u(rng);
    y2[size_t(2 * i)] = y[size_t(i)];
    y2[size_t(2 * i + 1)] = 2 * y[size_t(i)] + 1;
  }
  const std::vector<float> omega = random_weights(n, 5);
  const float h[3] = {0.15f, 0.2f, 0.25f};
  for (const bool weighted : {false, true})
    for (const bool held_out : {false, true})
      for (const bool squares : {false, true}) {
        CAPTURE(weighted);
        CAPTURE(held_out);
        CAPTURE(squares);
        Problem p;
        p.queries = p.keys = {x.data(), n, dims, dims};
        p.kernel = {KernelKind::Gaussian, 1.0, h};
        p.masks.leave_one_out = held_out;
        Outputs one(n, 1), two(n, 2);
        FitOut one_out = one.view(n, 1, false), two_out = two.view(n, 2, false);
        if (!squares)
          one_out.sum_sq_weights = two_out.sum_sq_weights = one_out.effective_keys = two_out.effective_keys = nullptr;
        p.values = {y.data(), n, 1, 1};
        REQUIRE(local_fit({p, Estimator::LocalLinear, weighted ? omega.data() : nullptr}, one_out).status ==
                Status::Ok);
        p.values = {y2.data(), n, 2, 2};
        REQUIRE(local_fit({p, Estimator::LocalLinear, weighted ? omega.data() : nullptr}, two_out).status ==
                Status::Ok);
        for (int64_t i = 0; i < n; ++i) {
          CAPTURE(i);
          CHECK(std::memcmp(&one.mean[size_t(i)], &two.mean[size_t(2 * i)], sizeof(float)) == 0);
          CHECK(std::memcmp(&one.logden[size_t(i)], &two.logden[size_t(i)], sizeof(double)) == 0);
          if (squares) CHECK(std::memcmp(&one.sum_sq[size_t(i)], &two.sum_sq[size_t(i)], sizeof(double)) == 0);
        }
        p.values = {y.data(), n, 1, 1};
        for (int64_t i = 0; i < n; i += 50) {
          const auto ref = reference::local_weights(p, i, 1, weighted ? omega : std::vector<float>{});
          double want = 0;
          for (int64_t j = 0; j < n; ++j) want += ref.ell[size_t(j)] * double(y[size_t(j)]);
          CHECK(std::fabs(double(one.mean[size_t(i)]) - want) < 2e-4);
        }
      }
}

TEST_CASE("a zero-weight key next to the query does not set the shift") {
  // Without the rule, the zero-weight key's score would be the row's maximum and the real keys, 17 bandwidths away
  // (2^-200 relative weight), would underflow to 0: an empty row instead of about the nearest real key's value.
  std::vector<float> x = {0.0f, 0.83f, 0.9f}, y = {100.0f, 1.0f, 3.0f}, q = {0.0f}, omega = {0.0f, 1.0f, 1.0f};
  const float h = 0.05f;
  Problem p;
  p.queries = {q.data(), 1, 1, 1};
  p.keys = {x.data(), 3, 1, 1};
  p.values = {y.data(), 3, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, &h};
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    float out = 0;
    REQUIRE(local_fit({p, est, omega.data()}, {Matrix{&out, 1, 1, 1}}).status == Status::Ok);
    CHECK(out == doctest::Approx(1.0f).epsilon(1e-3));
  }
}
