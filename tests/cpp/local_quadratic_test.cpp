// Local-quadratic (degree 2) against a float64 weighted-least-squares loop written here: the normal equations of the
// design [1, x − q, products of the offsets] with the kernel weights computed in double, solved by Gaussian
// elimination with partial pivoting. Every path of the fit: the float32 SIMD pass (local_fit), the double rows
// (mean_double, per-query scales), the derivative (local_gradient), the textbook row (exact_local_row), leave-one-out
// CV and the fit summary; Gaussian and compact kernels, 1-D and 2-D, ties, a query near a sparse edge; the guard on
// a design too thin for a parabola; and the plan, which runs degree 2 exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/local_fit.h"
#include "engine/local_rows.h"
#include "engine/local_solve.h"
#include "methods/plan.h"
#include "stats/bandwidth.h"
#include "stats/regression.h"

using namespace ka;

namespace {

// One sample: n points x (n × dims, row-major), one value column y, float32 as the engine stores them.
struct Sample {
  int64_t n, dims;
  std::vector<float> x, y;
};

double kernel_weight(KernelKind kind, const float* q, const float* k, const float* h, int64_t dims) {
  double w = 1, sq = 0;
  for (int64_t d = 0; d < dims; ++d) {
    const double u = (double(q[d]) - double(k[d])) / double(h[d]), a = std::fabs(u);
    sq += u * u;
    if (kind == KernelKind::Epanechnikov) w *= a < 1 ? 1 - u * u : 0;
    if (kind == KernelKind::Tricube) w *= a < 1 ? std::pow(1 - a * a * a, 3) : 0;
  }
  return kind == KernelKind::Gaussian ? std::exp(-sq / 2) : w;
}

// The textbook fit at q: β = (XᵀWX)⁻¹ XᵀW y with X's rows [1, k − q, (k_a − q_a)(k_b − q_b) for a <= b] in x's units.
// beta[0] is f(q), beta[1 + d] ∂f/∂q_d; ell[j] is key j's weight in f(q) (f(q) = Σ ℓ_j y_j). `skip`: a key left out
// (leave-one-out), or −1. ok is false where the design is singular (a pivot below 1e-12 of the largest entry).
struct Textbook {
  bool ok = false;
  std::vector<double> beta, ell;
};

Textbook textbook(const Sample& s, const float* q, const float* h, KernelKind kind, int64_t skip = -1) {
  const int64_t M = s.dims, P = 1 + M + M * (M + 1) / 2, n = s.n;
  const auto row = [&](int64_t j, std::vector<double>& z) {
    const float* k = s.x.data() + j * M;
    z.assign(size_t(P), 1.0);
    int64_t c = 1 + M;
    for (int64_t a = 0; a < M; ++a) z[size_t(1 + a)] = double(k[a]) - double(q[a]);
    for (int64_t a = 0; a < M; ++a)
      for (int64_t b = a; b < M; ++b) z[size_t(c++)] = z[size_t(1 + a)] * z[size_t(1 + b)];
  };
  // [XᵀWX | XᵀW] : P × (P + n), then Gauss–Jordan: row 0 of the inverse times XᵀW is ℓ, every row times XᵀW y is β.
  const int64_t N = P + n;
  std::vector<double> A(size_t(P * N), 0.0), z;
  for (int64_t j = 0; j < n; ++j) {
    if (j == skip) continue;
    const double w = kernel_weight(kind, q, s.x.data() + j * M, h, M);
    if (!(w > 0)) continue;
    row(j, z);
    for (int64_t a = 0; a < P; ++a) {
      for (int64_t b = 0; b < P; ++b) A[size_t(a * N + b)] += w * z[size_t(a)] * z[size_t(b)];
      A[size_t(a * N + P + j)] = w * z[size_t(a)];
    }
  }
  double largest = 0;
  for (int64_t a = 0; a < P; ++a) largest = std::max(largest, std::fabs(A[size_t(a * N + a)]));
  Textbook out;
  for (int64_t c = 0; c < P; ++c) {
    int64_t best = c;
    for (int64_t r = c + 1; r < P; ++r)
      if (std::fabs(A[size_t(r * N + c)]) > std::fabs(A[size_t(best * N + c)])) best = r;
    if (!(std::fabs(A[size_t(best * N + c)]) > 1e-12 * largest)) return out;
    for (int64_t k = 0; k < N; ++k) std::swap(A[size_t(c * N + k)], A[size_t(best * N + k)]);
    const double pivot = A[size_t(c * N + c)];
    for (int64_t k = 0; k < N; ++k) A[size_t(c * N + k)] /= pivot;
    for (int64_t r = 0; r < P; ++r) {
      if (r == c) continue;
      const double f = A[size_t(r * N + c)];
      for (int64_t k = 0; k < N; ++k) A[size_t(r * N + k)] -= f * A[size_t(c * N + k)];
    }
  }
  out.ok = true;
  out.beta.assign(size_t(P), 0.0);
  out.ell.assign(size_t(n), 0.0);
  for (int64_t a = 0; a < P; ++a)
    for (int64_t j = 0; j < n; ++j) out.beta[size_t(a)] += A[size_t(a * N + P + j)] * double(s.y[size_t(j)]);
  for (int64_t j = 0; j < n; ++j) out.ell[size_t(j)] = A[size_t(P + j)];
  return out;
}

// 1-D: dense on [0, 0.8], then a sparse edge of 6 points up to 1; ties: x rounded to 1/40.
Sample sample_1d(int64_t n, bool ties, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 0.1);
  Sample s{n, 1, std::vector<float>(size_t(n)), std::vector<float>(size_t(n))};
  for (int64_t i = 0; i < n; ++i) {
    double x = i < n - 6 ? 0.8 * u(rng) : 0.8 + 0.2 * double(i - (n - 6) + 1) / 6.0;
    if (ties) x = std::round(x * 40) / 40;
    s.x[size_t(i)] = float(x);
    s.y[size_t(i)] = float(std::sin(6 * x) + 2 * x * x + noise(rng));
  }
  return s;
}

