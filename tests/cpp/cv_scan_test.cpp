// The 1-D scan of a large CV search (select_cv's descent): what it skips is provably not its minimum (the singular
// probe's +inf, the nearest-neighbour bound) or, on a large sample, shown not to be by the band screen's subsample;
// the search reaches the minimum of a fine exact scan.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "stats/bandwidth.h"
#include "stats/bandwidth_detail.h"
#include "stats/cv_band_screen.h"
#include "stats/cv_band_window.h"
#include "methods/grid/grid.h"
#include "stats/cv_scan_bound.h"
#include "stats/cv_scan_far.h"
#include "reference.h"

using namespace ka;

namespace {

// n points sorted by x (x uniform on [0, 1], or with a gap), y = sin(6x) + noise.
struct Sorted {
  std::vector<float> x, y;
  Problem p;
  Sorted(int64_t n, uint32_t seed, float noise) : x(size_t(n)), y(size_t(n)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> z(0.0f, 1.0f);
    for (auto& v : x) v = u(rng);
    std::sort(x.begin(), x.end());
    for (size_t i = 0; i < x.size(); ++i) y[i] = std::sin(6 * x[i]) + noise * z(rng);
    p.queries = p.keys = {x.data(), n, 1, 1};
    p.values = {y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  }
};

// A search of p from `start`, and the same search resumed in steps (a CvSearchState, stopped after each new
// evaluation): the same curve, h and score, to the byte, in as many calls as evaluations + 1. The curve's bandwidths.
std::vector<double> check_resumed(const Problem& p, const Criterion& c, double start) {
  double h = start, score = 0;
  std::vector<double> bw(256), scores(256);
  CvCurve curve{bw.data(), scores.data(), 256, 0};
  REQUIRE(select_cv(p, false, &h, &score, &curve, c).status == Status::Ok);
  double h2 = start, score2 = -1;
  std::vector<double> bw2(256), scores2(256);
  CvCurve curve2{bw2.data(), scores2.data(), 256, 0};
  CvSearchState state;
  int32_t stop_at = 0, calls = 0;
  const auto pause = [](void* ctx, int32_t e) { return e < *static_cast<int32_t*>(ctx); };
  for (Result r{Status::Cancelled}; r.status == Status::Cancelled; ++calls) {
    stop_at = curve2.count + 1;
    r = select_cv(p, false, &h2, &score2, &curve2, c, {pause, &stop_at}, &state);
    REQUIRE((r.status == Status::Ok || r.status == Status::Cancelled));
  }
  CHECK(calls == curve.count + 1);
  CHECK(curve2.count == curve.count);
  CHECK(std::equal(bw.begin(), bw.begin() + curve.count, bw2.begin()));
  CHECK(std::equal(scores.begin(), scores.begin() + curve.count, scores2.begin()));
  CHECK(h2 == h);
  CHECK(score2 == score);
  bw.resize(size_t(curve.count));
  return bw;
}

}  // namespace

TEST_CASE("the singular probe shows local-linear CV +inf only where the exact score is +inf") {
  const Sorted s(3000, 3, 0.3f);
  Criterion ll;
  ll.estimator = Estimator::LocalLinear;
  const SingularProbe probe(s.p, ll);
  REQUIRE(probe.active());
  int shown = 0;
  for (double spacings = 0.05; spacings < 50; spacings *= 1.5) {
    const double h = spacings / 3000;
    double cv = 0;
    REQUIRE(cv_score(s.p, &h, &cv, ll).status == Status::Ok);
    CAPTURE(spacings);
    const float hf = float(h);
    if (probe.singular(&hf)) {
      ++shown;
      CHECK(std::isinf(cv));
    }
  }
  CHECK(shown >= 3);                                 // the premise: below the spacing the probe finds a singular design
  CHECK(!SingularProbe(s.p, Criterion{}).active());  // Nadaraya–Watson has no singular design
  std::vector<float> w(3000, 1.0f);
  Criterion weighted = ll;
  weighted.observation_weights = w.data();
  CHECK(!SingularProbe(s.p, weighted).active());
}

TEST_CASE("the singular probe finds a held-out point whose two nearest keys are tied") {
  // 1,000 evenly spaced points, then one at 2 and two tied at 2.001: at h = 0.001 the point at 2 sees its two tied
  // keys and nothing else (the rest weigh e^-500000 of them), one value of x, a singular design. Counted by point, its
  // nearest two were at one distance (D2² − D1² = 0) and the probe never tried it.
  std::vector<float> x, y;
  for (int i = 0; i < 1000; ++i) x.push_back(float(i) / 1000);
  for (const float v : {2.0f, 2.001f, 2.001f}) x.push_back(v);
  for (size_t i = 0; i < x.size(); ++i) y.push_back(std::sin(6 * x[i]) + 0.01f * float(i % 7));
  const int64_t n = int64_t(x.size());
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  Criterion ll{Estimator::LocalLinear};
  const SingularProbe probe(p, ll);
  REQUIRE(probe.active());
  const double h = 0.001;
  const float hf = float(h);
  double cv = 0;
  REQUIRE(cv_score(p, &h, &cv, ll).status == Status::Ok);
  CHECK(std::isinf(cv));
  CHECK(probe.singular(&hf));
}

TEST_CASE("the spread probe shows CV +inf only where a held-out design is singular, in 3-D too") {
  // 300 points uniform in the unit cube, sorted by x₁; bandwidths from far below the spacing (every point's design
  // rests on its nearest key) to above it. Where the probe claims a singular design, the float64 oracle finds a
  // held-out point whose pivot ratio is below 1e-8 (kSingularDesign is 1e-10; the margin absorbs the two loops'
  // rounding) and the full score is +inf; below the spacing it does claim it.
  const int64_t n = 300, dims = 3;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::array<float, 3>> points(static_cast<size_t>(n));
  for (auto& point : points)
    for (float& v : point) v = u(rng);
  std::sort(points.begin(), points.end());
  std::vector<float> x, y;
  for (const auto& point : points) {
    x.insert(x.end(), point.begin(), point.end());
    y.push_back(std::sin(6 * point[0]) + point[1] + 0.1f * u(rng));
  }
  Problem p;
  p.queries = p.keys = {x.data(), n, dims, dims};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  int shown = 0;
  for (double h = 1e-4; h < 0.5; h *= 1.6) {
    CAPTURE(h);
    const float hs[3] = {float(h), float(h), float(h)};
    Problem loo = p;
    loo.kernel.bandwidth = hs;
    loo.masks.leave_one_out = true;
    const int claim = bandwidth_detail::spread_singular(Fit{loo, Estimator::LocalLinear}, true);
    REQUIRE(claim >= 0);
    if (!claim) continue;
    ++shown;
    double least = 1;
    for (int64_t i = 0; i < n; ++i) least = std::min(least, reference::local_weights(loo, i, 1, {}).conditioning);
    CHECK(least < 1e-8);
    const double hd[3] = {h, h, h};
    double cv = 0;
    REQUIRE(cv_score(p, hd, &cv, Criterion{Estimator::LocalLinear}).status == Status::Ok);
    CHECK(std::isinf(cv));
  }
  CHECK(shown >= 3);  // the premise: far below the spacing the probe proves +inf
  // A zero-weight point is never probed: its fit does not count.
  std::vector<float> omega(static_cast<size_t>(n), 0.0f);
  const float tiny[3] = {1e-4f, 1e-4f, 1e-4f};
  Problem loo = p;
  loo.kernel.bandwidth = tiny;
  loo.masks.leave_one_out = true;
  CHECK(bandwidth_detail::spread_singular(Fit{loo, Estimator::LocalLinear, omega.data()}, true) == 0);
  // Weights the fit refuses: no claim, and the score reports them (BadArgument), not +inf (found by fuzz_bandwidth).
  std::vector<float> bad(static_cast<size_t>(n), 1.0f);
  bad[5] = -1.0f;
  CHECK(bandwidth_detail::spread_singular(Fit{loo, Estimator::LocalLinear, bad.data()}, true) == 0);
  Criterion weighted{Estimator::LocalLinear};
  weighted.observation_weights = bad.data();
  const double tiny_h[3] = {1e-4, 1e-4, 1e-4};
  double cv = 0;
  CHECK(cv_score(p, tiny_h, &cv, weighted).status == Status::BadArgument);
}

TEST_CASE("in 1-D the nearest-neighbour bound never exceeds the CV score") {
  const Sorted s(2500, 4, 0.01f);  // little noise: the fit near the nearest neighbour is informative
  double start = 0;
  REQUIRE(rule_of_thumb(s.p.keys, Rule::Scott, &start) == Status::Ok);
  const NearestBound bound(s.p, Criterion{}, &start, 1);
  REQUIRE(bound.active());
  CHECK(!NearestBound(s.p, Criterion{}, &start).active());  // 2-D and up unless asked
  double informative = 0;
  for (double spacings = 0.05; spacings < 20; spacings *= 1.4) {
    const double h = spacings / 2500;
    double cv = 0;
    REQUIRE(cv_score(s.p, &h, &cv, Criterion{}).status == Status::Ok);
    const double lb = bound.lower_bound(h / start);
    CAPTURE(spacings);
    CHECK(lb <= cv * (1 + 1e-6));
    informative = std::max(informative, lb);
  }
  CHECK(informative > 0);
}

TEST_CASE("a large 1-D search descends its scan and returns no worse than the minimum of a fine exact scan") {
  // Screened (exact CV, 2,000 points and more) and on the search's grid (tolerance 1e-3), both estimators; x
  // unsorted (the search sorts its own copy).
  const int64_t n = 4000;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = u(rng);
  for (int64_t i = 0; i < n; ++i) y[size_t(i)] = std::sin(6 * x[size_t(i)]) + 0.3f * z(rng);
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    Criterion c;
    c.estimator = est;
    // The fine exact scan: 24 points a decade over the whole range the search scans (a quarter of the spacing up to
    // 4 times the range).
    double best = HUGE_VAL;
    for (double h = 0.25 / n; h < 4; h *= std::pow(10.0, 1.0 / 24)) {
      double cv = 0;
      REQUIRE(cv_score(p, &h, &cv, c).status == Status::Ok);
      best = std::min(best, cv);
    }
    for (const double tolerance : {0.0, 1e-3}) {
      c.grid_tolerance = tolerance;
      double h = 0, score = 0;
      REQUIRE(rule_of_thumb(p.keys, Rule::Scott, &h) == Status::Ok);
      std::vector<double> bw(256), scores(256);
      CvCurve curve{bw.data(), scores.data(), 256, 0};
      REQUIRE(select_cv(p, false, &h, &score, &curve, c).status == Status::Ok);
      CAPTURE(int(est));
      CAPTURE(tolerance);
      CHECK(curve.count > 10);
      CHECK(bw[0] > bw[1]);  // from the top down
      double exact = 0;
      REQUIRE(cv_score(p, &h, &exact, Criterion{est}).status == Status::Ok);
      // Screened: an exact evaluation; on the grid, within the grid's tolerance of one (fits off by ~1e-4 of range(y)).
      CHECK(exact <= best * (1 + (tolerance > 0 ? 1e-3 : 1e-5)));
    }
  }
}

