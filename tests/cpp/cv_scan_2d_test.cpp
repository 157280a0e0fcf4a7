// The 2-D scan of a CV search: the singular probe skips only points whose exact local-linear score is +inf, and the
// search still returns the minimum of a fine exact scan.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "methods/grid/grid.h"
#include "methods/plan.h"
#include "stats/bandwidth.h"
#include "stats/regression.h"
#include "reference.h"
#include "stats/cv_planar.h"
#include "stats/cv_scan_bound.h"
#include "stats/cv_search_parts.h"

using namespace ka;

namespace {

// n points uniform on [0, 1]² (sorted by x₁ with `sort`), y = sin 6x₁ + cos 4x₂ + noise.
struct Planar {
  std::vector<float> x, y;
  Problem p;
  Planar(int64_t n, uint32_t seed, bool sort, float noise = 0.3f) : x(size_t(2 * n)), y(size_t(n)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> z(0.0f, 1.0f);
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      a[size_t(i)] = u(rng);
      b[size_t(i)] = u(rng);
    }
    std::vector<size_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), size_t(0));
    if (sort) std::sort(order.begin(), order.end(), [&](size_t i, size_t j) { return a[i] < a[j]; });
    for (int64_t i = 0; i < n; ++i) {
      x[size_t(2 * i)] = a[order[size_t(i)]];
      x[size_t(2 * i + 1)] = b[order[size_t(i)]];
      y[size_t(i)] = std::sin(6 * x[size_t(2 * i)]) + std::cos(4 * x[size_t(2 * i + 1)]) + noise * z(rng);
    }
    p.queries = p.keys = {x.data(), n, 2, 2};
    p.values = {y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  }
};

// The fine exact scan: 24 points a decade of the common scale h = scale·start, from `from` up to 4 times the range;
// its smallest score and how many of its points scored +inf.
struct FineScan {
  double best = HUGE_VAL;
  int infinite = 0;
};
FineScan fine_scan(const Problem& p, const Criterion& c, const double* start, double from) {
  FineScan scan;
  for (double scale = from; scale * std::min(start[0], start[1]) < 4; scale *= std::pow(10.0, 1.0 / 24)) {
    const double g[2] = {scale * start[0], scale * start[1]};
    double cv = 0;
    REQUIRE(cv_score(p, g, &cv, c).status == Status::Ok);
    scan.best = std::min(scan.best, cv);
    scan.infinite += std::isinf(cv);
  }
  return scan;
}

}  // namespace

TEST_CASE("in 2-D the singular probe shows local-linear CV +inf only where the exact score is +inf") {
  const int64_t n = 2000;
  const Planar s(n, 5, true);
  Criterion ll;
  ll.estimator = Estimator::LocalLinear;
  const double start[2] = {1.0, 0.8};  // units that differ per axis, as a search's start does
  const SingularProbe probe(s.p, ll, start);
  REQUIRE(probe.active());
  int shown = 0, finite = 0;
  // From far below the spacing (1/√n ≈ 0.022) to above it.
  for (double scale = 2e-4; scale < 0.05; scale *= 1.3) {
    const double h[2] = {scale * start[0], scale * start[1]};
    const float hf[2] = {float(h[0]), float(h[1])};
    double cv = 0;
    REQUIRE(cv_score(s.p, h, &cv, ll).status == Status::Ok);
    CAPTURE(scale);
    if (probe.singular(hf)) {
      ++shown;
      CHECK(std::isinf(cv));
    } else if (std::isfinite(cv)) {
      ++finite;
    }
  }
  CHECK(shown >= 5);   // the premise: below the spacing the probe finds a singular design
  CHECK(finite >= 3);  // and above it, finite scores it does not claim
  CHECK(!SingularProbe(s.p, Criterion{}, start).active());  // Nadaraya–Watson has no singular design
  CHECK(!SingularProbe(s.p, ll).active());                  // 2-D needs the search's units
  const Planar unsorted(n, 5, false);
  CHECK(!SingularProbe(unsorted.p, ll, start).active());  // the keys must be sorted by x₁ (keys_in_reach)
}

