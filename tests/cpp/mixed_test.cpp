// Mixed regression (stats/mixed.h, stats/categories.h) against float64 loops written here: the discrete kernels'
// definitions, fits with product weights (Nadaraya–Watson; local-linear and local-quadratic in the continuous columns
// only), Σℓ², the smoother's diagonal, slopes, leave-one-out CV, AICc's trace, and the joint search against a
// brute-force scan; the plan.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "methods/plan.h"
#include "stats/categories.h"
#include "stats/mixed.h"

using namespace ka;

namespace {

// A sample with `dims` continuous columns (zeros when dims is 0: the stand-in the API uses) and discrete columns of
// the given levels; y depends on both.
struct Sample {
  int64_t n, dims, width = 1;
  std::vector<float> x, y, weights;
  std::vector<int32_t> codes, levels;
  std::vector<DiscreteKernel> kernels;
  Sample(int64_t n_, int64_t dims_, std::vector<int32_t> levels_, std::vector<DiscreteKernel> kernels_, uint32_t seed)
      : n(n_), dims(std::max<int64_t>(dims_, 1)), levels(levels_), kernels(kernels_) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::uniform_real_distribution<float> unit(0.2f, 2.0f);
    const int32_t q = int32_t(levels.size());
    x.assign(size_t(n * dims), 0.0f);
    codes.resize(size_t(n * q));
    for (int64_t i = 0; i < n; ++i) {
      double v = 0;
      for (int64_t d = 0; d < dims_; ++d) {
        x[size_t(i * dims + d)] = normal(rng);
        v += std::sin(1.3 * x[size_t(i * dims + d)]) * (d + 1);
      }
      for (int32_t d = 0; d < q; ++d) {
        codes[size_t(i * q + d)] = int32_t(rng() % uint32_t(levels[size_t(d)]));
        v += 0.7 * codes[size_t(i * q + d)] * (d % 2 ? -1 : 1);
      }
      y.push_back(float(v + 0.2 * normal(rng)));
      weights.push_back(unit(rng));
    }
  }
  int32_t count() const { return int32_t(levels.size()); }
};

// The float64 weight of key j for query (q, codes qc): Gaussian product over the continuous columns times the discrete
// factors (written from their definitions) times ω_j.
double weight(const Sample& s, const float* q, const int32_t* qc, int64_t j, const std::vector<double>& h,
              const std::vector<double>& lambda, bool with_weights) {
  double w = with_weights ? s.weights[size_t(j)] : 1.0;
  for (int64_t d = 0; d < s.dims; ++d) {
    const double u = (double(q[d]) - double(s.x[size_t(j * s.dims + d)])) / h[size_t(d)];
    w *= std::exp(-0.5 * u * u);
  }
  for (int32_t d = 0; d < s.count(); ++d) {
    const int32_t a = qc[d], b = s.codes[size_t(j * s.count() + d)], c = s.levels[size_t(d)];
    const double l = lambda[size_t(d)];
    const int distance = std::abs(a - b);
    double f = 1;
    if (c > 1) {
      if (s.kernels[size_t(d)] == DiscreteKernel::AitchisonAitken) f = a == b ? 1 - l : l / (c - 1);
      if (s.kernels[size_t(d)] == DiscreteKernel::WangVanRyzin)
        f = a == b ? 1 - l : 0.5 * (1 - l) * std::pow(l, distance);
      if (s.kernels[size_t(d)] == DiscreteKernel::LiRacine) f = a == b ? 1 : std::pow(l, distance);
    }
    w *= f;
  }
  return w;
}

// The design row of key j at q: [1] (degree 0), [1, u] (1), [1, u, u_a·u_b for a ≤ b] (2), u = x_j − q.
std::vector<double> design(const Sample& s, const float* q, int64_t j, int degree) {
  std::vector<double> z{1.0}, u;
  for (int64_t d = 0; d < s.dims && degree > 0; ++d) u.push_back(double(s.x[size_t(j * s.dims + d)]) - q[d]);
  z.insert(z.end(), u.begin(), u.end());
  for (size_t a = 0; a < u.size() && degree > 1; ++a)
    for (size_t b = a; b < u.size(); ++b) z.push_back(u[a] * u[b]);
  return z;
}