TEST_CASE("a search resumed in steps with its CvSearchState gives the bytes of one call") {
  // Uniform x; and lognormal x with y about a line, whose scan defers its upper points (rows of the far tail the grid
  // cannot serve) and completes those that could be the best after its descent.
  const int64_t n = 3000;
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (const bool lognormal : {false, true}) {
    for (auto& v : x) v = lognormal ? std::exp(z(rng)) : u(rng);
    for (int64_t i = 0; i < n; ++i)
      y[size_t(i)] = lognormal ? 2 * x[size_t(i)] + 0.3f * z(rng) : std::cos(5 * x[size_t(i)]) + 0.2f * (u(rng) - 0.5f);
    Problem p;
    p.queries = p.keys = {x.data(), n, 1, 1};
    p.values = {y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
    for (const double tolerance : {0.0, 1e-3}) {
      Criterion c;
      c.estimator = Estimator::LocalLinear;
      c.grid_tolerance = tolerance;
      double start = 0;
      REQUIRE(rule_of_thumb(p.keys, Rule::Scott, &start) == Status::Ok);
      CAPTURE(lognormal);
      CAPTURE(tolerance);
      check_resumed(p, c, start);
    }
  }
}

TEST_CASE("a screened search resumed in steps gives the bytes of one call") {
  // kBandScreenMinPoints points: the descent's band and lowest grid points screened (each screen's reference moved to
  // the last screened point evaluated, a quarter of the rows looked at first), replayed at every step.
  const Sorted s(kBandScreenMinPoints, 29, 0.3f);
  Criterion c{Estimator::LocalLinear};
  c.grid_tolerance = 1e-3;
  double start = 0;
  REQUIRE(rule_of_thumb(s.p.keys, Rule::Scott, &start) == Status::Ok);
  const std::vector<double> bw = check_resumed(s.p, c, start);
  // The scan's points below 12 spacings (the band, where CV rises as h falls) were screened out.
  CHECK(*std::min_element(bw.begin(), bw.end()) > 12.0 / double(kBandScreenMinPoints));
}

TEST_CASE("a descent defers grid points with rows the grid cannot serve and completes those that could be best") {
  // Lognormal x (a far right tail), y about a line with noise: CV falls towards the line's, so the minimum lies among
  // the scan's upper points (from about range/4 on: 21.9 to 166 on this sample), each with tail rows the grid hands
  // to exact fits over every key; skipped, not completed, the search would stop at 14.6, 1e-4 of CV above them.
  const int64_t n = 3000;
  std::mt19937 rng(4);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = std::exp(z(rng));
    y[size_t(i)] = 2 * x[size_t(i)] + 3 * z(rng);
  }
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  Criterion c{Estimator::LocalLinear};
  c.grid_tolerance = 1e-3;
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  const double range = double(*hi) - double(*lo);
  // The premise: the grid defers the range's bandwidth, and its full score is what a search must not miss.
  GridCv grid({p, c.estimator, nullptr}, 1e-3);
  double partial = 0, full = 0;
  bool served = false, deferred = false;
  REQUIRE(grid.score(float(range), &partial, &served, nullptr, &deferred).status == Status::Ok);
  REQUIRE(served);
  CHECK(deferred);
  REQUIRE(grid.score(float(range), &full, &served).status == Status::Ok);
  CHECK(partial < full);  // the rows left out add their squares
  double h = 0, score = 0;
  REQUIRE(rule_of_thumb(p.keys, Rule::Scott, &h) == Status::Ok);
  REQUIRE(select_cv(p, false, &h, &score, nullptr, c).status == Status::Ok);
  // No upper point scores less than the search's best.
  for (double above = range / 4; above < 4 * range; above *= 1.5) {
    double v = 0;
    REQUIRE(grid.score(float(above), &v, &served).status == Status::Ok);
    CAPTURE(above);
    CHECK(score <= v * (1 + 1e-12));
  }
}