TEST_CASE("a 2-D local-linear search returns no worse than the minimum of a fine exact scan") {
  // 2,500 points: an exact search screens its scan on the 2-D grid (kPlanarScreenTolerance) and refines exactly.
  const int64_t n = 2500;
  const Planar s(n, 8, false);  // unsorted: the search sorts its own copy
  Criterion c;
  c.estimator = Estimator::LocalLinear;
  double h[2] = {0, 0}, score = 0;
  REQUIRE(rule_of_thumb(s.p.keys, Rule::Scott, h) == Status::Ok);
  const double start[2] = {h[0], h[1]};
  // The fine exact scan from far below the spacing.
  const auto [best, infinite] = fine_scan(s.p, c, start, 1e-3);
  REQUIRE(infinite > 0);  // the premise: the scan has points the probe can skip
  std::vector<double> bw(512), scores(256);
  CvCurve curve{bw.data(), scores.data(), 256, 0};
  REQUIRE(select_cv(s.p, false, h, &score, &curve, c).status == Status::Ok);
  CHECK(std::isfinite(score));
  CHECK(score <= best * (1 + 1e-6));
  int evaluated_infinite = 0;
  for (int32_t k = 0; k < curve.count; ++k) evaluated_infinite += std::isinf(scores[size_t(k)]);
  CHECK(evaluated_infinite < infinite);  // the probe left out points that would have scored +inf
}

TEST_CASE("a 2-D Nadaraya-Watson search screened on the grid returns the minimum of a fine exact scan") {
  // 3,000 points: the bounded scan's upper points are scored on the 2-D grid (kPlanarScreenTolerance), its bounds
  // compared with the screened best plus its margin, and Brent's points are exact.
  const int64_t n = 3000;
  const Planar s(n, 19, false);
  Criterion c;
  c.estimator = Estimator::NadarayaWatson;
  double h[2] = {0, 0}, score = 0;
  REQUIRE(rule_of_thumb(s.p.keys, Rule::Scott, h) == Status::Ok);
  const double start[2] = {h[0], h[1]};
  const double best = fine_scan(s.p, c, start, 0.05).best;
  std::vector<double> bw(512), scores(256);
  CvCurve curve{bw.data(), scores.data(), 256, 0};
  REQUIRE(select_cv(s.p, false, h, &score, &curve, c).status == Status::Ok);
  double exact = 0;
  REQUIRE(cv_score(s.p, h, &exact, c).status == Status::Ok);
  CHECK(score == exact);  // the score returned is the exact one at h
  CHECK(score <= best * (1 + 1e-6));
  // The premise: some scan point was scored on the grid (its curve score differs from the exact one).
  int screened = 0;
  for (int32_t k = 0; k < curve.count; ++k) {
    double cv = 0;
    REQUIRE(cv_score(s.p, bw.data() + 2 * k, &cv, c).status == Status::Ok);
    screened += cv != scores[size_t(k)];
  }
  CHECK(screened > 0);
}

TEST_CASE("2-D leave-one-out CV on the sample in cells matches the float64 loop") {
  // 2,000 points (above the float64 criterion's 500), bandwidths whose reach along x₁ holds more than an eighth of
  // the sample: the float32 pass runs on the cells (cv_planar.h), both estimators.
  const int64_t n = 2000;
  const Planar s(n, 13, false);
  Problem loo = s.p;
  loo.masks.leave_one_out = true;
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    for (const double scale : {0.02, 0.045, 0.1}) {
      const double h[2] = {scale, 1.3 * scale};
      const float hf[2] = {float(h[0]), float(h[1])};
      loo.kernel.bandwidth = hf;
      double want = 0;
      for (int64_t i = 0; i < n; ++i) {
        const reference::LocalWeights lw = reference::local_weights(loo, i, est == Estimator::LocalLinear ? 1 : 0, {});
        REQUIRE(!lw.ell.empty());
        double fit = 0;
        for (int64_t j = 0; j < n; ++j) fit += lw.ell[size_t(j)] * double(s.y[size_t(j)]);
        const double e = double(s.y[size_t(i)]) - fit;
        want += e * e / double(n);
      }
      Criterion c;
      c.estimator = est;
      double got = 0;
      REQUIRE(cv_score(s.p, h, &got, c).status == Status::Ok);
      CAPTURE(int(est));
      CAPTURE(scale);
      CHECK(got == doctest::Approx(want).epsilon(1e-5));
    }
  }
}

