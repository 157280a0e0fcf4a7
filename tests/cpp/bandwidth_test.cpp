// Rules of thumb against their formulas computed here; CV against a float64 leave-one-out loop; the search finds
// the minimum of the CV curve it reports.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "methods/grid/grid.h"
#include "stats/bandwidth.h"
#include "stats/brent.h"
#include "stats/cv_scan_bound.h"
#include "stats/regression.h"
#include "reference.h"

using namespace ka;

namespace {

struct Sample {
  std::vector<float> x, y;
  Problem p;
  Sample(int64_t n, int64_t dims, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> noise(0.0f, 0.2f);
    x.resize(size_t(n * dims));
    y.resize(size_t(n));
    for (auto& v : x) v = u(rng);
    for (int64_t i = 0; i < n; ++i) y[size_t(i)] = std::sin(6.2831853f * x[size_t(i * dims)]) + noise(rng);
    p.queries = {x.data(), n, dims, dims};
    p.keys = p.queries;
    p.values = {y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  }
};

// Mean squared leave-one-out residual of the Gaussian Nadaraya–Watson estimate, float64, straight from the formula.
double loo_cv(const Sample& s, const std::vector<double>& h) {
  const int64_t n = s.p.queries.rows, dims = s.p.queries.cols;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      double u2 = 0;
      for (int64_t d = 0; d < dims; ++d) {
        const double u = (double(s.x[size_t(i * dims + d)]) - s.x[size_t(j * dims + d)]) / h[size_t(d)];
        u2 += u * u;
      }
      const double w = std::exp(-0.5 * u2);
      num += w * s.y[size_t(j)];
      den += w;
    }
    total += std::pow(s.y[size_t(i)] - num / den, 2);
  }
  return total / double(n);
}

}  // namespace

TEST_CASE("median_spacing is the median gap between sorted distinct finite values, read with a stride") {
  // The reference: std::sort of the finite values, the positive gaps, their median by linear interpolation.
  const auto reference = [](std::vector<double> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double t) { return !std::isfinite(t); }), v.end());
    std::sort(v.begin(), v.end());
    std::vector<double> gaps;
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i] > v[i - 1]) gaps.push_back(v[i] - v[i - 1]);
    if (gaps.empty()) return 0.0;
    std::sort(gaps.begin(), gaps.end());
    const double at = 0.5 * double(gaps.size() - 1);
    const size_t lo = size_t(at);
    return gaps[lo] + (at - double(lo)) * (gaps[std::min(lo + 1, gaps.size() - 1)] - gaps[lo]);
  };
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-3, 5);
  for (const int64_t n : {0, 1, 2, 7, 100, 5000}) {  // 5,000: past sort_values' switch to the radix sort
    // Column 1 of an n × 2 array: ties (values rounded to 1/64), a NaN, infinities and negative zero among them.
    std::vector<double> x(size_t(2 * n), 1e300), column;
    for (int64_t i = 0; i < n; ++i) x[size_t(2 * i + 1)] = std::round(u(rng) * 64) / 64;
    if (n > 5) {
      x[3] = std::numeric_limits<double>::quiet_NaN();
      x[5] = std::numeric_limits<double>::infinity();
      x[7] = -0.0;
    }
    for (int64_t i = 0; i < n; ++i) column.push_back(x[size_t(2 * i + 1)]);
    double got = -1;
    REQUIRE(median_spacing(x.data() + 1, n, 2, &got) == Status::Ok);
    CAPTURE(n);
    CHECK(got == reference(column));
  }
  const double same[] = {2.5, 2.5, 2.5};
  double got = -1;
  REQUIRE(median_spacing(same, 3, 1, &got) == Status::Ok);
  CHECK(got == 0);
}

TEST_CASE("Brent's method from a known interior point never evaluates it again and finds the minimum") {
  // A smooth, nearly quadratic curve with its minimum at 0.3 of [0, 1]; from x = 0.35 with its value given.
  std::vector<double> at;
  const auto f = [&](double x) {
    at.push_back(x);
    return (x - 0.3) * (x - 0.3) + 0.1 * (x - 0.3) * (x - 0.3) * (x - 0.3);
  };
  const double fx = (0.35 - 0.3) * (0.35 - 0.3) + 0.1 * 0.05 * 0.05 * 0.05;
  const double from = brent_from(f, 0.0, 0.35, fx, 1.0, 1e-4);
  CHECK(std::fabs(from - 0.3) < 1e-4);
  CHECK(std::find(at.begin(), at.end(), 0.35) == at.end());
  at.clear();
  const double plain = brent(f, 0.0, 1.0, 1e-4);
  CHECK(std::fabs(plain - 0.3) < 1e-4);
  CHECK(at.front() == doctest::Approx(0.3819660112501051));  // plain Brent starts at the golden section point
}