// ℓ_j(q) of the fit at query (q, qc), skipping key `skip` (−1: none): WLS of y on design(degree); `row` 1 … dims gives
// the weights of the slope along that column instead of the intercept.
std::vector<double> equivalent_kernel(const Sample& s, const float* q, const int32_t* qc, int degree, int64_t skip,
                                      const std::vector<double>& h, const std::vector<double>& lambda, bool weighted,
                                      int64_t row = 0) {
  const int64_t p = int64_t(design(s, q, 0, degree).size());
  std::vector<double> a(size_t(p * p)), w(size_t(s.n)), z;
  for (int64_t j = 0; j < s.n; ++j) {
    if (j == skip) continue;
    w[size_t(j)] = weight(s, q, qc, j, h, lambda, weighted);
    z = design(s, q, j, degree);
    for (int64_t r = 0; r < p; ++r)
      for (int64_t k = 0; k < p; ++k) a[size_t(r * p + k)] += w[size_t(j)] * z[size_t(r)] * z[size_t(k)];
  }
  // e₁ᵀ A⁻¹ by Gauss–Jordan on [A | I] (A symmetric positive definite: no pivoting).
  std::vector<double> inv(size_t(p * p));
  for (int64_t r = 0; r < p; ++r) inv[size_t(r * p + r)] = 1;
  for (int64_t col = 0; col < p; ++col) {
    const double pivot = a[size_t(col * p + col)];
    for (int64_t k = 0; k < p; ++k) {
      a[size_t(col * p + k)] /= pivot;
      inv[size_t(col * p + k)] /= pivot;
    }
    for (int64_t r = 0; r < p; ++r) {
      if (r == col) continue;
      const double f = a[size_t(r * p + col)];
      for (int64_t k = 0; k < p; ++k) {
        a[size_t(r * p + k)] -= f * a[size_t(col * p + k)];
        inv[size_t(r * p + k)] -= f * inv[size_t(col * p + k)];
      }
    }
  }
  std::vector<double> ell(size_t(s.n));
  for (int64_t j = 0; j < s.n; ++j) {
    if (j == skip) continue;
    z = design(s, q, j, degree);
    double g = 0;
    for (int64_t k = 0; k < p; ++k) g += inv[size_t(row * p + k)] * z[size_t(k)];
    ell[size_t(j)] = w[size_t(j)] * g;
  }
  return ell;
}

struct Call {
  Sample& s;
  std::vector<float> h32;
  std::vector<double> lambda;
  Problem problem;
  Categories categories;
  Call(Sample& s_, const std::vector<double>& h, const std::vector<double>& lambda_)
      : s(s_), h32(h.begin(), h.end()), lambda(lambda_) {
    problem.queries = problem.keys = ConstMatrix{s.x.data(), s.n, s.dims, s.dims};
    problem.values = ConstMatrix{s.y.data(), s.n, 1, 1};
    problem.kernel = {KernelKind::Gaussian, 1.0, h32.data()};
    categories = {s.codes.data(), s.codes.data(), s.count(), s.levels.data(), s.kernels.data(), lambda.data()};
  }
};

const std::vector<DiscreteKernel> kAll = {DiscreteKernel::AitchisonAitken, DiscreteKernel::WangVanRyzin,
                                          DiscreteKernel::LiRacine};

}  // namespace