namespace {

// The textbook held-out fit at point i of a 2-D sample (bandwidths h, observation weights ω or none), in double:
// weights shifted by the largest, the 1 × 1 (degree 0) or 3 × 3 (degree 1) moments and their Cholesky solve without
// any guard. NaN where a pivot after the first is at or below 1e-10 of its diagonal (kSingularDesign).
double textbook_fit(const std::vector<float>& x, const std::vector<float>& y, int64_t i, const double* h,
                    const std::vector<float>& omega, int degree) {
  const int64_t n = int64_t(y.size()), p = degree == 0 ? 1 : 3;
  const auto u = [&](int64_t j, int d) { return (double(x[size_t(2 * j + d)]) - double(x[size_t(2 * i + d)])) / h[d]; };
  const auto omega_of = [&](int64_t j) { return omega.empty() ? 1.0 : double(omega[size_t(j)]); };
  double top = -HUGE_VAL, a[9] = {}, t[3] = {};
  for (int64_t j = 0; j < n; ++j)
    if (j != i && omega_of(j) > 0) top = std::max(top, -(u(j, 0) * u(j, 0) + u(j, 1) * u(j, 1)) / 2);
  for (int64_t j = 0; j < n; ++j) {
    if (j == i || !(omega_of(j) > 0)) continue;
    const double w = omega_of(j) * std::exp(-(u(j, 0) * u(j, 0) + u(j, 1) * u(j, 1)) / 2 - top);
    const double z[3] = {1, u(j, 0), u(j, 1)};
    for (int r = 0; r < p; ++r) {
      for (int c = 0; c < p; ++c) a[r * p + c] += w * z[r] * z[c];
      t[r] += w * z[r] * double(y[size_t(j)]);
    }
  }
  double l[9] = {}, v[3], g[3];
  for (int c = 0; c < p; ++c) {
    double pivot = a[c * p + c];
    for (int k = 0; k < c; ++k) pivot -= l[c * p + k] * l[c * p + k];
    if (!(pivot > (c ? 1e-10 * a[c * p + c] : 0.0))) return std::nan("");
    l[c * p + c] = std::sqrt(pivot);
    for (int r = c + 1; r < p; ++r) {
      double s = a[r * p + c];
      for (int k = 0; k < c; ++k) s -= l[r * p + k] * l[c * p + k];
      l[r * p + c] = s / l[c * p + c];
    }
  }
  for (int r = 0; r < p; ++r) {  // L v = t, Lᵀ g = v: the fit is g[0]
    v[r] = t[r];
    for (int k = 0; k < r; ++k) v[r] -= l[r * p + k] * v[k];
    v[r] /= l[r * p + r];
  }
  for (int r = p - 1; r >= 0; --r) {
    g[r] = v[r];
    for (int k = r + 1; k < p; ++k) g[r] -= l[k * p + r] * g[k];
    g[r] /= l[r * p + r];
  }
  return g[0];
}

}  // namespace

TEST_CASE("2-D leave-one-out CV on the cells matches the textbook loop with far points and observation weights") {
  // The held-out pass on the cells (PlanarSample::held_out_fit) weighs keys absolutely, 2^−c·r²: points 0.6 beyond
  // the unit square are 12 bandwidths from every other key, their largest weight below 2^−96, and are solved in
  // double; observation weights spread over four decades, some zero (no weight, and not counted).
  const int64_t n = 1500;
  Planar s(n, 29, false);
  const float far[4][2] = {{1.6f, 0.5f}, {-0.6f, 0.2f}, {0.4f, 1.65f}, {1.7f, 1.7f}};
  for (int k = 0; k < 4; ++k) {
    s.x[size_t(2 * (10 * k + 3))] = far[k][0];
    s.x[size_t(2 * (10 * k + 3) + 1)] = far[k][1];
  }
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> decades(-2.0f, 2.0f);
  std::vector<float> omega(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) omega[size_t(i)] = i % 97 == 5 ? 0.0f : std::pow(10.0f, decades(rng));
  int finite = 0;
  for (const bool weighted : {false, true}) {
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
      for (const double scale : {0.02, 0.05}) {
        const double h[2] = {scale, 1.1 * scale};
        double want = 0, total = 0;
        for (int64_t i = 0; i < n; ++i) {
          const double w = weighted ? double(omega[size_t(i)]) : 1.0;
          if (!(w > 0)) continue;
          const double e =
              double(s.y[size_t(i)]) - textbook_fit(s.x, s.y, i, h, weighted ? omega : std::vector<float>{},
                                                    est == Estimator::LocalLinear ? 1 : 0);
          want += w * e * e;
          total += w;
        }
        want = std::isnan(want) ? HUGE_VAL : want / total;
        Criterion c;
        c.estimator = est;
        if (weighted) c.observation_weights = omega.data();
        double got = 0;
        REQUIRE(cv_score(s.p, h, &got, c).status == Status::Ok);
        CAPTURE(weighted);
        CAPTURE(int(est));
        CAPTURE(scale);
        if (std::isinf(want)) {
          CHECK(std::isinf(got));
        } else {
          ++finite;
          CHECK(got == doctest::Approx(want).epsilon(1e-5));
        }
      }
    }
  }
  CHECK(finite >= 6);
}