TEST_CASE("rules of thumb follow their documented formulas") {
  const Sample s(101, 2, 3);
  for (const Rule rule : {Rule::Scott, Rule::Silverman}) {
    double h[2];
    REQUIRE(rule_of_thumb(s.p.queries, rule, h) == Status::Ok);
    for (int d = 0; d < 2; ++d) {
      std::vector<double> col;
      for (int i = 0; i < 101; ++i) col.push_back(s.x[size_t(i * 2 + d)]);
      double mean = 0, ss = 0;
      for (double v : col) mean += v / 101;
      for (double v : col) ss += (v - mean) * (v - mean);
      const double sd = std::sqrt(ss / 100);
      std::sort(col.begin(), col.end());
      const double iqr = col[75] - col[25];  // n = 101: quartiles fall exactly on order statistics 25 and 75
      const double factor = std::pow(101.0, -1.0 / 6);
      const double want = rule == Rule::Scott ? sd * factor : 0.9 * std::min(sd, iqr / 1.349) * factor;
      CAPTURE(int(rule));
      CAPTURE(d);
      CHECK(h[d] == doctest::Approx(want).epsilon(1e-6));
    }
  }
}

TEST_CASE("constant data still gets a positive bandwidth") {
  std::vector<float> x(10, 3.0f), zero(10, 0.0f);
  for (const Rule rule : {Rule::Scott, Rule::Silverman}) {
    double h = 0;
    REQUIRE(rule_of_thumb({x.data(), 10, 1, 1}, rule, &h) == Status::Ok);
    CHECK(h > 0);
    REQUIRE(rule_of_thumb({zero.data(), 10, 1, 1}, rule, &h) == Status::Ok);
    CHECK(h > 0);
  }
}

TEST_CASE("the CV score equals a float64 leave-one-out loop") {
  const Sample s(150, 2, 5);
  for (double scale : {0.02, 0.1, 0.5}) {
    const std::vector<double> h = {scale, scale * 1.5};
    double got = 0;
    REQUIRE(cv_score(s.p, h.data(), &got).status == Status::Ok);
    CAPTURE(scale);
    CHECK(got == doctest::Approx(loo_cv(s, h)).epsilon(1e-4));
  }
}

TEST_CASE("a grid tolerance with a key-padding mask: CV runs exactly instead of refusing (found by fuzz_bandwidth)") {
  for (const int64_t dims : {1, 2}) {
    Sample s(60, dims, 8);
    std::vector<uint8_t> padding(60, 0);
    for (size_t j = 0; j < padding.size(); j += 7) padding[j] = 1;
    s.p.masks.key_padding = padding.data();
    const std::vector<double> h(size_t(dims), 0.1);
    Criterion exact, grid;
    grid.grid_tolerance = 1e-2;
    double want = 0, got = -1;
    REQUIRE(cv_score(s.p, h.data(), &want, exact).status == Status::Ok);
    REQUIRE(cv_score(s.p, h.data(), &got, grid).status == Status::Ok);
    CAPTURE(dims);
    CHECK(got == want);
  }
}

TEST_CASE("the CV search returns the best point of its own curve, within the scan, and positive") {
  for (const bool per_dimension : {false, true}) {
    const Sample s(300, per_dimension ? 2 : 1, 7);
    const int64_t dims = s.p.queries.cols;
    std::vector<double> h(static_cast<size_t>(dims)), bw(static_cast<size_t>(64 * dims)), scores(64);
    REQUIRE(rule_of_thumb(s.p.queries, Rule::Scott, h.data()) == Status::Ok);
    CvCurve curve{bw.data(), scores.data(), 64, 0};
    double score = 0;
    REQUIRE(select_cv(s.p, per_dimension, h.data(), &score, &curve).status == Status::Ok);
    CAPTURE(per_dimension);
    for (double v : h) CHECK(v > 0);
    REQUIRE(curve.count > 9);
    // In 1-D the scan's wide bandwidths are scored on a fine grid, so the returned score, always an exact one, is
    // compared with the exact CV at every bandwidth on the curve (no better than it, up to the refinement's 0.5 %).
    for (int32_t k = 0; k < curve.count; ++k) {
      double exact = 0;
      REQUIRE(cv_score(s.p, bw.data() + k * dims, &exact).status == Status::Ok);
      CHECK(score <= exact * (1 + 1e-5));
      if (per_dimension) CHECK(exact == scores[size_t(k)]);  // 2-D: every evaluation is exact
    }
    double again = 0;
    REQUIRE(cv_score(s.p, h.data(), &again).status == Status::Ok);
    CHECK(score == again);
    CHECK(score == doctest::Approx(loo_cv(s, h)).epsilon(1e-4));
    // Nearby bandwidths are no better: scaling all of them (the common-scale search, to its 1 % resolution), or
    // each one alone (coordinate descent, to its 2 % resolution in two sweeps: within 1e-3 of the score).
    for (double f : {0.95, 1.05}) {
      if (!per_dimension) {
        std::vector<double> g = h;
        for (auto& v : g) v *= f;
        CHECK(score <= loo_cv(s, g) * (1 + 1e-4));
      } else {
        for (int64_t d = 0; d < dims; ++d) {
          std::vector<double> g = h;
          g[size_t(d)] *= f;
          CHECK(score <= loo_cv(s, g) * (1 + 1e-3));
        }
      }
    }
  }
}

