// LoessModel against R's loess() on real data sets (tests/fixtures/loess_r.h, made by tests/fixtures/make_loess.R):
// fitted values, predictions and standard errors, and the statistics, for both surfaces, degrees 0-2, spans
// 0.3/0.75/1.2, both families, 1-D and 2-D, exact and approximate statistics; then the parts against independent
// float64 references (a weighted least-squares solve, the Hermite basis), and the argument checks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../fixtures/loess_r.h"
#include "stats/loess/loess.h"
#include "stats/loess/statistics.h"

using namespace ka;

namespace {

LoessOptions options_of(const loess_fixture::Case& c, int32_t dims) {
  LoessOptions o;
  o.dims = dims;
  o.span = c.span;
  o.degree = c.degree;
  o.family = std::string(c.family) == "symmetric" ? LoessFamily::Symmetric : LoessFamily::Gaussian;
  o.surface = std::string(c.surface) == "direct" ? LoessSurface::Direct : LoessSurface::Interpolate;
  o.statistics = std::string(c.statistics) == "exact" ? LoessStatistics::Exact : LoessStatistics::Approximate;
  return o;
}

double relative(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }

// The worst errors per family of cases, printed once (the report's table).
struct Worst {
  double fit = 0, se = 0, stat = 0;
};

// with_scale false: the residual scale comes from robustness weights that are rounding noise (rounding_residuals).
void check_statistics(const LoessSummary& got, const loess_fixture::Statistics& want, bool with_scale, Worst* worst) {
  const double pairs[5][2] = {{got.enp, want.enp},
                              {got.one_delta, want.one_delta},
                              {got.two_delta, want.two_delta},
                              {got.trace_hat, want.trace_hat},
                              {got.residual_scale, want.s}};
  for (const auto& p : pairs) {
    if (!with_scale && &p == &pairs[4]) break;
    // The target is 1e-6 relative; the fixture's 9-10 digits allow a bound 10 times tighter.
    CHECK(relative(p[0], p[1]) <= 1e-7);
    worst->stat = std::max(worst->stat, relative(p[0], p[1]));
  }
}

}  // namespace

TEST_CASE("loess matches R's loess on every fixture case") {
  std::map<std::string, Worst> worst;
  for (const auto& c : loess_fixture::kCases) {
    const auto& set = loess_fixture::kDatasets[c.dataset];
    const std::string name = std::string(set.name) + " span " + std::to_string(c.span) + " degree " +
                             std::to_string(c.degree) + " " + c.family + " " + c.surface + " " + c.statistics +
                             (c.weights ? " weighted" : "");
    CAPTURE(name);
    const std::string family = std::to_string(set.dims) + "-D " + c.surface + " " + c.family +
                               (std::string(c.statistics) == "exact" ? " exact" : "");
    Worst& w = worst[family];
    LoessModel model;
    REQUIRE(model.fit(set.x, set.y, c.weights, set.n, options_of(c, set.dims)) == Status::Ok);
    // The local fits interpolate the data, so the residuals the robustness weights come from are rounding noise in
    // R and here alike (trees at span 0.3): only the statistics of the first, gaussian fit are comparable.
    check_statistics(model.summary(), c.statistics_exact_trace, !c.rounding_residuals, &w);
    if (c.rounding_residuals) continue;
    const double range = *std::max_element(set.y, set.y + set.n) - *std::min_element(set.y, set.y + set.n);
    std::vector<double> fitted(size_t(set.n));
    model.fitted(fitted.data());
    for (int j = 0; j < c.fitted_count; ++j) {
      const double e = std::fabs(fitted[size_t(c.fitted_index[j])] - c.fitted[j]) / range;
      CAPTURE(j);
      CHECK(e <= 1e-7);  // the target is 1e-6 of range(y); R's 9 digits allow a bound 10 times tighter
      w.fit = std::max(w.fit, e);
    }
    std::vector<double> fit(size_t(set.queries)), se(size_t(set.queries));
    REQUIRE(model.predict(set.q, set.queries, fit.data(), se.data()) == Status::Ok);
    for (int j = 0; j < set.queries; ++j) {
      CAPTURE(j);
      CHECK(std::isnan(fit[size_t(j)]) == std::isnan(c.predict[j]));
      if (std::isnan(c.predict[j])) continue;
      const double e = std::fabs(fit[size_t(j)] - c.predict[j]) / range;
      CHECK(e <= 1e-7);
      w.fit = std::max(w.fit, e);
      const double es = relative(se[size_t(j)], c.se[j]);
      CHECK(es <= 1e-7);
      w.se = std::max(w.se, es);
    }
    if (!std::isnan(c.statistics_approximate_trace.enp)) {
      LoessOptions o = options_of(c, set.dims);
      o.trace_hat = LoessTraceHat::Approximate;
      LoessModel approx;
      REQUIRE(approx.fit(set.x, set.y, c.weights, set.n, o) == Status::Ok);
      check_statistics(approx.summary(), c.statistics_approximate_trace, true, &w);
    }
    if (std::isfinite(c.qt975)) CHECK(relative(loess::student_t_quantile(0.975, c.df), c.qt975) <= 1e-8);
  }
  for (const auto& [family, w] : worst)
    std::printf("loess vs R, worst errors: %-32s fit %.1e of range(y), se %.1e, statistics %.1e (relative)\n",
                family.c_str(), w.fit, w.se, w.stat);
}