TEST_CASE(
    "a 2-D leave-one-out score on the grid takes out each point's own share as binned: few neighbours, clusters") {
  // Eight tight clusters along a line (a sample as correlated predictors give it), bandwidths at which a held-out point
  // has one to a few neighbours within a bandwidth: there the point's own weight, spread over four nodes by binning and
  // read back by the same shares, is not K(0) = 1 (own_terms, grid/query.h); subtracting 1 had left the difference in
  // every held-out fit. Against the textbook float64 loop, over the rows the grid's guard leaves alone; at 0.006 a
  // point has about two neighbours within a bandwidth, and its near-singular design amplifies its neighbours' binning
  // too.
  const int64_t n = 3000;
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> cluster(0, 7);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(2 * n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int c = cluster(rng);
    x[size_t(2 * i)] = 0.1f * float(c) + 0.02f * z(rng);
    x[size_t(2 * i + 1)] = 0.05f * float(c) + 0.02f * z(rng);
    y[size_t(i)] = std::sin(6 * x[size_t(2 * i)]) + std::cos(4 * x[size_t(2 * i + 1)]) + 0.3f * z(rng);
  }
  float lo[2] = {x[0], x[1]}, hi[2] = {x[0], x[1]};
  for (int64_t i = 0; i < n; ++i)
    for (int d = 0; d < 2; ++d) {
      lo[d] = std::min(lo[d], x[size_t(2 * i + d)]);
      hi[d] = std::max(hi[d], x[size_t(2 * i + d)]);
    }
  Problem loo;
  loo.queries = loo.keys = {x.data(), n, 2, 2};
  loo.values = {y.data(), n, 1, 1};
  loo.masks.leave_one_out = true;
  loo.empty = EmptyPolicy::NaN;
  for (const double scale : {0.006, 0.01, 0.016}) {
    const double h[2] = {scale, scale};
    const float hf[2] = {float(scale), float(scale)};
    loo.kernel = {KernelKind::Gaussian, 1.0, hf};
    std::vector<double> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[size_t(i)] = textbook_fit(x, y, i, h, {}, 1);
    for (const double t : {8e-3, 3.2e-2}) {
      const int64_t nodes = std::max(grid_nodes(double(hi[0]) - lo[0], scale, t, int64_t(1) << 20),
                                     grid_nodes(double(hi[1]) - lo[1], scale, t, int64_t(1) << 20));
      REQUIRE(nodes > 0);
      std::vector<float> fit(static_cast<size_t>(n));
      std::vector<uint8_t> guarded(static_cast<size_t>(n));
      FitOut out{Matrix{fit.data(), n, 1, 1}};
      out.guarded = guarded.data();
      REQUIRE(grid_local_fit(Fit{loo, Estimator::LocalLinear}, nodes, out).status == Status::Ok);
      double grid = 0, exact = 0;
      int64_t rows = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (guarded[size_t(i)] || !std::isfinite(want[size_t(i)]) || !std::isfinite(fit[size_t(i)])) continue;
        const double yi = double(y[size_t(i)]), g = yi - double(fit[size_t(i)]), e = yi - want[size_t(i)];
        grid += g * g;
        exact += e * e;
        ++rows;
      }
      CAPTURE(scale);
      CAPTURE(t);
      CAPTURE(rows);
      CAPTURE((grid - exact) / exact / t);
      CHECK(rows > n * 9 / 10);
      // Measured: 2.6 and 1.3 times t at 0.006 (with K(0): 26 and 100), 0.27 and 0.20 at 0.01 (1.7 and 0.97).
      CHECK(std::fabs(grid - exact) <= (scale < 0.008 ? 4 : 0.5) * t * exact);
    }
  }
}