TEST_CASE("local-linear and weighted CV, and AICc, equal their float64 definitions") {
  const Sample s(120, 2, 9);
  std::vector<float> omega(120);
  for (size_t i = 0; i < omega.size(); ++i) omega[i] = i % 7 == 0 ? 0.0f : 0.5f + float(i % 3);
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
    for (const bool weighted : {false, true}) {
      const std::vector<double> h = {0.15, 0.25};
      const std::vector<float> hf = {0.15f, 0.25f};
      Problem p = s.p;
      p.kernel.bandwidth = hf.data();
      const std::vector<float> none;
      const std::vector<float>& w = weighted ? omega : none;
      const int degree = est == Estimator::LocalLinear ? 1 : 0;
      // Leave-one-out residuals from the equivalent kernel with key i masked out.
      // AICc counts the m observations with ω > 0 (a zero weight is the same as leaving the row out).
      double cv_sum = 0, cv_total = 0, rss = 0, trace = 0, weight_total = 0, m = 0;
      Problem loo = p;
      loo.masks.leave_one_out = true;
      for (int64_t i = 0; i < 120; ++i) {
        const double wi = weighted ? omega[size_t(i)] : 1.0;
        const auto out = reference::local_weights(loo, i, degree, w).ell;
        double f = 0;
        for (int64_t j = 0; j < 120; ++j) f += out[size_t(j)] * s.y[size_t(j)];
        cv_sum += wi * std::pow(s.y[size_t(i)] - f, 2);
        cv_total += wi;
        const auto in = reference::local_weights(p, i, degree, w).ell;
        double g = 0;
        for (int64_t j = 0; j < 120; ++j) g += in[size_t(j)] * s.y[size_t(j)];
        rss += wi * std::pow(s.y[size_t(i)] - g, 2);
        weight_total += wi;
        m += wi > 0;
        trace += in[size_t(i)];
      }
      rss *= m / weight_total;
      const Criterion cv{est, Score::LeaveOneOut, weighted ? omega.data() : nullptr};
      const Criterion ic{est, Score::AICc, weighted ? omega.data() : nullptr};
      double got_cv = 0, got_aicc = 0;
      REQUIRE(cv_score(s.p, h.data(), &got_cv, cv).status == Status::Ok);
      REQUIRE(cv_score(s.p, h.data(), &got_aicc, ic).status == Status::Ok);
      CAPTURE(int(est));
      CAPTURE(weighted);
      CHECK(got_cv == doctest::Approx(cv_sum / cv_total).epsilon(1e-4));
      CHECK(got_aicc == doctest::Approx(std::log(rss / m) + (1 + trace / m) / (1 - (trace + 2) / m)).epsilon(1e-4));
    }
}

TEST_CASE("the AICc search for local-linear returns the best point of its curve") {
  const Sample s(200, 1, 13);
  double h = 0, score = 0;
  REQUIRE(rule_of_thumb(s.p.queries, Rule::Silverman, &h) == Status::Ok);
  std::vector<double> bw(64), scores(64);
  CvCurve curve{bw.data(), scores.data(), 64, 0};
  REQUIRE(select_cv(s.p, false, &h, &score, &curve, {Estimator::LocalLinear, Score::AICc}).status == Status::Ok);
  CHECK(h > 0);
  const double best = *std::min_element(scores.begin(), scores.begin() + curve.count);
  CHECK(score <= best + 1e-12 * std::fabs(best));
  for (double f : {0.9, 1.1}) {
    double nearby = 0, g = h * f;
    REQUIRE(cv_score(s.p, &g, &nearby, {Estimator::LocalLinear, Score::AICc}).status == Status::Ok);
    CHECK(score <= nearby + 1e-9);
  }
}

TEST_CASE("a scan whose every point leaves some point without neighbours extends to larger bandwidths") {
  // 11 points in 2-D with a compact kernel: up to twice Scott's bandwidth some point has no other in reach (CV = +inf
  // everywhere on the first scan), but larger bandwidths give finite scores.
  // Ten points clustered near the origin and one at (1, 1): the lone point has no neighbour until h nears 1.
  std::vector<float> x;
  for (int i = 0; i < 10; ++i) x.insert(x.end(), {0.02f * float(i), 0.015f * float(i)});
  x.insert(x.end(), {1.0f, 1.0f});
  std::vector<float> y(11);
  for (size_t i = 0; i < 11; ++i) y[i] = float(i % 3);
  Problem p;
  p.queries = p.keys = {x.data(), 11, 2, 2};
  p.values = {y.data(), 11, 1, 1};
  p.kernel = {KernelKind::Epanechnikov, 1.0, nullptr};
  double h[2], score = 0;
  REQUIRE(rule_of_thumb(p.queries, Rule::Scott, h) == Status::Ok);
  double at_twice = 0, twice[2] = {2 * h[0], 2 * h[1]};
  REQUIRE(cv_score(p, twice, &at_twice).status == Status::Ok);
  CHECK(std::isinf(at_twice));  // the premise: the first scan sees no finite score
  REQUIRE(select_cv(p, false, h, &score, nullptr).status == Status::Ok);
  CHECK(std::isfinite(score));
}

TEST_CASE("the search refuses a start that is no bandwidth; CV at one float32 cannot hold is +inf") {
  const Sample s(50, 1, 17);
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    double h = bad, score = 0;
    CHECK(select_cv(s.p, false, &h, &score, nullptr).status == Status::BadArgument);
  }
  for (const double beyond : {1e39, 1e-50}) {
    double score = 0;
    REQUIRE(cv_score(s.p, &beyond, &score).status == Status::Ok);
    CHECK(std::isinf(score));
  }
}