namespace {

// Nadaraya–Watson leave-one-out CV in float64, the textbook way: Σ_i Σ_col (y_i − Σ_{j≠i} w_ij y_j / Σ_{j≠i} w_ij)²/n.
double textbook_cv(const std::vector<float>& x, const std::vector<float>& y, int64_t width, double h) {
  const size_t n = x.size();
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> num(size_t(width), 0.0);
    double den = 0;
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double d = (double(x[i]) - double(x[j])) / h, w = std::exp(-d * d / 2);
      den += w;
      for (int64_t c = 0; c < width; ++c) num[size_t(c)] += w * double(y[j * size_t(width) + size_t(c)]);
    }
    for (int64_t c = 0; c < width; ++c) {
      const double e = double(y[i * size_t(width) + size_t(c)]) - num[size_t(c)] / den;
      sum += e * e;
    }
  }
  return sum / double(n);
}

}  // namespace

TEST_CASE("the expansion bound never exceeds the float64 CV and is tight at large bandwidths") {
  // Unsorted x on [2, 7] (a centre away from 0), two columns of y; then the same with one far outlier in x, whose
  // expansion needs more terms than the bound allows at the smaller bandwidths.
  const int64_t n = 700, width = 2;
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(n), y(n * width);
  for (auto& v : x) v = 2 + 5 * u(rng);
  for (int64_t i = 0; i < n; ++i) {
    y[size_t(i * width)] = std::sin(1.3f * x[size_t(i)]) + 0.3f * z(rng);
    y[size_t(i * width + 1)] = 40 + 0.2f * x[size_t(i)] * x[size_t(i)] + z(rng);
  }
  for (const bool outlier : {false, true}) {
    if (outlier) x[17] = 20;  // 13 beyond the rest: every weight of it is still a double
    Problem p;
    p.queries = p.keys = {x.data(), n, 1, 1};
    p.values = {y.data(), n, width, width};
    p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
    const ExpansionBound bound(p, Criterion{}, true);
    REQUIRE(bound.active());
    int tight = 0;
    for (double h = outlier ? 1.0 : 0.05; h < 40; h *= 1.25) {
      const double cv = textbook_cv(x, y, width, h), lb = bound.lower_bound(h);
      CAPTURE(outlier);
      CAPTURE(h);
      CHECK(lb <= cv);
      if (lb >= cv * (1 - 1e-6)) ++tight;
      if (!outlier && h >= 5.0 / 8) CHECK(lb >= cv * (1 - 1e-6));  // range/8 and up: the criterion within rounding
    }
    CHECK(tight >= (outlier ? 8 : 12));
  }
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, width, width};
  p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  CHECK(!ExpansionBound(p, Criterion{}, false).active());
  CHECK(!ExpansionBound(p, Criterion{Estimator::LocalLinear}, true).active());
  Criterion blocked;
  blocked.exclude = 0.1;
  CHECK(!ExpansionBound(p, blocked, true).active());
  std::vector<float> w(size_t(n), 1.0f);
  Criterion weighted;
  weighted.observation_weights = w.data();
  CHECK(!ExpansionBound(p, weighted, true).active());
  Problem planar = p;
  planar.queries = planar.keys = {x.data(), n / 2, 2, 2};
  planar.values = {y.data(), n / 2, 1, 1};
  CHECK(!ExpansionBound(planar, Criterion{}, true).active());
}