TEST_CASE("the 2-D screen's grid scores lie within the screen's margin of the exact scores") {
  // What the 2-D screen's brackets rest on (cv_search_parts.h): a scan point scored on the 2-D grid at
  // kPlanarScreenTolerance differs from its exact score by less than screen_margin, 2·√(s·W)·e + W·e² with
  // e = 5e-5·range(y) (kScreenFitError), at every bandwidth the grid serves.
  const int64_t n = 3000;
  const Planar s(n, 21, false);
  const auto [low, high] = std::minmax_element(s.y.begin(), s.y.end());
  const double e = 5e-5 * (double(*high) - double(*low));
  Criterion exact, grid;
  exact.estimator = grid.estimator = Estimator::LocalLinear;
  grid.grid_tolerance = kPlanarScreenTolerance;
  int served = 0;
  for (double h = 0.02; h < 5; h *= 1.5) {
    const double hh[2] = {h, 0.9 * h};
    double a = 0, b = 0;
    REQUIRE(cv_score(s.p, hh, &a, exact).status == Status::Ok);
    REQUIRE(cv_score(s.p, hh, &b, grid).status == Status::Ok);
    CAPTURE(h);
    CHECK(std::fabs(a - b) <= 2 * std::sqrt(a) * e + e * e);
    served += a != b;  // the grid scored it (an exact score is the same bytes)
  }
  CHECK(served >= 4);
}

TEST_CASE("2-D local-linear CV near the spacing matches the textbook float64 loop") {
  // Where held-out designs are nearly singular the guard acts and the score re-solves those rows by the textbook
  // solve on the cells (PlanarSample::textbook_row); +inf where one is singular (pivot <= 1e-10 of its diagonal).
  const int64_t n = 2000;
  const Planar s(n, 17, false);
  int finite = 0, infinite = 0;
  for (const double scale : {0.003, 0.004, 0.006, 0.008, 0.012}) {
    const double h[2] = {scale, 1.2 * scale};
    double want = 0;
    for (int64_t i = 0; i < n && std::isfinite(want); ++i) {
      double a[9] = {}, t[3] = {}, top = -HUGE_VAL;
      const auto u = [&](int64_t j, int d) {
        return (double(s.x[size_t(2 * j + d)]) - double(s.x[size_t(2 * i + d)])) / h[d];
      };
      for (int64_t j = 0; j < n; ++j)
        if (j != i) top = std::max(top, -(u(j, 0) * u(j, 0) + u(j, 1) * u(j, 1)) / 2);
      for (int64_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double w = std::exp(-(u(j, 0) * u(j, 0) + u(j, 1) * u(j, 1)) / 2 - top), z[3] = {1, u(j, 0), u(j, 1)};
        for (int r = 0; r < 3; ++r) {
          for (int c = 0; c < 3; ++c) a[r * 3 + c] += w * z[r] * z[c];
          t[r] += w * z[r] * double(s.y[size_t(j)]);
        }
      }
      // Cholesky, refusing a pivot after the first at or below 1e-10 of its diagonal (kSingularDesign).
      double l[9] = {};
      bool singular = false;
      for (int c = 0; c < 3 && !singular; ++c) {
        double pivot = a[c * 3 + c];
        for (int k = 0; k < c; ++k) pivot -= l[c * 3 + k] * l[c * 3 + k];
        singular = !(pivot > (c ? 1e-10 * a[c * 3 + c] : 0.0));
        if (singular) break;
        l[c * 3 + c] = std::sqrt(pivot);
        for (int r = c + 1; r < 3; ++r) {
          double v = a[r * 3 + c];
          for (int k = 0; k < c; ++k) v -= l[r * 3 + k] * l[c * 3 + k];
          l[r * 3 + c] = v / l[c * 3 + c];
        }
      }
      if (singular) {
        want = HUGE_VAL;
        break;
      }
      double v[3], g[3];  // L v = t, Lᵀ g = v; the fit at x_i is g[0]
      for (int r = 0; r < 3; ++r) {
        v[r] = t[r];
        for (int k = 0; k < r; ++k) v[r] -= l[r * 3 + k] * v[k];
        v[r] /= l[r * 3 + r];
      }
      for (int r = 2; r >= 0; --r) {
        g[r] = v[r];
        for (int k = r + 1; k < 3; ++k) g[r] -= l[k * 3 + r] * g[k];
        g[r] /= l[r * 3 + r];
      }
      const double e = double(s.y[size_t(i)]) - g[0];
      want += e * e / double(n);
    }
    Criterion c;
    c.estimator = Estimator::LocalLinear;
    double got = 0;
    REQUIRE(cv_score(s.p, h, &got, c).status == Status::Ok);
    CAPTURE(scale);
    if (std::isinf(want)) {
      ++infinite;
      CHECK(std::isinf(got));
    } else {
      ++finite;
      CHECK(got == doctest::Approx(want).epsilon(1e-5));
    }
  }
  CHECK(finite >= 2);
}