Sample sample_2d(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> noise(0, 0.1);
  Sample s{n, 2, std::vector<float>(size_t(2 * n)), std::vector<float>(size_t(n))};
  for (int64_t i = 0; i < n; ++i) {
    const double a = u(rng), b = u(rng) * (i % 10 == 0 ? 1.0 : 0.7);  // sparse above b = 0.7
    s.x[size_t(2 * i)] = float(a);
    s.x[size_t(2 * i + 1)] = float(b);
    s.y[size_t(i)] = float(std::cos(3 * a) + 2 * a * b - b * b + noise(rng));
  }
  return s;
}

Problem problem_of(const Sample& s, const std::vector<float>& q, KernelKind kind, const float* h) {
  Problem p;
  p.queries = {q.data(), int64_t(q.size()) / s.dims, s.dims, s.dims};
  p.keys = {s.x.data(), s.n, s.dims, s.dims};
  p.values = {s.y.data(), s.n, 1, 1};
  p.kernel = {kind, 1.0, h};
  return p;
}

double range_of(const std::vector<float>& y) {
  const auto [lo, hi] = std::minmax_element(y.begin(), y.end());
  return double(*hi) - double(*lo);
}

// Every output of local_fit (float32 pass and double rows) and local_gradient at the queries q (I × dims) against
// the textbook fit.
void check_fits(const Sample& s, const std::vector<float>& q, KernelKind kind, const float* h) {
  const int64_t I = int64_t(q.size()) / s.dims, M = s.dims;
  const Problem p = problem_of(s, q, kind, h);
  const Fit f{p, Estimator::LocalQuadratic};
  std::vector<float> mean(static_cast<size_t>(I)), mean_rows(static_cast<size_t>(I));
  std::vector<double> ss(static_cast<size_t>(I)), ss_rows(static_cast<size_t>(I)), mean64(static_cast<size_t>(I)),
      grad(static_cast<size_t>(I * M));
  std::vector<uint8_t> guarded(static_cast<size_t>(I));
  FitOut fast{Matrix{mean.data(), I, 1, 1}, ss.data()};
  fast.guarded = guarded.data();
  REQUIRE(local_fit(f, fast).status == Status::Ok);
  FitOut rows{Matrix{mean_rows.data(), I, 1, 1}, ss_rows.data()};
  rows.mean_double = mean64.data();
  REQUIRE(local_fit(f, rows).status == Status::Ok);
  REQUIRE(local_gradient(f, {grad.data()}).status == Status::Ok);
  const double range = range_of(s.y);
  for (int64_t i = 0; i < I; ++i) {
    const Textbook t = textbook(s, q.data() + i * M, h, kind);
    CAPTURE(i);
    REQUIRE(t.ok);
    double sum_sq = 0;
    for (double l : t.ell) sum_sq += l * l;
    CHECK(guarded[size_t(i)] == 0);
    CHECK(std::fabs(double(mean[size_t(i)]) - t.beta[0]) <= 2e-5 * range);
    CHECK(std::fabs(mean64[size_t(i)] - t.beta[0]) <= 1e-10 * range);
    CHECK(ss[size_t(i)] == doctest::Approx(sum_sq).epsilon(1e-3));
    CHECK(ss_rows[size_t(i)] == doctest::Approx(sum_sq).epsilon(1e-9));
    for (int64_t d = 0; d < M; ++d)
      CHECK(grad[size_t(i * M + d)] == doctest::Approx(t.beta[size_t(1 + d)]).epsilon(1e-8));
  }
}

}  // namespace