TEST_CASE("discrete kernels follow their definitions and ranges") {
  CHECK(lambda_max(DiscreteKernel::AitchisonAitken, 4) == doctest::Approx(0.75));
  CHECK(lambda_max(DiscreteKernel::WangVanRyzin, 4) == 1);
  CHECK(lambda_max(DiscreteKernel::LiRacine, 1) == 0);
  CHECK(discrete_factor(DiscreteKernel::AitchisonAitken, 4, 0.3, 2, 2) == doctest::Approx(0.7));
  CHECK(discrete_factor(DiscreteKernel::AitchisonAitken, 4, 0.3, 0, 2) == doctest::Approx(0.1));
  CHECK(discrete_factor(DiscreteKernel::WangVanRyzin, 5, 0.4, 1, 4) == doctest::Approx(0.3 * 0.064));
  CHECK(discrete_factor(DiscreteKernel::LiRacine, 5, 0.4, 3, 1) == doctest::Approx(0.16));
  CHECK(discrete_factor(DiscreteKernel::LiRacine, 5, 0.0, 3, 3) == 1);  // 0^0 = 1: the own level at λ = 0
  CHECK(discrete_factor(DiscreteKernel::WangVanRyzin, 1, 0.5, 0, 0) == 1);
}

TEST_CASE("mixed fits equal float64 loops with product weights") {
  for (const int64_t dims : {0, 1, 2}) {
    for (const int degree : {0, 1, 2}) {
      for (const bool weighted : {false, true}) {
        Sample s(67, dims, {3, 4}, {kAll[size_t(dims % 3)], kAll[size_t((dims + 1) % 3)]}, uint32_t(7 + dims));
        const std::vector<double> h(size_t(s.dims), 0.8), lambda{0.3, 0.45};
        Call call(s, h, lambda);
        const Estimator degrees[] = {Estimator::NadarayaWatson, Estimator::LocalLinear, Estimator::LocalQuadratic};
        const Fit f{call.problem, degrees[degree], weighted ? s.weights.data() : nullptr};
        std::vector<float> mean(size_t(s.n));
        std::vector<double> sum_sq(size_t(s.n)), self(size_t(s.n));
        REQUIRE(
            mixed_fit(f, call.categories, FitOut{Matrix{mean.data(), s.n, 1, 1}, sum_sq.data(), self.data()}).status ==
            Status::Ok);
        for (int64_t i = 0; i < s.n; ++i) {
          CAPTURE(dims);
          CAPTURE(degree);
          CAPTURE(weighted);
          CAPTURE(i);
          // Without continuous columns local-linear and local-quadratic are Nadaraya–Watson (the zero column has no
          // spread).
          const auto ell = equivalent_kernel(s, &s.x[size_t(i * s.dims)], &s.codes[size_t(i * s.count())],
                                             dims ? degree : 0, -1, h, lambda, weighted);
          double want = 0, squares = 0;
          for (int64_t j = 0; j < s.n; ++j) {
            want += ell[size_t(j)] * s.y[size_t(j)];
            squares += ell[size_t(j)] * ell[size_t(j)];
          }
          // The 2-D quadratic's 6-column design from float32 moments: on rows that all but interpolate (Σℓ² ≈ 1, a
          // cell's few points) the summation order (SIMD width: 4 lanes in WebAssembly, 8-16 natively) moves the fit
          // by up to about 1e-3 relative (6e-4 measured in WebAssembly at i = 11); the other designs hold 1e-5.
          const double tight = dims == 2 && degree == 2 ? 1e-3 : 1e-5;
          CHECK(mean[size_t(i)] == doctest::Approx(want).epsilon(tight));
          CHECK(sum_sq[size_t(i)] == doctest::Approx(squares).epsilon(std::max(tight, 1e-4)));
          CHECK(self[size_t(i)] == doctest::Approx(ell[size_t(i)]).epsilon(1e-4));
        }
        // The gradient along the continuous columns: the fitted slope (local_rows.h).
        if (degree > 0 && dims > 0) {
          std::vector<double> grad(size_t(s.n * s.dims));
          REQUIRE(mixed_gradient(f, call.categories, GradientOut{grad.data()}).status == Status::Ok);
          const int64_t i = 5;
          const auto beta = equivalent_kernel(s, &s.x[size_t(i * s.dims)], &s.codes[size_t(i * s.count())], degree, -1,
                                              h, lambda, weighted, 1);
          double slope = 0;
          for (int64_t j = 0; j < s.n; ++j) slope += beta[size_t(j)] * s.y[size_t(j)];
          CHECK(grad[size_t(i * s.dims)] == doctest::Approx(slope).epsilon(1e-6));
        }
      }
    }
  }
}