TEST_CASE("a 2-D fit's summary on the sample in cells matches the float64 loop") {
  // summarize_fit of 1,500 points (2-D exact, float32): rss, trace Σℓ_i(x_i) and Σ_i Σ_j ℓ_j(x_i)² against the
  // smoother's weights in float64, both estimators, unsorted x.
  const int64_t n = 1500;
  const Planar s(n, 29, false);
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    const float hf[2] = {0.05f, 0.07f};
    Problem p = s.p;
    p.kernel.bandwidth = hf;
    double rss = 0, trace = 0, trace_sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      const reference::LocalWeights lw = reference::local_weights(p, i, est == Estimator::LocalLinear ? 1 : 0, {});
      REQUIRE(!lw.ell.empty());
      double fit = 0;
      for (int64_t j = 0; j < n; ++j) {
        fit += lw.ell[size_t(j)] * double(s.y[size_t(j)]);
        trace_sq += lw.ell[size_t(j)] * lw.ell[size_t(j)];
      }
      trace += lw.ell[size_t(i)];
      rss += (double(s.y[size_t(i)]) - fit) * (double(s.y[size_t(i)]) - fit);
    }
    FitSummary got;
    REQUIRE(summarize_fit(Fit{p, est}, &got).status == Status::Ok);
    CAPTURE(int(est));
    CHECK(got.rss == doctest::Approx(rss).epsilon(1e-5));
    CHECK(got.trace == doctest::Approx(trace).epsilon(1e-5));
    CHECK(got.trace_sq == doctest::Approx(trace_sq).epsilon(1e-5));
  }
}

TEST_CASE("the singular probe's spreads D3² − D1² match every pair's distances") {
  // planar_spreads (cv_scan_bound.h) buckets the points on cells and falls back to a sweep along x₁ where they crowd
  // a few cells: uniform points, a far outlier (the sweep), points on a line (no area), ties on a lattice, a thin
  // strip.
  const double start[2] = {0.1, 0.07};
  for (int shape = 0; shape < 5; ++shape) {
    const int64_t n = 3000;
    Planar s(n, uint32_t(40 + shape), true);
    std::vector<float>& x = s.x;
    for (int64_t i = 0; i < n; ++i) {
      float& b = x[size_t(2 * i + 1)];
      if (shape == 2) b = 0.5f;
      if (shape == 3) b = std::round(b * 20) / 20;
      if (shape == 4) b *= 1e-3f;
    }
    if (shape == 1) x[size_t(2 * (n - 1))] = 1e6f;  // the last in x₁ order stays last
    std::vector<double> got(static_cast<size_t>(n)), want(static_cast<size_t>(n)), third(static_cast<size_t>(n));
    REQUIRE(planar_spreads(s.p.keys, start, got.data()));
    for (int64_t k = 0; k < n; ++k) {
      double d[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL};
      for (int64_t j = 0; j < n; ++j) {
        if (j == k) continue;
        const double u = (double(x[size_t(2 * j)]) - double(x[size_t(2 * k)])) * (1 / start[0]);
        const double v = (double(x[size_t(2 * j + 1)]) - double(x[size_t(2 * k + 1)])) * (1 / start[1]);
        const double dd = u * u + v * v;
        if (dd < d[2]) d[2] = dd;
        std::sort(d, d + 3);
      }
      want[size_t(k)] = d[2] - d[0];
      third[size_t(k)] = d[2];
    }
    CAPTURE(shape);
    int64_t differ = 0;
    for (int64_t k = 0; k < n; ++k)
      differ += !(std::fabs(got[size_t(k)] - want[size_t(k)]) <= 1e-14 * third[size_t(k)]);
    CHECK(differ == 0);
  }
}