TEST_CASE("a 1,000-point Nadaraya–Watson search skips the start and the points above it and keeps the minimum") {
  // x uniform on [0, 1], y = sin 2πx + 0.3·N(0, 1): the minimum near h = 0.026, the start (Scott's rule) near 0.07.
  const int64_t n = 1000;
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = u(rng);
  for (int64_t i = 0; i < n; ++i) y[size_t(i)] = std::sin(6.2831853f * x[size_t(i)]) + 0.3f * z(rng);
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  double best = HUGE_VAL;
  for (double h = 0.25 / n; h < 4; h *= std::pow(10.0, 1.0 / 24)) {
    double cv = 0;
    REQUIRE(cv_score(p, &h, &cv, Criterion{}).status == Status::Ok);
    best = std::min(best, cv);
  }
  double h = 0, score = 0;
  REQUIRE(rule_of_thumb(p.keys, Rule::Scott, &h) == Status::Ok);
  const double start = h;
  std::vector<double> bw(256), scores(256);
  CvCurve curve{bw.data(), scores.data(), 256, 0};
  REQUIRE(select_cv(p, false, &h, &score, &curve, Criterion{}).status == Status::Ok);
  CHECK(score <= best * (1 + 1e-5));
  double exact = 0;
  REQUIRE(cv_score(p, &h, &exact, Criterion{}).status == Status::Ok);
  CHECK(exact == score);
  // The scan's point just below the start first, then none at or above the start: the expansion bound ruled them out.
  CHECK(bw[0] < start);
  CHECK(*std::max_element(bw.begin(), bw.begin() + curve.count) < start);
  CHECK(curve.count <= 26);
}