TEST_CASE("mixed leave-one-out CV and AICc equal float64 loops") {
  for (const int degree : {0, 1, 2}) {
    Sample s(90, 1, {3, 5}, {DiscreteKernel::AitchisonAitken, DiscreteKernel::WangVanRyzin}, 11);
    const std::vector<double> h{0.6}, lambda{0.2, 0.5};
    Call call(s, h, lambda);
    Criterion criterion;
    const Estimator degrees[] = {Estimator::NadarayaWatson, Estimator::LocalLinear, Estimator::LocalQuadratic};
    criterion.estimator = degrees[degree];
    criterion.observation_weights = s.weights.data();
    const double bw[] = {0.6, 0.2, 0.5};
    double cv = 0;
    REQUIRE(mixed_cv_score(call.problem, call.categories, bw, &cv, criterion).status == Status::Ok);
    double want = 0, total = 0, trace = 0, rss = 0;
    for (int64_t i = 0; i < s.n; ++i) {
      const auto ell = equivalent_kernel(s, &s.x[size_t(i)], &s.codes[size_t(i * 2)], degree, i, h, lambda, true);
      const auto own = equivalent_kernel(s, &s.x[size_t(i)], &s.codes[size_t(i * 2)], degree, -1, h, lambda, true);
      double fit = 0, fitted = 0;
      for (int64_t j = 0; j < s.n; ++j) {
        fit += ell[size_t(j)] * s.y[size_t(j)];
        fitted += own[size_t(j)] * s.y[size_t(j)];
      }
      want += s.weights[size_t(i)] * (s.y[size_t(i)] - fit) * (s.y[size_t(i)] - fit);
      rss += s.weights[size_t(i)] * (s.y[size_t(i)] - fitted) * (s.y[size_t(i)] - fitted);
      total += s.weights[size_t(i)];
      trace += own[size_t(i)];
    }
    CAPTURE(degree);
    // 90 points: the criterion runs in double; the key weights are float32 (6e-8 relative).
    CHECK(cv == doctest::Approx(want / total).epsilon(1e-6));
    FitSummary summary;
    const Fit f{call.problem, criterion.estimator, s.weights.data()};
    REQUIRE(mixed_summary(f, call.categories, &summary).status == Status::Ok);
    CHECK(summary.trace == doctest::Approx(trace).epsilon(1e-5));
    // AICc (regression.h): ln(rss / n) + (1 + ν/n) / (1 − (ν + 2)/n), rss with the weights normalised to sum n.
    const double n = double(s.n), aicc_want = std::log(rss / total) + (1 + trace / n) / (1 - (trace + 2) / n);
    criterion.score = Score::AICc;
    double aicc_got = 0;
    REQUIRE(mixed_cv_score(call.problem, call.categories, bw, &aicc_got, criterion).status == Status::Ok);
    CHECK(aicc_got == doctest::Approx(aicc_want).epsilon(1e-6));
  }
}