TEST_CASE("a 2-D search on the grid scores its scan points below the grid's reach on coarser grids, never kept") {
  // 10⁵ points: the grid at 1e-3 (at most 512² nodes) serves h from about 0.018; below, scan points where a coarser
  // grid (up to 2^kCoarseScanSteps times the tolerance) costs less than the exact score run there, and their scores
  // lie within coarse_margin of the exact ones. Past the minimum, points are screened first on a grid up to
  // kScreenScanCoarser times coarser than their own, and left at that score where it, less its margin, lies above the
  // best: their exact scores lie above the search's. The search's score is one of its evaluations at its own tolerance
  // (to the rounding of the bins' order), and no coarse point is its best.
  const int64_t n = 100000;
  const Planar s(n, 12, false);
  Criterion c;
  c.estimator = Estimator::LocalLinear;
  c.grid_tolerance = 1e-3;
  double h[2] = {0, 0}, score = 0;
  REQUIRE(rule_of_thumb(s.p.keys, Rule::Scott, h) == Status::Ok);
  std::vector<double> bw(512), scores(256);
  CvCurve curve{bw.data(), scores.data(), 256, 0};
  REQUIRE(select_cv(s.p, false, h, &score, &curve, c).status == Status::Ok);
  int coarse = 0, screened = 0;
  double best_coarse = HUGE_VAL;
  for (int32_t k = 0; k < curve.count; ++k) {
    const double* g = bw.data() + 2 * k;
    const float hf[2] = {float(g[0]), float(g[1])};
    const double own = plan_scan_tolerance(s.p.keys, KernelKind::Gaussian, c.estimator, hf, 1e-3, kCoarseScanSteps,
                                           kCoarsestScanTolerance);
    if (!(own > 0)) continue;
    // The tolerance its score ran at: its own, or a screen's (scored on the grid in cells by the search, by cv_score
    // alone in the sample's order: the same to the rounding of the bins' order).
    Criterion at = c;
    double t = 0, on_grid = 0;
    for (double f = 1; f <= kScreenScanCoarser && !(t > 0); f *= 2) {
      at.grid_tolerance = std::min(kCoarsestScanTolerance, f * own);
      if (f > 1 && !(at.grid_tolerance > own)) break;
      REQUIRE(cv_score(s.p, g, &on_grid, at).status == Status::Ok);
      if (scores[size_t(k)] == doctest::Approx(on_grid).epsilon(1e-13)) t = at.grid_tolerance;
    }
    CAPTURE(g[0]);
    CAPTURE(own);
    REQUIRE(t > 0);
    if (!(t > 1e-3)) continue;
    ++coarse;
    Criterion exact = c;
    exact.grid_tolerance = 0;
    double exactly = 0;
    REQUIRE(cv_score(s.p, g, &exactly, exact).status == Status::Ok);
    CAPTURE(t);
    CHECK(on_grid != exactly);
    // Above the exact score by at most coarse_margin (cv_search_parts.h), which makes the grid's score less the margin
    // a lower bound; below it by about 0.4·t·s/m (measured): m points a bandwidth square (the sample spans about the
    // unit square).
    const double m = double(n) * g[0] * g[1];
    CHECK(on_grid - exactly <= t * exactly * (kCoarseMarginFloor + kCoarseMarginPerPoint / m));
    CHECK(exactly - on_grid <= t * exactly * (0.1 + 0.5 / m));
    if (t > own) {
      ++screened;
      CHECK(exactly > score);
    }
    best_coarse = std::min(best_coarse, on_grid);
  }
  CHECK(coarse >= 2);
  CHECK(screened >= 2);
  CHECK(score < best_coarse);
  double at_h = 0;
  REQUIRE(cv_score(s.p, h, &at_h, c).status == Status::Ok);
  CHECK(score == doctest::Approx(at_h).epsilon(1e-13));
}

TEST_CASE("the scan's extrapolation of 2-D CV past its minimum follows sigma^2 + B h^4 + C / h^2") {
  // Scores of that shape exactly: the next one down is recovered to rounding; a parabola through the three would not.
  const double r = 1.4559;  // a scan step
  const auto cv = [](double t) { return 0.09 + 0.002 * t * t * t * t + 0.0004 / (t * t); };
  for (const double top : {2.0, 1.0, 0.5, 0.3}) {
    const double s1 = cv(top), s2 = cv(top * r), s3 = cv(top * r * r), want = cv(top / r);
    CAPTURE(top);
    CHECK(cv_search::cv_extrapolated(s1, s2, s3, r) == doctest::Approx(want).epsilon(1e-12));
  }
}

