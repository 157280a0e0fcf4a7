// Blocked CV on the grid (GridCv with exclude, cv_band.h) against a float64 loop over every key with the band left
// out, Nadaraya–Watson and local-linear, several bandwidths, weights and two value columns.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "methods/grid/grid.h"
#include "methods/plan.h"
#include "stats/bandwidth.h"

using namespace ka;

namespace {

// Σ_i ω_i Σ_c (y_ic − f_i,c)² / Σ ω_i, f_i the Gaussian fit at x_i (degree 0 or 1) from the keys j with
// |x_j − x_i| > r, in float64 straight from the definition; +inf where a held-out design is singular.
double blocked_cv_loop(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& w,
                       int64_t width, double h, double r, bool linear) {
  const size_t n = x.size();
  double sum = 0, total = 0;
  for (size_t i = 0; i < n; ++i) {
    total += w[i];
    if (!(w[i] > 0)) continue;
    for (int64_t c = 0; c < width; ++c) {
      double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
      for (size_t j = 0; j < n; ++j) {
        const double d = double(x[j]) - double(x[i]);
        if (std::fabs(d) <= r) continue;
        const double k = w[j] * std::exp(-0.5 * (d / h) * (d / h)), v = y[j * size_t(width) + size_t(c)];
        s0 += k;
        s1 += k * d;
        s2 += k * d * d;
        t0 += k * v;
        t1 += k * d * v;
      }
      const double det = s0 * s2 - s1 * s1;
      if (!(s0 > 0) || (linear && !(det > 0))) return HUGE_VAL;
      const double f = linear ? (s2 * t0 - s1 * t1) / det : t0 / s0;
      sum += w[i] * std::pow(double(y[i * size_t(width) + size_t(c)]) - f, 2);
    }
  }
  return sum / total;
}

}  // namespace

TEST_CASE("blocked CV on the grid (GridCv, exclude r) follows a float64 loop with the band left out") {
  const int64_t n = 3000;
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(0.0f, 1.0f), weight(0.5f, 1.5f);
  std::normal_distribution<float> noise(0.0f, 0.2f);
  std::vector<float> x(n), y(2 * n), w(n), ones(n, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = u(rng);
    y[size_t(2 * i)] = std::sin(6.2831853f * x[size_t(i)]) + noise(rng);
    y[size_t(2 * i + 1)] = std::cos(3.0f * x[size_t(i)]) + noise(rng);
    w[size_t(i)] = i % 40 == 3 ? 0.0f : weight(rng);  // some points do not count
  }
  const float h0 = 1.0f;
  for (const int64_t width : {1, 2}) {
    std::vector<float> values(y);
    if (width == 1)
      for (int64_t i = 0; i < n; ++i) values[size_t(i)] = y[size_t(2 * i)];
    Problem p;
    p.keys = p.queries = {x.data(), n, 1, 1};
    p.values = {values.data(), n, width, width};
    p.kernel = {KernelKind::Gaussian, 1.0, &h0};
    for (const bool weighted : {false, true})
      for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
        for (const double r : {5.0 / n, 0.01}) {
          const std::vector<float>& omega = weighted ? w : ones;
          GridCv grid({p, est, weighted ? w.data() : nullptr}, 1e-3, r);
          REQUIRE(grid.suits());
          for (const double h : {0.02, 0.05, 0.1, 0.3}) {
            double score = 0, standalone = 0;
            bool served = false;
            REQUIRE(grid.score(float(h), &score, &served).status == Status::Ok);
            CAPTURE(width);
            CAPTURE(weighted);
            CAPTURE(int(est));
            CAPTURE(r);
            CAPTURE(h);
            CHECK(served);  // uniform x, h at least 2r: every point keeps most of its weight
            const double loop =
                blocked_cv_loop(x, values, omega, width, double(float(h)), r, est == Estimator::LocalLinear);
            CHECK(score == doctest::Approx(loop).epsilon(3e-3));
            // Nearer the blocked loop than the leave-one-out score (r = 0) is: the band is really left out.
            const double loo =
                blocked_cv_loop(x, values, omega, width, double(float(h)), 0, est == Estimator::LocalLinear);
            if (r >= 0.01 && h <= 0.05) CHECK(std::fabs(score - loop) < 0.1 * std::fabs(loop - loo));
            // cv_score with a grid asked for and the same radius takes the same grid.
            Criterion c{est, Score::LeaveOneOut, weighted ? w.data() : nullptr, 1e-3};
            c.exclude = r;
            REQUIRE(cv_score(p, &h, &standalone, c).status == Status::Ok);
            CHECK(standalone == score);
          }
        }
  }
}

TEST_CASE("blocked CV on the grid declines a bandwidth whose band leaves a point too little weight") {
  // Epanechnikov of reach h = 0.004 with every point within 0.01 left out: no point keeps a neighbour, so the grid
  // declines and cv_score runs exactly (+inf: no held-out point has a neighbour).
  const int64_t n = 30000;
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = u(rng);
    y[size_t(i)] = x[size_t(i)] * x[size_t(i)];
  }
  const float h0 = 1.0f;
  Problem p;
  p.keys = p.queries = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Epanechnikov, 1.0, &h0};
  GridCv grid({p, Estimator::NadarayaWatson, nullptr}, 1e-3, 0.01);
  double score = 0;
  bool served = true;
  const float h = 0.004f;
  REQUIRE(grid.serves(h));
  REQUIRE(grid.score(h, &score, &served).status == Status::Ok);
  CHECK(!served);
  Criterion c{Estimator::NadarayaWatson, Score::LeaveOneOut, nullptr, 1e-3};
  c.exclude = 0.01;
  const double hd = h;
  REQUIRE(cv_score(p, &hd, &score, c).status == Status::Ok);
  CHECK(std::isinf(score));
}