namespace {

// The band's exact CV of a sorted sample at h (cv_band_window.h).
double band_cv(const Problem& sorted, Estimator estimator, double h) {
  Problem q = sorted;
  const float hf = float(h);
  q.kernel.bandwidth = &hf;
  q.masks.leave_one_out = true;
  double score = 0;
  REQUIRE(bandwidth_detail::band_window_cv(q, estimator, &score));
  return score;
}

}  // namespace

TEST_CASE("the band screen's lower difference lies below the exact difference of CV") {
  // 2^15 points (2^13 rows) and 2^17 (2^14 rows): noisy, where CV rises as h falls below the grid's reach (the screen
  // shows it, at 2^15 points from 4 spacings down), and without noise, where it falls (the screen must not show it
  // rising).
  for (const int64_t n : {kBandScreenMinPoints, int64_t(1) << 17})
    for (const float noise : {0.3f, 0.0f}) {
      const Sorted s(n, 21, noise);
      for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
        BandScreen screen(s.p, Criterion{est});
        REQUIRE(screen.active());
        const double reference = 24.0 / double(n);
        const float reference_f = float(reference);
        REQUIRE(screen.set_reference(&reference_f));
        const double at_reference = band_cv(s.p, est, reference);
        for (const double spacings : {16.0, 8.0, 4.0, 2.0}) {
          const double h = spacings / double(n), difference = band_cv(s.p, est, h) - at_reference;
          const float hf = float(h);
          const double lower = screen.lower_difference(&hf);
          CAPTURE(n);
          CAPTURE(noise);
          CAPTURE(int(est));
          CAPTURE(spacings);
          CHECK(lower <= difference);
          if (noise == 0)
            CHECK(difference < 0);  // the premise: without noise the band's points are better
          else if (n > kBandScreenMinPoints || spacings <= 4)
            CHECK(lower > 0);  // the screen shows the rise: the search skips these points
        }
      }
    }
}