TEST_CASE("a 2-D search refines a further bracket only where its scan point, scored again, is not above the best") {
  // Eight clusters along a line (correlated predictors), 10⁴ points, grid tolerance 1e-3: the box's density is a
  // tenth of the clusters', so a coarse scan point's margin keeps a second bracket open below the minimum. Its point is
  // scored again at the search's tolerance (after the scan, the only scan point evaluated again), above the best the
  // first bracket found, and nothing more is evaluated within its bracket: Brent's method had crept from there to the
  // first bracket's end in eleven more scores.
  const int64_t n = 10000;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(2 * n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int c = int(8 * u(rng));
    const float a = 0.1f * float(c) + 0.01f * z(rng), b = 0.05f * float(c) + 0.01f * z(rng);
    x[size_t(2 * i)] = a;
    x[size_t(2 * i + 1)] = b;
    y[size_t(i)] = std::sin(6 * a) + std::cos(4 * b) + 0.3f * z(rng);
  }
  Problem p;
  p.queries = p.keys = {x.data(), n, 2, 2};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  Criterion c;
  c.estimator = Estimator::LocalLinear;
  c.grid_tolerance = 1e-3;
  double h[2] = {0, 0}, score = 0;
  REQUIRE(rule_of_thumb(p.keys, Rule::Scott, h) == Status::Ok);
  std::vector<double> bw(1024), scores(512);
  CvCurve curve{bw.data(), scores.data(), 512, 0};
  REQUIRE(select_cv(p, false, h, &score, &curve, c).status == Status::Ok);
  const double ratio = bw[0] / bw[2];  // the scan's step: its first two points, descending
  // The scan: its points descending, each evaluated once or (screened: kScreenScanCoarser) twice in a row.
  int32_t scanned = 1;
  while (scanned < curve.count && bw[size_t(2 * scanned)] <= bw[size_t(2 * (scanned - 1))]) ++scanned;
  int rescored = 0;
  for (int32_t k = scanned; k < curve.count; ++k)
    for (int32_t j = 0; j < scanned; ++j) {
      if (bw[size_t(2 * k)] != bw[size_t(2 * j)]) continue;
      ++rescored;
      CAPTURE(bw[size_t(2 * k)]);
      CHECK(scores[size_t(k)] > score);
      for (int32_t later = k + 1; later < curve.count; ++later) {
        const double g = bw[size_t(2 * later)];
        CHECK_FALSE((g > bw[size_t(2 * k)] / ratio && g < bw[size_t(2 * k)] * ratio));
      }
    }
  CHECK(rescored == 1);
  double at_h = 0;
  REQUIRE(cv_score(p, h, &at_h, c).status == Status::Ok);
  CHECK(score == doctest::Approx(at_h).epsilon(1e-13));
}

TEST_CASE("the 2-D band screen's lower difference lies below the exact difference of CV") {
  // kPlanarScreenMinPoints uniform points sorted by x₁, local-linear: noisy, where CV rises as h falls below its
  // minimum (the screen shows it), and without noise, where it falls (the screen must not show it rising).
  const int64_t n = kPlanarScreenMinPoints;
  for (const float noise : {0.3f, 0.0f}) {
    const Planar s(n, 31, true, noise);
    const PlanarSample cells(s.p, nullptr);
    REQUIRE(cells.ok());
    Criterion c{Estimator::LocalLinear}, exact = c;
    c.grid_tolerance = 1e-3;
    exact.grid_tolerance = 0;
    BandScreen screen(s.p, c, &cells);
    REQUIRE(screen.active());
    const float reference[2] = {0.012f, 0.012f};
    REQUIRE(screen.set_reference(reference));
    const double ref[2] = {reference[0], reference[1]};
    double at_reference = 0;
    REQUIRE(cv_score(s.p, ref, &at_reference, exact).status == Status::Ok);
    for (const float h : {0.008f, 0.005f, 0.003f}) {
      const float hf[2] = {h, h};
      const double hd[2] = {h, h};
      double at_h = 0;
      REQUIRE(cv_score(s.p, hd, &at_h, exact).status == Status::Ok);
      const double lower = screen.lower_difference(hf), difference = at_h - at_reference;
      CAPTURE(noise);
      CAPTURE(h);
      CAPTURE(difference);
      CHECK(lower <= difference);
      if (noise > 0 && h < 0.006f) CHECK(lower > 0);  // the screen shows the rise: the search skips such points
      if (noise == 0) CHECK(lower < 0);               // CV falls: the screen must not skip
    }
  }
}