TEST_CASE(
    "a progress hook sees every evaluation, cancels the search, and a resumed search ends where an uninterrupted one "
    "does") {
  for (const bool per_dimension : {false, true}) {
    CAPTURE(per_dimension);
    const Sample s(200, per_dimension ? 2 : 1, 11);
    const int64_t dims = s.p.queries.cols;
    const size_t cap = 512;  // room for every evaluation: the 2-D coordinate descent makes about 270
    std::vector<double> start(static_cast<size_t>(dims));
    REQUIRE(rule_of_thumb(s.p.queries, Rule::Scott, start.data()) == Status::Ok);

    // Uninterrupted, with a hook that only counts: it is called once per evaluation, with 1, 2, 3, ...
    std::vector<int32_t> seen;
    const auto record = [](void* ctx, int32_t n) {
      static_cast<std::vector<int32_t>*>(ctx)->push_back(n);
      return true;
    };
    std::vector<double> h = start, bw(cap * size_t(dims)), scores(cap);
    CvCurve curve{bw.data(), scores.data(), int32_t(cap), 0};
    double score = 0;
    REQUIRE(select_cv(s.p, per_dimension, h.data(), &score, &curve, {}, {record, &seen}).status == Status::Ok);
    REQUIRE(curve.count > 9);
    REQUIRE(seen.size() == size_t(curve.count));
    for (size_t e = 0; e < seen.size(); ++e) CHECK(seen[e] == int32_t(e + 1));

    // Stopped after every single new evaluation and resumed from the curve: the same evaluations, bandwidth and score.
    std::vector<double> h2 = start, bw2(cap * size_t(dims)), scores2(cap);
    CvCurve curve2{bw2.data(), scores2.data(), int32_t(cap), 0};
    double score2 = -1;
    int32_t calls = 0;
    for (;; ++calls) {
      REQUIRE(calls <= curve.count + 1);
      struct Budget {
        int32_t stop_at;
      } budget{curve2.count + 1};
      const auto pause = [](void* ctx, int32_t n) { return n < static_cast<Budget*>(ctx)->stop_at; };
      const int32_t before = curve2.count;
      const Result r = select_cv(s.p, per_dimension, h2.data(), &score2, &curve2, {}, {pause, &budget});
      if (r.status == Status::Ok) break;
      REQUIRE(r.status == Status::Cancelled);
      CHECK(curve2.count == before + 1);  // exactly one new evaluation per call
      CHECK(score2 == -1);                // a cancelled search leaves h and score alone
      CHECK(std::equal(h2.begin(), h2.end(), start.begin()));
    }
    CHECK(calls >= curve.count - 1);
    CHECK(curve2.count == curve.count);
    CHECK(std::equal(bw.begin(), bw.begin() + curve.count * dims, bw2.begin()));
    CHECK(std::equal(scores.begin(), scores.begin() + curve.count, scores2.begin()));
    CHECK(std::equal(h.begin(), h.end(), h2.begin()));
    CHECK(score2 == score);

    // A curve from other inputs is refused, not silently replayed.
    std::vector<double> h3 = start;
    for (auto& v : h3) v *= 1.5;
    std::vector<double> bw3 = bw, scores3 = scores;
    CvCurve curve3{bw3.data(), scores3.data(), int32_t(cap), 3};
    double score3 = 0;
    CHECK(select_cv(s.p, per_dimension, h3.data(), &score3, &curve3).status == Status::BadArgument);
  }
}

namespace {

// Local-linear leave-one-out CV as a float64 textbook loop: Gaussian weights divided by each row's largest, the
// 2 × 2 normal equations solved exactly (no guard); +inf where the slope's pivot is at most 1e-12 of S₂ (the
// documented rule for a singular held-out design, docs/regression.md).
double textbook_ll_cv(const std::vector<float>& x, const std::vector<float>& y, double h) {
  const size_t n = x.size();
  double total = 0;
  for (size_t i = 0; i < n; ++i) {
    double top = -std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < n; ++j)
      if (j != i) top = std::max(top, -0.5 * std::pow((double(x[j]) - x[i]) / h, 2));
    double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double u = (double(x[j]) - x[i]) / h, w = std::exp(-0.5 * u * u - top);
      s0 += w;
      s1 += w * u;
      s2 += w * u * u;
      t0 += w * y[j];
      t1 += w * u * y[j];
    }
    const double det = s0 * s2 - s1 * s1;
    if (!(det / s0 > 1e-12 * s2)) return std::numeric_limits<double>::infinity();
    total += std::pow(y[i] - (s2 * t0 - s1 * t1) / det, 2);
  }
  return total / double(n);
}

}  // namespace