TEST_CASE("local-quadratic matches a float64 weighted least-squares loop (1-D and 2-D, Gaussian and compact)") {
  SUBCASE("1-D, a query near the sparse edge and one past it") {
    const Sample s = sample_1d(300, false, 3);
    std::vector<float> q = {0.0f, 0.1f, 0.4f, 0.79f, 0.9f, 0.97f, 1.0f, 1.02f};
    for (int64_t i = 0; i < s.n; i += 13) q.push_back(s.x[size_t(i)]);
    for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Epanechnikov, KernelKind::Tricube}) {
      CAPTURE(int(kind));
      const float h = kind == KernelKind::Gaussian ? 0.06f : 0.15f;
      check_fits(s, q, kind, &h);
    }
  }
  SUBCASE("1-D with ties (x on a grid of 1/40)") {
    const Sample s = sample_1d(400, true, 5);
    std::vector<float> q;
    for (int i = 0; i <= 40; ++i) q.push_back(float(i) / 40);  // on the ties, between none
    for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Tricube}) {
      CAPTURE(int(kind));
      const float h = kind == KernelKind::Gaussian ? 0.05f : 0.16f;
      check_fits(s, q, kind, &h);
    }
  }
  SUBCASE("2-D: the six-column design, queries in the sparse band") {
    const Sample s = sample_2d(500, 7);
    std::vector<float> q;
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j) {
        q.push_back(0.05f + 0.18f * float(i));
        q.push_back(0.05f + 0.18f * float(j));
      }
    for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Tricube}) {
      CAPTURE(int(kind));
      const float h[2] = {kind == KernelKind::Gaussian ? 0.12f : 0.35f, kind == KernelKind::Gaussian ? 0.15f : 0.45f};
      check_fits(s, q, kind, h);
    }
  }
}

TEST_CASE("local-quadratic: the smoother's diagonal, per-query scales, leave-one-out CV and the textbook row") {
  const Sample s = sample_1d(120, false, 9);
  const float h = 0.12f;
  const Problem p = problem_of(s, s.x, KernelKind::Gaussian, &h);
  const int64_t n = s.n;
  std::vector<float> mean(static_cast<size_t>(n));
  std::vector<double> self(static_cast<size_t>(n)), scale(size_t(n), 1.0);
  FitOut out{Matrix{mean.data(), n, 1, 1}, nullptr, self.data()};
  REQUIRE(local_fit({p, Estimator::LocalQuadratic}, out).status == Status::Ok);
  std::vector<float> mean_scaled(static_cast<size_t>(n));
  std::vector<double> self_scaled(static_cast<size_t>(n));
  Fit scaled{p, Estimator::LocalQuadratic};
  scaled.query_scale = scale.data();
  REQUIRE(local_fit(scaled, {Matrix{mean_scaled.data(), n, 1, 1}, nullptr, self_scaled.data()}).status == Status::Ok);
  double trace = 0, cv = 0;
  std::vector<double> scratch(3 * 3 + 3 + 3);
  const ExactRowScratch rows{scratch.data(), scratch.data() + 9, scratch.data() + 12};
  for (int64_t i = 0; i < n; ++i) {
    CAPTURE(i);
    const Textbook t = textbook(s, s.x.data() + i, &h, KernelKind::Gaussian);
    REQUIRE(t.ok);
    trace += t.ell[size_t(i)];
    CHECK(self[size_t(i)] == doctest::Approx(t.ell[size_t(i)]).epsilon(1e-4));
    CHECK(self_scaled[size_t(i)] == doctest::Approx(t.ell[size_t(i)]).epsilon(1e-9));
    CHECK(std::fabs(mean_scaled[size_t(i)] - mean[size_t(i)]) <= 2e-5 * range_of(s.y));
    double row_mean = 0, row_self = 0;
    REQUIRE(exact_local_row(p, 2, nullptr, i, rows, &row_mean, &row_self));
    CHECK(row_mean == doctest::Approx(t.beta[0]).epsilon(1e-10));
    CHECK(row_self == doctest::Approx(t.ell[size_t(i)]).epsilon(1e-9));
    const Textbook held = textbook(s, s.x.data() + i, &h, KernelKind::Gaussian, i);
    REQUIRE(held.ok);
    const double e = double(s.y[size_t(i)]) - held.beta[0];
    cv += e * e / double(n);
  }
  const double hd = h;
  double score = 0;
  Criterion c;
  c.estimator = Estimator::LocalQuadratic;
  REQUIRE(cv_score(p, &hd, &score, c).status == Status::Ok);
  CHECK(score == doctest::Approx(cv).epsilon(1e-9));
  FitSummary summary;
  REQUIRE(summarize_fit({p, Estimator::LocalQuadratic}, &summary, nullptr, 0, true).status == Status::Ok);
  CHECK(summary.trace == doctest::Approx(trace).epsilon(1e-9));
  CHECK(summary.guard_changed == 0);
}