TEST_CASE("the joint search finds the minimum of a brute-force scan over (h, lambda), lambda in range") {
  for (const int degree : {0, 1}) {
    Sample s(80, 1, {4}, {DiscreteKernel::AitchisonAitken}, 5);
    Call call(s, {1.0}, {0.0});
    Criterion criterion;
    criterion.estimator = degree ? Estimator::LocalLinear : Estimator::NadarayaWatson;
    double bw[] = {0.5, 0.0}, score = 0;
    std::vector<double> curve_h(2 * 1024), curve_s(1024);
    CvCurve curve{curve_h.data(), curve_s.data(), 1024, 0};
    REQUIRE(select_mixed(call.problem, call.categories, false, bw, &score, &curve, criterion).status == Status::Ok);
    CHECK(bw[1] >= 0);
    CHECK(bw[1] <= 0.75);
    double brute = 1e300;
    for (double lh = std::log(0.02); lh < std::log(20.0); lh += 0.02)
      for (double l = 0; l <= 0.75 + 1e-12; l += 0.75 / 60) {
        const double at[] = {std::exp(lh), l};
        double v = 0;
        REQUIRE(mixed_cv_score(call.problem, call.categories, at, &v, criterion).status == Status::Ok);
        brute = std::min(brute, v);
      }
    CAPTURE(degree);
    CAPTURE(bw[0]);
    CAPTURE(bw[1]);
    CAPTURE(score);
    CAPTURE(brute);
    CHECK(score <= brute * (1 + 1e-6));
    double again = 0;
    REQUIRE(mixed_cv_score(call.problem, call.categories, bw, &again, criterion).status == Status::Ok);
    CHECK(again == score);
    // Resumed from its curve, the search retraces it and ends at the same point.
    double resumed[] = {0.5, 0.0}, score2 = 0;
    CvCurve replay{curve_h.data(), curve_s.data(), 1024, curve.count};
    REQUIRE(select_mixed(call.problem, call.categories, false, resumed, &score2, &replay, criterion).status ==
            Status::Ok);
    CHECK(resumed[0] == bw[0]);
    CHECK(resumed[1] == bw[1]);
    // In steps of 7 evaluations with one state kept across the calls (its sorted sample and grids made once), as
    // selectBandwidthAsync runs it: the same point.
    CvSearchState state;
    CvCurve steps{curve_h.data(), curve_s.data(), 1024, 0};
    double stepped[] = {0.5, 0.0}, score3 = 0;
    int32_t stop_at = 0;
    const SearchProgress every7{[](void* at, int32_t done) { return done < *static_cast<int32_t*>(at); }, &stop_at};
    Result r;
    do {
      stop_at = steps.count + 7;
      r = select_mixed(call.problem, call.categories, false, stepped, &score3, &steps, criterion, every7, &state);
    } while (r.status == Status::Cancelled);
    REQUIRE(r.status == Status::Ok);
    CHECK(stepped[0] == bw[0]);
    CHECK(stepped[1] == bw[1]);
    CHECK(score3 == score);
  }
}

TEST_CASE("mixed calls refuse what they do not serve") {
  Sample s(20, 1, {3}, {DiscreteKernel::LiRacine}, 3);
  Call call(s, {1.0}, {0.5});
  std::vector<float> mean(20);
  const FitOut out{Matrix{mean.data(), 20, 1, 1}};
  Fit f{call.problem, Estimator::NadarayaWatson};
  call.lambda[0] = 1.5;  // beyond the range
  CHECK(mixed_fit(f, call.categories, out).status == Status::BadArgument);
  call.lambda[0] = 0.5;
  s.codes[3] = 3;  // a level beyond the column's levels
  CHECK(mixed_fit(f, call.categories, out).status == Status::BadArgument);
  s.codes[3] = 2;
  f.problem.masks.causal = true;
  CHECK(mixed_fit(f, call.categories, out).status == Status::BadArgument);
  f.problem.masks.causal = false;
  CHECK(mixed_fit(f, call.categories, out).status == Status::Ok);
}

TEST_CASE("plan: discrete columns beside two continuous ones run exactly; the grid and the sparse method refuse them") {
  PlanCall call;
  call.task = Task::Regression;
  call.kernel = KernelKind::Gaussian;
  call.queries = call.keys = 50000;
  call.dims = 2;  // one continuous column: the grid serves it (grid_mixed_test.cpp)
  call.discrete = true;
  const Plan automatic = plan(call, Method::Auto, 0);
  CHECK(automatic.method == Method::Exact);
  CHECK(std::string(automatic.reason).find("discrete columns") != std::string::npos);
  for (const Method m : {Method::Grid, Method::Sparse}) {
    call.estimator = Estimator::NadarayaWatson;
    CHECK(plan(call, m, 0).refused == PlanField::Discrete);
  }
  call.discrete = false;
  CHECK(plan(call, Method::Auto, 0).method == Method::Grid);  // the same call without them: the grid pays
}