TEST_CASE("local-linear CV at a near-singular held-out design is the textbook value, and +inf where it is singular") {
  // 40 points on [0, 1] and one far away at 3: held out, its neighbours all lie 2 to 3 bandwidths-worth away on one
  // side, so its design is near-singular (relative pivot about 1e-3 at h = 0.3): the guard acts, CV must not.
  Sample s(41, 1, 21);
  s.x[40] = 3.0f;
  s.y[40] = 2.5f;
  const Criterion ll{Estimator::LocalLinear, Score::LeaveOneOut};
  for (const double h : {0.3, 0.15, 0.6, 1.0}) {
    const float hf = float(h);
    double got = 0;
    REQUIRE(cv_score(s.p, &h, &got, ll).status == Status::Ok);
    const double want = textbook_ll_cv(s.x, s.y, double(hf));
    CAPTURE(h);
    REQUIRE(std::isfinite(want));
    // The guarded rows are solved in float64; the rest carry float32 weights: 1e-4 as the issue asks.
    CHECK(got == doctest::Approx(want).epsilon(1e-4));
  }
  // At h = 0.3 the isolated point's residual dominates (it extrapolates a line from [0, 1]): far above the guard's
  // value, which pulls that point toward the Nadaraya–Watson mean and made small bandwidths look good.
  {
    const double h = 0.3;
    double got = 0;
    REQUIRE(cv_score(s.p, &h, &got, ll).status == Status::Ok);
    Problem loo = s.p;
    const float hf = 0.3f;
    loo.kernel.bandwidth = &hf;
    loo.masks.leave_one_out = true;
    const auto guarded = reference::local_weights(loo, 40, 1, {}).ell;
    double guarded_fit = 0;
    for (size_t j = 0; j < 41; ++j) guarded_fit += guarded[j] * s.y[j];
    CHECK(got > std::pow(s.y[40] - guarded_fit, 2) / 41 * 2);
  }
  // At h = 0.02 the isolated point has one neighbour that matters (the next weighs about e^-150 less): singular, +inf.
  const double tiny = 0.02;
  double got = 0;
  REQUIRE(cv_score(s.p, &tiny, &got, ll).status == Status::Ok);
  CHECK(textbook_ll_cv(s.x, s.y, double(float(tiny))) == std::numeric_limits<double>::infinity());
  CHECK(got == std::numeric_limits<double>::infinity());
}

TEST_CASE("the fit summary counts the fitted values the guard moved, and AICc's trace is the textbook one") {
  // One point at 0 and 200 at 1 (h = 1): at x = 0 the cluster outweighs the point's own weight 121 to 1, so the
  // slope pivot is 1/122 of its diagonal: the guard acts there (kPivotFloor = 1e-2), pulling the fit from the
  // textbook line through (0, y₀) toward the cluster's mean. Nowhere else.
  const int64_t n = 201;
  std::vector<float> x(n, 1.0f), y(n);
  x[0] = 0;
  y[0] = 0;
  for (int64_t i = 1; i < n; ++i) y[size_t(i)] = 1.0f + 0.01f * float(i % 7);
  const float h = 1;
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, &h};
  // Float64 textbook: at x_i, weights w_j = exp(−(x_j − x_i)²/2), the 2 × 2 solve, ℓ_i(x_i) = w_ii g₀, fit = gᵀ T.
  double trace = 0, moved = 0, guarded_trace = 0;
  for (int64_t i = 0; i < n; ++i) {
    double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
    for (int64_t j = 0; j < n; ++j) {
      const double u = double(x[size_t(j)]) - x[size_t(i)], w = std::exp(-0.5 * u * u);
      s0 += w;
      s1 += w * u;
      s2 += w * u * u;
      t0 += w * y[size_t(j)];
      t1 += w * u * y[size_t(j)];
    }
    const double det = s0 * s2 - s1 * s1, g0 = s2 / det;
    trace += g0;
    const double exact = (s2 * t0 - s1 * t1) / det;
    Problem row = p;
    const auto guarded = reference::local_weights(row, i, 1, {}).ell;
    double fit = 0;
    for (int64_t j = 0; j < n; ++j) fit += guarded[size_t(j)] * y[size_t(j)];
    guarded_trace += guarded[size_t(i)];
    moved += std::fabs(fit - exact) > kGuardChange * 1.06;  // range(y) = 1.06
  }
  REQUIRE(moved == 1);
  REQUIRE(std::fabs(guarded_trace - trace) > 1e-2);  // the guard's ν differs: the check below can fail
  FitSummary s;
  REQUIRE(summarize_fit(Fit{p, Estimator::LocalLinear}, &s).status == Status::Ok);
  CHECK(s.guard_changed == 1);
  CHECK(s.trace == doctest::Approx(trace).epsilon(1e-5));
}