TEST_CASE("local-quadratic reproduces a parabola at the edges, where local-linear is biased") {
  const int64_t n = 200;
  Sample s{n, 1, std::vector<float>(size_t(n)), std::vector<float>(size_t(n))};
  for (int64_t i = 0; i < n; ++i) {
    const double x = double(i) / double(n - 1);
    s.x[size_t(i)] = float(x);
    s.y[size_t(i)] = float(1 + 2 * x - 3 * x * x);
  }
  const float h = 0.1f;
  const Problem p = problem_of(s, s.x, KernelKind::Gaussian, &h);
  std::vector<float> lq(static_cast<size_t>(n)), ll(static_cast<size_t>(n));
  REQUIRE(local_fit({p, Estimator::LocalQuadratic}, {Matrix{lq.data(), n, 1, 1}}).status == Status::Ok);
  REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{ll.data(), n, 1, 1}}).status == Status::Ok);
  for (const int64_t i : {int64_t(0), n / 2, n - 1}) CHECK(std::fabs(lq[size_t(i)] - s.y[size_t(i)]) < 2e-5);
  CHECK(std::fabs(ll[size_t(n / 2)] - s.y[size_t(n / 2)]) > 1e-2);  // about 3h²: the curvature flattened
}

TEST_CASE("local-quadratic's guard: two distinct x in reach cannot fix a parabola") {
  // Keys at 0 (twice) and 1, far from the rest: at q = 0.5 an Epanechnikov window of 0.8 holds two distinct x, so the
  // 3 × 3 design is singular. The guard pulls the fit toward the line through them, and says so; the textbook row
  // refuses it.
  Sample s{5, 1, {0.0f, 0.0f, 1.0f, 10.0f, 11.0f}, {1.0f, 1.2f, 3.0f, 0.0f, 0.0f}};
  const std::vector<float> q = {0.5f};
  const float h = 0.8f;
  const Problem p = problem_of(s, q, KernelKind::Epanechnikov, &h);
  float mean = 0;
  double ss = 0;
  uint8_t guarded = 0;
  FitOut out{Matrix{&mean, 1, 1, 1}, &ss};
  out.guarded = &guarded;
  REQUIRE(local_fit({p, Estimator::LocalQuadratic}, out).status == Status::Ok);
  CHECK(guarded == 1);
  CHECK(mean == doctest::Approx(2.05f).epsilon(1e-3));  // the line through (0, 1.1) and (1, 3) at 0.5
  CHECK(ss > 0);
  std::vector<double> scratch(3 * 3 + 3 + 3);
  double row = 0;
  CHECK_FALSE(exact_local_row(p, 2, nullptr, 0, {scratch.data(), scratch.data() + 9, scratch.data() + 12}, &row));
  CHECK_FALSE(textbook(s, q.data(), &h, KernelKind::Epanechnikov).ok);
}

TEST_CASE("plan: local-quadratic runs exactly, the grid refused with the estimator as the reason") {
  PlanCall call;
  call.task = Task::Regression;
  call.kernel = KernelKind::Gaussian;
  call.queries = call.keys = 100000;
  call.estimator = Estimator::LocalQuadratic;
  const Plan grid = plan(call, Method::Grid, 0);
  CHECK(grid.refused == PlanField::Estimator);
  CHECK(std::string(grid.reason).find("local-quadratic") != std::string::npos);
  const Plan chosen = plan(call, Method::Auto, 0);
  CHECK(chosen.method == Method::Exact);
  CHECK(std::string(chosen.reason).find("local-quadratic") != std::string::npos);
  call.estimator = Estimator::LocalLinear;
  CHECK(plan(call, Method::Auto, 0).method == Method::Grid);
}