TEST_CASE("loess reproduces an additive quadratic exactly with degree 2, on both surfaces, 1-D and 2-D") {
  // A local quadratic fit of quadratic data is the data's polynomial at every fit point, and the cubic Hermite
  // interpolation of exact values and slopes reproduces it: fitted = y everywhere. In 2-D only without an x·y
  // term: R's interpolation carries no cross derivative (its vertices keep value and slopes), so it reproduces
  // u(x) + v(y) but not x·y.
  for (int32_t dims = 1; dims <= 2; ++dims) {
    const int64_t n = 400;
    std::vector<double> x(static_cast<size_t>(n * dims)), y(static_cast<size_t>(n));
    uint32_t state = 12345;
    const auto uniform = [&state] { return (state = state * 1664525u + 1013904223u) / 4294967296.0; };
    for (int64_t i = 0; i < n; ++i) {
      const double a = 10 * uniform(), b = dims == 2 ? 5 * uniform() : 0;
      x[size_t(i * dims)] = a;
      if (dims == 2) x[size_t(i * dims + 1)] = b;
      y[size_t(i)] = 3 + 0.7 * a - 0.2 * a * a + (dims == 2 ? 1.5 * b - 0.4 * b * b : 0);
    }
    for (const LoessSurface surface : {LoessSurface::Interpolate, LoessSurface::Direct}) {
      CAPTURE(dims);
      CAPTURE(int(surface));
      LoessOptions o;
      o.dims = dims;
      o.span = 0.3;
      o.surface = surface;
      LoessModel model;
      REQUIRE(model.fit(x.data(), y.data(), nullptr, n, o) == Status::Ok);
      std::vector<double> fitted(static_cast<size_t>(n));
      model.fitted(fitted.data());
      for (int64_t i = 0; i < n; ++i) CHECK(std::fabs(fitted[size_t(i)] - y[size_t(i)]) <= 1e-9);
      CHECK(std::fabs(model.summary().residual_scale) <= 1e-9);
    }
  }
}

TEST_CASE("loess fits each input row whatever the input order") {
  const auto& set = loess_fixture::kDatasets[0];  // cars: integer speeds with many ties
  std::vector<int64_t> perm(size_t(set.n));
  for (int64_t i = 0; i < set.n; ++i) perm[size_t(i)] = (i * 17 + 5) % set.n;  // 17 is prime to 50
  std::vector<double> x(size_t(set.n)), y(size_t(set.n));
  for (int64_t i = 0; i < set.n; ++i) x[size_t(i)] = set.x[perm[size_t(i)]], y[size_t(i)] = set.y[perm[size_t(i)]];
  for (const LoessSurface surface : {LoessSurface::Interpolate, LoessSurface::Direct}) {
    LoessOptions o;
    o.span = 0.5;
    o.family = LoessFamily::Symmetric;
    o.surface = surface;
    LoessModel a, b;
    REQUIRE(a.fit(set.x, set.y, nullptr, set.n, o) == Status::Ok);
    REQUIRE(b.fit(x.data(), y.data(), nullptr, set.n, o) == Status::Ok);
    std::vector<double> fa(size_t(set.n)), fb(size_t(set.n));
    a.fitted(fa.data());
    b.fitted(fb.data());
    // Within a tie the summation order changes with the input order: agreement to rounding, not to the bit.
    for (int64_t i = 0; i < set.n; ++i)
      CHECK(fb[size_t(i)] == doctest::Approx(fa[size_t(perm[size_t(i)])]).epsilon(1e-12));
    CHECK(b.summary().residual_scale == doctest::Approx(a.summary().residual_scale).epsilon(1e-12));
  }
}