TEST_CASE("the search's screening grid errs far less than its margin assumes (kScreenFitError of range(y))") {
  // GridCv at the screening tolerance (1e-6) against the exact CV over the scan's range, both estimators, smooth and
  // compact kernels, noisy and nearly noiseless data: |CV_grid − CV| <= 2·√CV·e + e² needs a fit error e of at most
  // 5e-5·range(y) (cv_search.cpp); the worst seen here is asked to stay 10 times below that.
  double worst = 0;
  for (const float noise : {0.2f, 1e-3f})
    for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Epanechnikov})
      for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
        const int64_t n = 2000;
        std::mt19937 rng(23);
        std::uniform_real_distribution<float> u(0.0f, 1.0f);
        std::normal_distribution<float> z(0.0f, 1.0f);
        std::vector<float> x(n), y(n);
        for (auto& v : x) v = u(rng) * u(rng);  // skewed, as incomes are
        for (int64_t i = 0; i < n; ++i) y[size_t(i)] = std::sin(9.0f * x[size_t(i)]) + noise * z(rng);
        Problem p;
        p.queries = p.keys = {x.data(), n, 1, 1};
        p.values = {y.data(), n, 1, 1};
        p.kernel = {kind, 1.0, nullptr};
        const double range_y = *std::max_element(y.begin(), y.end()) - *std::min_element(y.begin(), y.end());
        GridCv screen(Fit{p, est, nullptr}, 1e-6);
        REQUIRE(screen.suits());
        int served_count = 0;
        for (double h = 1e-3; h < 8; h *= 1.4678) {
          double grid = 0, exact = 0;
          bool served = false;
          REQUIRE(screen.score(float(h), &grid, &served).status == Status::Ok);
          if (!served) continue;
          ++served_count;
          REQUIRE(cv_score(p, &h, &exact, {est}).status == Status::Ok);
          // The fit error e that explains the difference: 2·√CV·e (+ e², negligible here) = |ΔCV|.
          const double e = std::fabs(grid - exact) / (2 * std::sqrt(exact)) / range_y;
          CAPTURE(noise);
          CAPTURE(int(kind));
          CAPTURE(int(est));
          CAPTURE(h);
          CHECK(e <= 5e-6);
          worst = std::max(worst, e);
        }
        CHECK(served_count >= 8);  // the grid serves the scan's upper decades
      }
  MESSAGE("worst fit error of the screening grid, relative to range(y): " << worst);
}

TEST_CASE("a screened 1-D search returns an exact evaluation no worse than the exact CV anywhere on its curve") {
  // 3,000 points (screened: at least 2,000), skewed x; y a sine (an interior minimum) or a line (local-linear's
  // minimum is the straight line, at the top of the scan), each with noise.
  const int64_t n = 3000;
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> z(0.0f, 1.0f);
  std::vector<float> x(n), y(n);
  for (auto& v : x) v = 10 * u(rng) * u(rng);
  for (const bool line : {false, true})
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
      for (int64_t i = 0; i < n; ++i) {
        const float t = x[size_t(i)];
        y[size_t(i)] = (line ? 0.3f * t : std::sin(2 * t)) + 0.2f * z(rng);
      }
      Problem p;
      p.queries = p.keys = {x.data(), n, 1, 1};
      p.values = {y.data(), n, 1, 1};
      p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
      const double range_y = *std::max_element(y.begin(), y.end()) - *std::min_element(y.begin(), y.end());
      double h = 0, score = 0;
      REQUIRE(rule_of_thumb(p.queries, Rule::Scott, &h) == Status::Ok);
      std::vector<double> bw(128), scores(128);
      CvCurve curve{bw.data(), scores.data(), 128, 0};
      REQUIRE(select_cv(p, false, &h, &score, &curve, {est}).status == Status::Ok);
      CAPTURE(line);
      CAPTURE(int(est));
      CAPTURE(h);
      double again = 0;
      REQUIRE(cv_score(p, &h, &again, {est}).status == Status::Ok);
      CHECK(score == again);  // the returned score is an exact evaluation
      int screened = 0;
      for (int32_t k = 0; k < curve.count; ++k) {
        double exact = 0;
        REQUIRE(cv_score(p, bw.data() + k, &exact, {est}).status == Status::Ok);
        CAPTURE(bw[size_t(k)]);
        CHECK(score <= exact * (1 + 1e-5));
        if (std::isinf(exact)) {  // a held-out design singular (local-linear at small h): never screened there
          CHECK(std::isinf(scores[size_t(k)]));
          continue;
        }
        // Grid scores on the curve: within what fits off by 5e-6 of range(y) give (a tenth of the search's margin).
        CHECK(std::fabs(scores[size_t(k)] - exact) <= 2 * std::sqrt(exact) * 5e-6 * range_y);
        screened += scores[size_t(k)] != exact;
      }
      CHECK(screened > 0);  // the premise: the grid scored some of the scan
      if (!line && est == Estimator::NadarayaWatson) {
        // Stopped after every new evaluation and resumed from the curve, and on 2 threads: the same bytes.
        double h2 = 0, score2 = -1;
        REQUIRE(rule_of_thumb(p.queries, Rule::Scott, &h2) == Status::Ok);
        std::vector<double> bw2(128), scores2(128);
        CvCurve curve2{bw2.data(), scores2.data(), 128, 0};
        struct Budget {
          int32_t stop_at;
        } budget{0};
        const auto pause = [](void* ctx, int32_t e) { return e < static_cast<Budget*>(ctx)->stop_at; };
        for (Result r{Status::Cancelled}; r.status == Status::Cancelled;) {
          REQUIRE(curve2.count <= curve.count);
          budget.stop_at = curve2.count + 1;
          r = select_cv(p, false, &h2, &score2, &curve2, {est}, {pause, &budget});
          REQUIRE((r.status == Status::Ok || r.status == Status::Cancelled));
        }
        CHECK(curve2.count == curve.count);
        CHECK(std::equal(bw.begin(), bw.begin() + curve.count, bw2.begin()));
        CHECK(std::equal(scores.begin(), scores.begin() + curve.count, scores2.begin()));
        CHECK(h2 == h);
        CHECK(score2 == score);
        Problem threaded = p;
        threaded.threads = 2;
        double h3 = 0, score3 = -1;
        REQUIRE(rule_of_thumb(p.queries, Rule::Scott, &h3) == Status::Ok);
        std::vector<double> bw3(128), scores3(128);
        CvCurve curve3{bw3.data(), scores3.data(), 128, 0};
        REQUIRE(select_cv(threaded, false, &h3, &score3, &curve3, {est}).status == Status::Ok);
        CHECK(curve3.count == curve.count);
        CHECK(std::equal(scores.begin(), scores.begin() + curve.count, scores3.begin()));
        CHECK(h3 == h);
      }
      if (line && est == Estimator::LocalLinear) CHECK(h > 10.0 / 64);  // the minimum lies where the scan was screened
    }
}