TEST_CASE("the band screen moved to a point it scored compares with that point, as one made there") {
  const int64_t n = kBandScreenMinPoints;
  const Sorted s(n, 23, 0.3f);
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    CAPTURE(int(est));
    const float first = 24.0f / float(n), second = 12.0f / float(n), below = 6.0f / float(n), other = 9.0f / float(n);
    BandScreen moved(s.p, Criterion{est}), made(s.p, Criterion{est});
    REQUIRE(moved.set_reference(&first));
    REQUIRE(made.set_reference(&second));
    const double from_first = moved.lower_difference(&second);
    REQUIRE(moved.move_reference(&second));  // the rows it just scored
    const double lower = moved.lower_difference(&below);
    CHECK(lower == made.lower_difference(&below));  // the same rows, the same sums: the same bits
    CHECK(lower <= band_cv(s.p, est, below) - band_cv(s.p, est, second));
    CHECK(from_first <= band_cv(s.p, est, second) - band_cv(s.p, est, first));
    // A bandwidth it did not just score is scored for the move.
    REQUIRE(moved.move_reference(&other));
    REQUIRE(made.set_reference(&other));
    CHECK(moved.lower_difference(&below) == made.lower_difference(&below));
  }
}

TEST_CASE("a large search skips the band above its minimum and finds a minimum inside the band") {
  // As a user's data come: x unsorted (the search sorts its own copy), y = sin 6x + noise; 2^17 points, screened.
  const int64_t n = int64_t(1) << 17;
  REQUIRE(n >= kBandScreenMinPoints);
  for (const float noise : {0.3f, 0.0f}) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> z(0.0f, 1.0f);
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      x[size_t(i)] = u(rng);
      y[size_t(i)] = std::sin(6 * x[size_t(i)]) + noise * z(rng);
    }
    Problem p;
    p.queries = p.keys = {x.data(), n, 1, 1};
    p.values = {y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
    Criterion c{Estimator::LocalLinear};
    c.grid_tolerance = 1e-3;  // the default fit's search (its refinement exact would take seconds)
    double h = 0, score = 0;
    REQUIRE(rule_of_thumb(p.keys, Rule::Scott, &h) == Status::Ok);
    std::vector<double> bw(256), scores(256);
    CvCurve curve{bw.data(), scores.data(), 256, 0};
    REQUIRE(select_cv(p, false, &h, &score, &curve, c).status == Status::Ok);
    CAPTURE(noise);
    const double lowest = *std::min_element(bw.begin(), bw.begin() + curve.count);
    if (noise > 0) {
      // Every point below the grid's reach screened: none evaluated at 20 spacings or less.
      CHECK(lowest > 20.0 / double(n));
      CHECK(h > 1000.0 / double(n));
    } else {
      // The minimum lies in the band (about 4.5 spacings), below every grid-served point: the screen let the search
      // evaluate it. Float32 rounding is all of CV there: without the screen's rounding allowance it skipped those
      // points and returned the grid's at 11.6 spacings, with 2.8 times the score.
      std::vector<float> sorted_x = x, sorted_y(x.size());
      std::vector<int64_t> order(x.size());
      for (int64_t i = 0; i < n; ++i) order[size_t(i)] = i;
      std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return x[size_t(a)] < x[size_t(b)]; });
      for (int64_t i = 0; i < n; ++i) {
        sorted_x[size_t(i)] = x[size_t(order[size_t(i)])];
        sorted_y[size_t(i)] = y[size_t(order[size_t(i)])];
      }
      Problem q = p;
      q.queries = q.keys = {sorted_x.data(), n, 1, 1};
      q.values = {sorted_y.data(), n, 1, 1};
      CHECK(h < 8.0 / double(n));
      CHECK(score <= band_cv(q, c.estimator, 5.0 / double(n)));
    }
  }
}