TEST_CASE("student_t_quantile agrees with the closed forms at 1 and 2 degrees of freedom") {
  const double pi = std::acos(-1.0);
  for (const double p : {0.5, 0.6, 0.9, 0.975, 0.999, 1e-6, 0.3}) {
    CAPTURE(p);
    // df = 1 is the Cauchy distribution, t = tan(π(p − 1/2)) = −1/tan(πp) (the second form keeps its digits near
    // p = 0); df = 2 has t = (2p − 1)/√(2p(1 − p)).
    CHECK(loess::student_t_quantile(p, 1) == doctest::Approx(-1 / std::tan(pi * p)).epsilon(1e-12));
    CHECK(loess::student_t_quantile(p, 2) == doctest::Approx((2 * p - 1) / std::sqrt(2 * p * (1 - p))).epsilon(1e-12));
  }
  CHECK(std::isnan(loess::student_t_quantile(0, 3)));
  CHECK(std::isnan(loess::student_t_quantile(0.5, -1)));
}

TEST_CASE("loess refuses bad input with the status and problem that say why") {
  const double x[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, y[] = {1, 3, 2, 5, 4, 6, 8, 7, 9, 10};
  LoessOptions o;
  LoessModel m;
  CHECK(m.fit(x, y, nullptr, 0, o) == Status::BadShape);
  o.dims = 5;
  CHECK(m.fit(x, y, nullptr, 2, o) == Status::BadShape);
  o.dims = 1;
  const double nan_y[] = {1, 2, NAN, 4, 5, 6, 7, 8, 9, 10};
  CHECK(m.fit(x, nan_y, nullptr, 10, o) == Status::BadArgument);
  const double w[] = {1, 1, 1, -1, 1, 1, 1, 1, 1, 1};
  CHECK(m.fit(x, y, w, 10, o) == Status::BadArgument);
  for (const double span : {0.0, -1.0, double(INFINITY)}) {
    o.span = span;
    CHECK(m.fit(x, y, nullptr, 10, o) == Status::BadArgument);
    CHECK(m.problem() == LoessProblem::None);
  }
  o.span = 0.75;
  o.degree = 3;
  CHECK(m.fit(x, y, nullptr, 10, o) == Status::BadArgument);
  o.degree = 2;
  o.span = 0.3;  // 3 points per fit, degree 2 needs 4
  CHECK(m.fit(x, y, nullptr, 10, o) == Status::BadArgument);
  CHECK(m.problem() == LoessProblem::SpanTooSmall);
  const double ties[] = {1, 1, 1, 1, 1, 1, 1, 1, 2, 3};
  o.span = 0.5;
  CHECK(m.fit(ties, y, nullptr, 10, o) == Status::BadArgument);
  CHECK(m.problem() == LoessProblem::ZeroWidth);
  o.statistics = LoessStatistics::None;
  REQUIRE(m.fit(x, y, nullptr, 10, o) == Status::Ok);
  double q = 5, fit, se;
  CHECK(m.predict(&q, 1, &fit, nullptr) == Status::Ok);
  CHECK(m.predict(&q, 1, &fit, &se) == Status::BadArgument);
  q = NAN;
  CHECK(m.predict(&q, 1, &fit, nullptr) == Status::BadArgument);
}

TEST_CASE("1-D direct fits from block moments agree with the point-by-point sums") {
  // From q = 1024 points per fit the direct surface's values come from block moments; predictions with standard
  // errors still sum point by point (they need the operator rows), so the two routes meet at the data.
  const int64_t n = 20000;
  std::vector<double> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  uint32_t state = 99;
  const auto uniform = [&state] { return (state = state * 1664525u + 1013904223u) / 4294967296.0; };
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = 1000 + 50 * uniform() * uniform();  // dense at the left end, sparse at the right, far from 0
    y[size_t(i)] = std::sin(x[size_t(i)] / 4) + 0.3 * (uniform() - 0.5);
  }
  for (const int32_t degree : {0, 1, 2}) {
    for (const LoessFamily family : {LoessFamily::Gaussian, LoessFamily::Symmetric}) {
      CAPTURE(degree);
      LoessOptions o;
      o.span = 0.3;
      o.degree = degree;
      o.family = family;
      o.surface = LoessSurface::Direct;
      LoessModel model;
      REQUIRE(model.fit(x.data(), y.data(), nullptr, n, o) == Status::Ok);
      std::vector<double> fitted(static_cast<size_t>(n)), fit(static_cast<size_t>(n)), se(static_cast<size_t>(n));
      model.fitted(fitted.data());
      const int64_t m = 500;  // every 40th point
      std::vector<double> q(static_cast<size_t>(m));
      for (int64_t i = 0; i < m; ++i) q[size_t(i)] = x[size_t(i * 40)];
      REQUIRE(model.predict(q.data(), m, fit.data(), se.data()) == Status::Ok);
      double worst = 0;
      for (int64_t i = 0; i < m; ++i) worst = std::max(worst, std::fabs(fit[size_t(i)] - fitted[size_t(i * 40)]));
      CHECK(worst <= 1e-9);  // of range(y) ≈ 2.3
    }
  }
}

