// The exact band's float32 windowed CV (cpp/core/stats/cv_band_window.h) against a float64 loop over every key: the
// textbook leave-one-out criterion of the Gaussian Nadaraya–Watson and local-linear estimators, +inf where a held-out
// local-linear design is singular.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "stats/bandwidth.h"
#include "methods/plan.h"
#include "stats/cv_band_window.h"

using namespace ka;

namespace {

// Row i's held-out squared residual by a float64 loop over every key: weights exp(−(d² − d1²)/2h²) (d1 the nearest
// key's distance, so that no row underflows), Σw, Σw·u, Σw·u², Σw·y, Σw·u·y with u = d/h, the 2 × 2 solve; +inf where
// the slope pivot is at most 1e-10 of its diagonal (the singular design of local_solve.h).
double float64_residual(const std::vector<float>& x, const std::vector<float>& y, double h, bool linear, size_t i) {
  const size_t n = x.size();
  double d1 = std::numeric_limits<double>::infinity();
  for (size_t j = 0; j < n; ++j)
    if (j != i) d1 = std::min(d1, std::fabs(double(x[j]) - double(x[i])));
  double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
  for (size_t j = 0; j < n; ++j) {
    if (j == i) continue;
    const double d = double(x[j]) - double(x[i]), u = d / h;
    const double w = std::exp(-(d * d - d1 * d1) / (2 * h * h));
    s0 += w;
    s1 += w * u;
    s2 += w * u * u;
    t0 += w * double(y[j]);
    t1 += w * u * double(y[j]);
  }
  double fit = t0 / s0;
  if (linear) {
    const double pivot = s2 - s1 * s1 / s0;
    if (!(pivot > 1e-10 * s2)) return std::numeric_limits<double>::infinity();
    fit = t0 / s0 + s1 / s0 * (s1 / s0 * t0 - t1) / pivot;
  }
  const double e = double(y[i]) - fit;
  return e * e;
}

// CV by the float64 loop.
double float64_cv(const std::vector<float>& x, const std::vector<float>& y, double h, bool linear) {
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) sum += float64_residual(x, y, h, linear, i);
  return sum / double(x.size());
}

struct Sample {
  std::vector<float> x, y;
  float h = 1;
  Problem p;
  // n points sorted by x: uniform on [0, 1] with, when `gaps`, a tenth of them moved to isolated points beyond 1 (rows
  // five spacings from each other, rows far from every key) and pairs of tied x; y = sin 6x + 0.3·N(0, 1).
  Sample(int64_t n, uint32_t seed, bool gaps) : x(size_t(n)), y(size_t(n)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> z(0.0f, 1.0f);
    for (auto& v : x) v = u(rng);
    if (gaps)
      for (int64_t k = 0; k < n / 10; ++k) x[size_t(k)] = k % 2 ? x[size_t(k + n / 2)] : 1.0f + 0.002f * float(k);
    std::sort(x.begin(), x.end());
    for (size_t i = 0; i < x.size(); ++i) y[i] = std::sin(6 * x[i]) + 0.3f * z(rng);
    p.queries = p.keys = {x.data(), n, 1, 1};
    p.values = {y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, &h};
    p.masks.leave_one_out = true;
  }
};

}  // namespace

TEST_CASE("the band's float32 windowed CV is the float64 textbook criterion") {
  for (const bool gaps : {false, true}) {
    Sample s(2500, 7, gaps);
    for (const Estimator estimator : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
      const bool linear = estimator == Estimator::LocalLinear;
      int finite = 0;
      for (const double spacings : {0.6, 1.3, 3.0, 7.0, 20.0, 60.0}) {
        s.h = float(spacings / 2500);
        double score = 0;
        REQUIRE(bandwidth_detail::band_window_cv(s.p, estimator, &score));
        const double expected = float64_cv(s.x, s.y, double(s.h), linear);
        CAPTURE(gaps);
        CAPTURE(linear);
        CAPTURE(spacings);
        if (std::isinf(expected)) {
          CHECK(std::isinf(score));
        } else {
          ++finite;
          CHECK(std::fabs(score - expected) <= 2e-6 * expected);
        }
      }
      CHECK(finite >= 3);  // the premise: the comparison is of numbers, not only of +inf
    }
  }
}