namespace {

// Blocked CV of the Gaussian Nadaraya–Watson estimate, float64, straight from its definition: held-out point i is
// fitted from the points j != i with |x_j1 − x_i1| > r (bandwidth.h, Criterion::exclude); +inf where none is left.
double blocked_cv(const Sample& s, const std::vector<double>& h, double r) {
  const int64_t n = s.p.queries.rows, dims = s.p.queries.cols;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; ++j) {
      if (j == i || std::fabs(double(s.x[size_t(j * dims)]) - double(s.x[size_t(i * dims)])) <= r) continue;
      double u2 = 0;
      for (int64_t d = 0; d < dims; ++d) {
        const double u = (double(s.x[size_t(i * dims + d)]) - s.x[size_t(j * dims + d)]) / h[size_t(d)];
        u2 += u * u;
      }
      const double w = std::exp(-0.5 * u2);
      num += w * s.y[size_t(j)];
      den += w;
    }
    if (!(den > 0)) return HUGE_VAL;
    total += std::pow(s.y[size_t(i)] - num / den, 2);
  }
  return total / double(n);
}

}  // namespace

TEST_CASE("blocked CV (exclude r) equals a float64 loop that leaves out every point within r along x1; r = 0 is LOO") {
  for (const int64_t dims : {1, 2}) {
    const Sample s(160, dims, 23);  // unsorted: the score sorts the sample, and the band follows the sorted order
    for (const double r : {0.0, 0.013, 0.05, 0.2}) {
      const std::vector<double> h(size_t(dims), 0.08);
      Criterion c;
      c.exclude = r;
      double got = 0;
      REQUIRE(cv_score(s.p, h.data(), &got, c).status == Status::Ok);
      CAPTURE(dims);
      CAPTURE(r);
      CHECK(got == doctest::Approx(blocked_cv(s, h, r)).epsilon(1e-4));
      if (r == 0) {
        double loo = 0;
        REQUIRE(cv_score(s.p, h.data(), &loo).status == Status::Ok);
        CHECK(got == loo);
      }
    }
  }
}

TEST_CASE(
    "blocked CV refuses a bad radius, AICc and the gradient search; a band beyond a compact kernel's reach is +inf") {
  Sample s(80, 1, 29);
  const double h = 0.05;
  double score = 0;
  for (const double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    Criterion c;
    c.exclude = bad;
    CHECK(cv_score(s.p, &h, &score, c).status == Status::BadArgument);
    double start = h;
    CHECK(select_cv(s.p, false, &start, &score, nullptr, c).status == Status::BadArgument);
  }
  Criterion aicc;
  aicc.score = Score::AICc;
  aicc.exclude = 0.1;
  CHECK(cv_score(s.p, &h, &score, aicc).status == Status::BadArgument);
  Criterion blocked;
  blocked.exclude = 0.1;
  double start = h;
  GradientSearch g;
  CHECK(select_cv_gradient(s.p, &start, &score, nullptr, blocked, {}, &g).status == Status::BadArgument);
  // Epanechnikov with reach h = 0.05 and every point within 0.1 left out: no held-out point has a neighbour.
  s.p.kernel.kind = KernelKind::Epanechnikov;
  REQUIRE(cv_score(s.p, &h, &score, blocked).status == Status::Ok);
  CHECK(std::isinf(score));
}

TEST_CASE("the band mask gives local_fit the same fit as the equivalent general mask (NW and local-linear)") {
  // Sorted 1-D sample of 700 points (several key tiles): band i = [i − 40, i + 5] clipped, the general mask the same.
  const int64_t n = 700;
  Sample s(n, 1, 31);
  std::sort(s.x.begin(), s.x.end());
  std::vector<int64_t> first(n), last(n);
  std::vector<uint8_t> general(size_t(n * n), 0);
  for (int64_t i = 0; i < n; ++i) {
    first[size_t(i)] = std::max<int64_t>(0, i - 40);
    last[size_t(i)] = std::min<int64_t>(n - 1, i + 5);
    for (int64_t j = first[size_t(i)]; j <= last[size_t(i)]; ++j) general[size_t(i * n + j)] = 1;
  }
  const float h = 0.03f;
  s.p.kernel.bandwidth = &h;
  for (const Estimator e : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    std::vector<float> banded(static_cast<size_t>(n)), masked(static_cast<size_t>(n));
    Problem a = s.p, b = s.p;
    a.masks.band_first = first.data();
    a.masks.band_last = last.data();
    b.masks.general = general.data();
    REQUIRE(local_fit(Fit{a, e, nullptr}, FitOut{Matrix{banded.data(), n, 1, 1}}).status == Status::Ok);
    REQUIRE(local_fit(Fit{b, e, nullptr}, FitOut{Matrix{masked.data(), n, 1, 1}}).status == Status::Ok);
    CHECK(banded == masked);
  }
}