TEST_CASE("a point of prior weight 0 leaves every fit and standard error as its y would not matter") {
  // R counts it in the neighbourhoods (the span counts points) but gives it no weight: changing its y changes nothing
  // (R's own standard errors divide its zero operator entries by its zero weight, NaN; here they are skipped).
  const auto& set = loess_fixture::kDatasets[2];  // mcycle
  std::vector<double> w(size_t(set.n), 1.0), y(set.y, set.y + set.n);
  w[40] = 0;
  for (const LoessSurface surface : {LoessSurface::Interpolate, LoessSurface::Direct}) {
    LoessOptions o;
    o.span = 0.3;
    o.surface = surface;
    LoessModel a, b;
    REQUIRE(a.fit(set.x, y.data(), w.data(), set.n, o) == Status::Ok);
    y[40] += 1000;
    REQUIRE(b.fit(set.x, y.data(), w.data(), set.n, o) == Status::Ok);
    y[40] -= 1000;
    std::vector<double> fa(size_t(set.n)), fb(size_t(set.n)), sa(size_t(set.queries)), sb(size_t(set.queries)),
        pa(size_t(set.queries)), pb(size_t(set.queries));
    a.fitted(fa.data());
    b.fitted(fb.data());
    for (int64_t i = 0; i < set.n; ++i) CHECK(fb[size_t(i)] == doctest::Approx(fa[size_t(i)]).epsilon(1e-12));
    REQUIRE(a.predict(set.q, set.queries, pa.data(), sa.data()) == Status::Ok);
    REQUIRE(b.predict(set.q, set.queries, pb.data(), sb.data()) == Status::Ok);
    for (int j = 0; j < set.queries; ++j) {
      if (std::isnan(pa[size_t(j)])) continue;  // outside the box
      CHECK(std::isfinite(sa[size_t(j)]));
      CHECK(sb[size_t(j)] == doctest::Approx(sa[size_t(j)]).epsilon(1e-12));
    }
    CHECK(b.summary().residual_scale == doctest::Approx(a.summary().residual_scale).epsilon(1e-12));
  }
  std::vector<double> zero(size_t(set.n), 0.0);
  LoessModel m;
  CHECK(m.fit(set.x, set.y, zero.data(), set.n, LoessOptions{}) == Status::BadArgument);
}

TEST_CASE("loess on 2 and 3 threads gives one thread's bytes: fits, statistics, predictions, standard errors") {
  // Every third fixture case (both surfaces, 1-D and 2-D, both families; one thread's results are R's above: the
  // larger ones run on the threads, fits of under 2^15 operations in all on one), and 6,000 points on both surfaces
  // (the direct one's values and diagonal from block moments; its predictions with standard errors point by point).
  const auto same = [](const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                              [](double u, double v) { return std::memcmp(&u, &v, sizeof u) == 0; });
  };
  const auto outputs = [](const double* x, const double* y, const double* w, int64_t n, const double* q, int64_t m,
                          LoessOptions o, int32_t threads) {
    o.threads = threads;
    LoessModel model;
    std::vector<double> out(size_t(n + 2 * m + 5));
    REQUIRE(model.fit(x, y, w, n, o) == Status::Ok);
    model.fitted(out.data());
    REQUIRE(model.predict(q, m, out.data() + n, out.data() + n + m) == Status::Ok);
    const LoessSummary& s = model.summary();
    std::copy_n(&s.enp, 5, out.data() + n + 2 * m);  // enp … trace_hat: five doubles
    return out;
  };
  int cases = 0;
  for (const auto& c : loess_fixture::kCases) {
    if (cases++ % 3) continue;
    const auto& set = loess_fixture::kDatasets[c.dataset];
    CAPTURE(set.name);
    CAPTURE(c.surface);
    const LoessOptions o = options_of(c, set.dims);
    const auto one = outputs(set.x, set.y, c.weights, set.n, set.q, set.queries, o, 1);
    for (const int32_t threads : {2, 3})
      CHECK(same(outputs(set.x, set.y, c.weights, set.n, set.q, set.queries, o, threads), one));
  }
  const int64_t n = 6000;
  std::vector<double> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    x[size_t(i)] = std::fmod(i * 0.618034, 1.0) * 10;
    y[size_t(i)] = std::sin(x[size_t(i)]) + 0.1 * std::fmod(i * 0.414214, 1.0);
  }
  for (const LoessSurface surface : {LoessSurface::Direct, LoessSurface::Interpolate}) {
    for (const int32_t degree : {1, 2}) {
      CAPTURE(degree);
      LoessOptions o;
      o.span = 0.3;
      o.degree = degree;
      o.surface = surface;
      const auto one = outputs(x.data(), y.data(), nullptr, n, x.data(), 100, o, 1);
      CHECK(same(outputs(x.data(), y.data(), nullptr, n, x.data(), 100, o, 2), one));
    }
  }
}