TEST_CASE("the band's residuals of a subsample of rows are the float64 textbook residuals") {
  for (const bool gaps : {false, true}) {
    Sample s(2500, 13, gaps);
    std::vector<int64_t> rows;
    for (int64_t i = 0; i < 2500; i += 7) rows.push_back(i);
    rows.push_back(2499);  // the last row: keys on one side only
    std::vector<double> out(rows.size());
    for (const Estimator estimator : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
      const bool linear = estimator == Estimator::LocalLinear;
      for (const double spacings : {0.03, 1.3, 7.0, 60.0}) {
        s.h = float(spacings / 2500);
        REQUIRE(bandwidth_detail::band_window_residuals(s.p, estimator, rows.data(), int64_t(rows.size()), out.data()));
        int singular = 0;
        for (size_t r = 0; r < rows.size(); ++r) {
          const double expected = float64_residual(s.x, s.y, double(s.h), linear, size_t(rows[r]));
          CAPTURE(gaps);
          CAPTURE(linear);
          CAPTURE(spacings);
          CAPTURE(rows[r]);
          if (std::isinf(expected)) {
            ++singular;
            CHECK(std::isinf(out[r]));
          } else {
            // Float32 weights: a residual near 0 keeps the fit's absolute error, and a design near the guard's pivot
            // floor (kPivotFloor) multiplies it.
            CHECK(std::fabs(out[r] - expected) <= 1e-4 * (expected + 1e-2));
          }
        }
        if (linear && spacings < 0.1) CHECK(singular > 0);  // the premise: some design is singular there
      }
    }
  }
}

TEST_CASE("the band's windowed CV gives +inf where a held-out local-linear design is singular") {
  Sample s(2500, 11, false);
  s.h = float(0.03 / 2500);  // a thirtieth of the spacing: some row sees one key only
  double score = 0;
  REQUIRE(bandwidth_detail::band_window_cv(s.p, Estimator::LocalLinear, &score));
  CHECK(std::isinf(float64_cv(s.x, s.y, double(s.h), true)));
  CHECK(std::isinf(score));
  REQUIRE(bandwidth_detail::band_window_cv(s.p, Estimator::NadarayaWatson, &score));
  CHECK(std::isfinite(score));
}

TEST_CASE("the band's windowed CV declines what it does not compute") {
  Sample s(100, 5, false);
  s.h = 0.05f;
  double score = -1;
  Problem p = s.p;
  p.kernel.kind = KernelKind::Epanechnikov;
  CHECK(!bandwidth_detail::band_window_cv(p, Estimator::LocalLinear, &score));
  CHECK(!bandwidth_detail::band_window_cv(s.p, Estimator::LocalQuadratic, &score));
  p = s.p;
  p.masks.leave_one_out = false;
  CHECK(!bandwidth_detail::band_window_cv(p, Estimator::LocalLinear, &score));
  std::vector<float> unsorted = s.x;
  std::swap(unsorted[3], unsorted[70]);
  p = s.p;
  p.queries = p.keys = {unsorted.data(), 100, 1, 1};
  CHECK(!bandwidth_detail::band_window_cv(p, Estimator::LocalLinear, &score));
  CHECK(score == -1);
}

TEST_CASE("a clustered sample's band bandwidths run on the grid where its keys in reach cost more") {
  // 10⁵ points, half of them in N(0.2, 0.001²): at h = 8.5e-5 the band's rows there have about 5,000 keys in reach,
  // where a uniform spread over the range would give 160; the plan counts the sample's own.
  const int64_t n = 100000;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = i % 2 ? 0.2f + 0.001f * z(rng) : 0.8f + 0.05f * z(rng);
    y[size_t(i)] = std::sin(6 * x[size_t(i)]) + 0.3f * z(rng);
  }
  const float h0 = 1;
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, &h0};
  Criterion c{Estimator::LocalLinear};
  c.grid_tolerance = 1e-3;
  bandwidth_detail::SearchSample sample;
  const float h = 8.5e-5f;
  bool uniform = false, counted = true;
  REQUIRE(bandwidth_detail::band_window_plan(sample, p, c, h, &uniform, false).status == Status::Ok);
  REQUIRE(bandwidth_detail::band_window_plan(sample, p, c, h, &counted).status == Status::Ok);
  CHECK(uniform);   // the uniform estimate takes the band
  CHECK(!counted);  // the sample's own count gives it to the grid
  // A uniform sample's count agrees with the estimate: the band keeps its bandwidths.
  for (auto& v : x) v = u(rng);
  bandwidth_detail::SearchSample again;
  REQUIRE(bandwidth_detail::band_window_plan(again, p, c, 3e-5f, &counted).status == Status::Ok);
  CHECK(counted);
}