TEST_CASE("blocked CV's search returns the best point of its curve; on serial data it picks a larger h than LOO") {
  // An AR(1)-like series on an even grid: leave-one-out CV follows the dependence and picks a small h.
  const int64_t n = 300;
  std::vector<float> x(n), y(n);
  std::mt19937 rng(37);
  std::normal_distribution<double> noise(0.0, 1.0);
  double e = 0;
  for (int64_t i = 0; i < n; ++i) {
    e = 0.9 * e + 0.3 * noise(rng);
    x[size_t(i)] = float(i);
    y[size_t(i)] = float(std::sin(double(i) / 40) + e);
  }
  Problem p;
  p.queries = p.keys = {x.data(), n, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, nullptr};
  double loo_h = 10, blocked_h = 10, loo_score = 0, blocked_score = 0;
  std::vector<double> hs(256), scores(256);
  CvCurve curve{hs.data(), scores.data(), 256, 0};
  Criterion blocked;
  blocked.exclude = 5;
  REQUIRE(select_cv(p, false, &loo_h, &loo_score, nullptr).status == Status::Ok);
  REQUIRE(select_cv(p, false, &blocked_h, &blocked_score, &curve, blocked).status == Status::Ok);
  CHECK(blocked_score == *std::min_element(scores.begin(), scores.begin() + curve.count));
  double again = 0;
  REQUIRE(cv_score(p, &blocked_h, &again, blocked).status == Status::Ok);
  CHECK(again == blocked_score);
  CHECK(blocked_h > 1.5 * loo_h);
}

TEST_CASE(
    "the scan's lower bounds (nearest neighbour, mean) never exceed the CV score; the search finds the global "
    "minimum") {
  // 2-D and 3-D Nadaraya–Watson (where select_cv scans downward and stops on the bound), with and without a band.
  for (const int64_t dims : {2, 3}) {
    for (const double r : {0.0, 0.02}) {
      const Sample s(400, dims, uint32_t(41 + dims));
      Criterion c;
      c.exclude = r;
      std::vector<double> start(static_cast<size_t>(dims));
      REQUIRE(rule_of_thumb(s.p.queries, Rule::Scott, start.data()) == Status::Ok);
      const NearestBound bound(s.p, c, start.data());
      REQUIRE(bound.active());
      CAPTURE(dims);
      CAPTURE(r);
      // On a fine log grid of scales from far below the spacing to far above the range: LB(s) <= CV(s), and the
      // grid's best score is the global minimum the search must reach.
      double grid_best = HUGE_VAL, below = 0, above = 0;
      for (double log_s = std::log(1e-4); log_s <= std::log(60.0); log_s += std::log(10.0) / 24) {
        std::vector<double> h(start);
        for (double& v : h) v *= std::exp(log_s);
        double cv = 0;
        REQUIRE(cv_score(s.p, h.data(), &cv, c).status == Status::Ok);
        const double lb = bound.lower_bound(std::exp(log_s)), far = bound.lower_bound_far(std::exp(log_s));
        CHECK(lb <= cv * (1 + 1e-6));
        CHECK(far <= cv * (1 + 1e-6));
        grid_best = std::min(grid_best, cv);
        if (log_s < std::log(1e-2)) below = std::max(below, lb);
        if (log_s > std::log(20.0)) above = std::max(above, far);
      }
      CHECK(below > 0);  // the premise: the bounds are informative below the spacing and above the range
      CHECK(above > grid_best);
      std::vector<double> h(start);
      double score = 0;
      REQUIRE(select_cv(s.p, false, h.data(), &score, nullptr, c).status == Status::Ok);
      CHECK(score <= grid_best * (1 + 1e-4));
    }
  }
}

TEST_CASE("the nearest-neighbour bound applies to Gaussian Nadaraya–Watson leave-one-out CV without weights only") {
  Sample s(50, 2, 43);
  const double start[2] = {0.1, 0.1};
  CHECK(NearestBound(s.p, Criterion{}, start).active());
  Criterion ll;
  ll.estimator = Estimator::LocalLinear;
  CHECK(!NearestBound(s.p, ll, start).active());
  Criterion aicc;
  aicc.score = Score::AICc;
  CHECK(!NearestBound(s.p, aicc, start).active());
  std::vector<float> w(50, 1.0f);
  Criterion weighted;
  weighted.observation_weights = w.data();
  CHECK(!NearestBound(s.p, weighted, start).active());
  s.p.kernel.kind = KernelKind::Laplacian;
  CHECK(!NearestBound(s.p, Criterion{}, start).active());
  CHECK(NearestBound(s.p, Criterion{}, start).lower_bound(1e-3) == 0);
}
