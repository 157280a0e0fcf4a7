// The L-BFGS minimiser on functions with known minima, the CV gradient against central finite differences of
// cv_score() (the exact CV, an independent code path: local_fit, not the attention backward), and the learned
// bandwidths of select_cv_gradient() on data with irrelevant inputs (ARD) against select_cv's coordinate search.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "stats/bandwidth.h"
#include "stats/lbfgs.h"

using namespace ka;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// x uniform on [0, 1]^dims, y = sin(2π x_1) + N(0, 0.2²): only the first input matters.
struct Sample {
  std::vector<float> x, y;
  Problem p;
  Sample(int64_t n, int64_t dims, uint32_t seed, KernelKind kind = KernelKind::Gaussian) {
    // Uniforms from the raw mt19937 stream: the same numbers natively and in wasm (the standard fixes mt19937, not
    // uniform_real_distribution or normal_distribution, which differ between libstdc++ and libc++).
    std::mt19937 rng(seed);
    const auto u = [&rng]() { return float(rng() >> 8) * 0x1p-24f; };
    x.resize(size_t(n * dims));
    y.resize(size_t(n));
    for (auto& v : x) v = u();
    // Normal noise by Box–Muller.
    for (int64_t i = 0; i < n; ++i) {
      const double r = std::sqrt(-2 * std::log(1 - double(u()))), a = 6.283185307179586 * double(u());
      y[size_t(i)] = float(std::sin(6.283185307179586 * x[size_t(i * dims)]) + 0.2 * r * std::cos(a));
    }
    p.queries = {x.data(), n, dims, dims};
    p.keys = p.queries;
    p.values = {y.data(), n, 1, 1};
    p.kernel = {kind, 1.0, nullptr};
  }
};

double cv(const Problem& p, std::vector<double> h) {
  double s = 0;
  REQUIRE(cv_score(p, h.data(), &s).status == Status::Ok);
  return s;
}

// The CV gradient at h as select_cv_gradient computes it: its first (and, with max_iterations 0, only) evaluation.
std::vector<double> gradient_at(const Problem& p, std::vector<double> h, int32_t rank = 0,
                                std::vector<double>* transform = nullptr) {
  const int64_t params = rank ? rank * p.queries.cols : p.queries.cols;
  std::vector<double> bw(static_cast<size_t>(params)), grad(bw.size()), l(bw.size());
  double score = 0, f = 0;
  CvCurve curve{bw.data(), &f, 1, 0, grad.data()};
  GradientSearch search;
  search.rank = rank;
  search.transform = l.data();
  search.max_iterations = 0;
  REQUIRE(select_cv_gradient(p, h.data(), &score, &curve, {}, {}, &search).status == Status::Ok);
  REQUIRE(curve.count == 1);
  if (transform) *transform = l;
  return grad;
}

}  // namespace

TEST_CASE("L-BFGS finds the minimum of a quadratic, of Rosenbrock's function, and of a quadratic cut by a box") {
  const double free_lo[2] = {-kInf, -kInf}, free_hi[2] = {kInf, kInf};
  LbfgsOptions o;
  o.max_iterations = 200;
  o.gradient_tolerance = 1e-10;
  o.improvement_tolerance = 0;
  SUBCASE("an ill-conditioned quadratic, f = (x − 3)² + 100 (y + 1)² + 10 x y") {
    const auto quad = [](const double* v, double, double* g) {
      const double x = v[0], y = v[1];
      g[0] = 2 * (x - 3) + 10 * y;
      g[1] = 200 * (y + 1) + 10 * x;
      return (x - 3) * (x - 3) + 100 * (y + 1) * (y + 1) + 10 * x * y;
    };
    // The gradient vanishes where [2 10; 10 200] (x, y) = (6, −200).
    const double det = 2 * 200 - 10 * 10, want_x = (6 * 200 - 10 * -200) / det, want_y = (2 * -200 - 10 * 6) / det;
    double v[2] = {0, 0}, f = 0;
    const LbfgsStop stop = lbfgs_box(2, v, free_lo, free_hi, quad, o, &f);
    CHECK((stop == LbfgsStop::Gradient || stop == LbfgsStop::Improvement || stop == LbfgsStop::LineSearch));
    CHECK(v[0] == doctest::Approx(want_x).epsilon(1e-6));
    CHECK(v[1] == doctest::Approx(want_y).epsilon(1e-6));
  }
  SUBCASE("Rosenbrock from (−1.2, 1)") {
    int calls = 0;
    const auto rosen = [&](const double* v, double, double* g) {
      ++calls;
      const double x = v[0], y = v[1];
      g[0] = -2 * (1 - x) - 400 * x * (y - x * x);
      g[1] = 200 * (y - x * x);
      return (1 - x) * (1 - x) + 100 * (y - x * x) * (y - x * x);
    };
    double v[2] = {-1.2, 1}, f = 0;
    int32_t iterations = 0;
    lbfgs_box(2, v, free_lo, free_hi, rosen, o, &f, &iterations);
    CHECK(v[0] == doctest::Approx(1).epsilon(1e-5));
    CHECK(v[1] == doctest::Approx(1).epsilon(1e-5));
    CHECK(iterations < 100);  // steepest descent needs thousands
    CHECK(calls < 300);
  }
  SUBCASE("a box that excludes the free minimum (2, −3): the result is its projection onto the box") {
    const double lo[2] = {-1, -1}, hi[2] = {1, 1};
    const auto bowl = [](const double* v, double, double* g) {
      g[0] = 2 * (v[0] - 2);
      g[1] = 2 * (v[1] + 3);
      return (v[0] - 2) * (v[0] - 2) + (v[1] + 3) * (v[1] + 3);
    };
    double v[2] = {0.5, 0.5}, f = 0;
    CHECK(lbfgs_box(2, v, lo, hi, bowl, o, &f) == LbfgsStop::Gradient);
    CHECK(v[0] == 1);
    CHECK(v[1] == -1);
  }
  SUBCASE("a start where f is not finite fails; NaN aborts") {
    double v[1] = {0}, f = 0;
    CHECK(lbfgs_box(
              1, v, free_lo, free_hi, [](const double*, double, double*) { return kInf; }, o, &f) == LbfgsStop::Failed);
    CHECK(lbfgs_box(
              1, v, free_lo, free_hi, [](const double*, double, double*) { return std::nan(""); }, o, &f) ==
          LbfgsStop::Aborted);
  }
}

TEST_CASE("the CV gradient equals central finite differences of cv_score in log h") {
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Cauchy, KernelKind::Epanechnikov}) {
    const Sample s(90, 3, 21 + uint32_t(kind), kind);
    // Bandwidths near the CV optimum of the relevant input and larger for the others; compact kernels wider.
    const double widen = kind == KernelKind::Epanechnikov ? 2.5 : 1.0;
    const std::vector<double> h = {0.08 * widen, 0.3 * widen, 0.6 * widen};
    const std::vector<double> g = gradient_at(s.p, h);
    double largest = 0;
    for (double v : g) largest = std::max(largest, std::fabs(v));
    REQUIRE(largest > 0);
    for (size_t d = 0; d < 3; ++d) {
      const double step =
          kind == KernelKind::Epanechnikov ? 5e-4 : 2e-3;  // its CV has kinks (pairs at the support edge)
      std::vector<double> up = h, down = h;
      up[d] *= std::exp(step);
      down[d] *= std::exp(-step);
      const double fd = (cv(s.p, up) - cv(s.p, down)) / (2 * step);
      CAPTURE(int(kind));
      CAPTURE(d);
      CAPTURE(g[d]);
      CAPTURE(fd);
      CHECK(std::fabs(g[d] - fd) <= 1e-3 * largest + 1e-3 * std::fabs(fd));
    }
  }
}

TEST_CASE("the metric gradient (u = L(q − k)) equals finite differences of cv_score on the transformed sample") {
  const Sample s(80, 2, 31);
  const std::vector<double> h = {0.1, 0.4};
  std::vector<double> start;
  const std::vector<double> g = gradient_at(s.p, h, 2, &start);
  // The start is diag(1/h), and ∂CV/∂L_dd = −h_d ∂CV/∂log h_d there.
  REQUIRE(start.size() == 4);
  CHECK(start[0] == doctest::Approx(10));
  CHECK(start[3] == doctest::Approx(2.5));
  const std::vector<double> diag = gradient_at(s.p, h);
  CHECK(g[0] == doctest::Approx(-h[0] * diag[0]).epsilon(2e-3));
  CHECK(g[3] == doctest::Approx(-h[1] * diag[1]).epsilon(2e-3));
  // Every entry, off-diagonal ones included, against CV of x' = L x with unit bandwidths.
  const auto cv_of = [&](const std::vector<double>& l) {
    std::vector<float> xt(160);
    for (int64_t i = 0; i < 80; ++i)
      for (int r = 0; r < 2; ++r)
        xt[size_t(i * 2 + r)] =
            float(l[size_t(r * 2)] * s.x[size_t(i * 2)] + l[size_t(r * 2 + 1)] * s.x[size_t(i * 2 + 1)]);
    Problem p = s.p;
    p.queries = p.keys = {xt.data(), 80, 2, 2};
    return cv(p, {1.0, 1.0});
  };
  double largest = 0;
  for (double v : g) largest = std::max(largest, std::fabs(v));
  for (size_t a = 0; a < 4; ++a) {
    const double step = 1e-3 * std::max(1.0, std::fabs(start[a]));
    std::vector<double> up = start, down = start;
    up[a] += step;
    down[a] -= step;
    const double fd = (cv_of(up) - cv_of(down)) / (2 * step);
    CAPTURE(a);
    CAPTURE(g[a]);
    CAPTURE(fd);
    CHECK(std::fabs(g[a] - fd) <= 2e-3 * largest);
  }
}

TEST_CASE(
    "ARD: with y depending on x1 only, the gradient search shrinks h1 and lets h2..h5 grow, and beats the "
    "coordinate search's CV") {
  const Sample s(300, 5, 41);
  std::vector<double> start(5), h(5), h_cd(5);
  REQUIRE(rule_of_thumb(s.p.queries, Rule::Scott, start.data()) == Status::Ok);
  h = h_cd = start;
  std::vector<double> bw(256 * 5), grads(256 * 5), scores(256);
  CvCurve curve{bw.data(), scores.data(), 256, 0, grads.data()};
  GradientSearch search;
  double score = 0, score_cd = 0;
  REQUIRE(select_cv_gradient(s.p, h.data(), &score, &curve, {}, {}, &search).status == Status::Ok);
  REQUIRE(select_cv(s.p, true, h_cd.data(), &score_cd, nullptr).status == Status::Ok);
  CAPTURE(h[0]);
  CAPTURE(h[1]);
  CAPTURE(h[2]);
  CAPTURE(h[3]);
  CAPTURE(h[4]);
  CAPTURE(search.iterations);
  CAPTURE(curve.count);
  CAPTURE(score);
  CAPTURE(score_cd);
  for (size_t d = 1; d < 5; ++d) CHECK(h[d] >= 10 * h[0]);
  for (size_t d = 0; d < 5; ++d) {  // within the documented box around the start
    CHECK(h[d] >= start[d] / kBandwidthBox * (1 - 1e-12));
    CHECK(h[d] <= start[d] * kBandwidthBox * (1 + 1e-12));
  }
  // Judged by the exact CV of both choices (cv_score, not either search's own figure).
  const double ours = cv(s.p, h), theirs = cv(s.p, h_cd);
  CAPTURE(ours);
  CAPTURE(theirs);
  CHECK(ours <= theirs * (1 + 1e-5));
  CHECK(score == doctest::Approx(ours).epsilon(1e-4));
  // The curve: one entry per evaluation, the reported score its minimum, gradients where the point was accepted.
  REQUIRE(curve.count > search.iterations);
  CHECK(score == *std::min_element(scores.begin(), scores.begin() + curve.count));
  CHECK(!std::isnan(grads[0]));
}

TEST_CASE("a cancelled gradient search resumes from its curve to the same result") {
  const Sample s(120, 2, 51);
  std::vector<double> start(2);
  REQUIRE(rule_of_thumb(s.p.queries, Rule::Scott, start.data()) == Status::Ok);
  std::vector<double> h = start, bw(512), grads(512), scores(256);
  CvCurve curve{bw.data(), scores.data(), 256, 0, grads.data()};
  GradientSearch search;
  double score = 0;
  REQUIRE(select_cv_gradient(s.p, h.data(), &score, &curve, {}, {}, &search).status == Status::Ok);
  REQUIRE(curve.count >= 4);
  // Stop after every single new evaluation and resume, as selectBandwidthAsync does.
  std::vector<double> bw2(512), grads2(512), scores2(256), h2 = start;
  CvCurve resumed{bw2.data(), scores2.data(), 256, 0, grads2.data()};
  int32_t stop_at = 0, rounds = 0;
  const SearchProgress progress{[](void* c, int32_t done) { return done < *static_cast<int32_t*>(c); }, &stop_at};
  double score2 = 0;
  for (;;) {
    stop_at = resumed.count + 1;
    h2 = start;
    GradientSearch again;
    const Status st = select_cv_gradient(s.p, h2.data(), &score2, &resumed, {}, progress, &again).status;
    ++rounds;
    if (st == Status::Ok) break;
    REQUIRE(st == Status::Cancelled);
    CHECK(h2 == start);  // a cancelled search leaves h alone
    REQUIRE(rounds < 300);
  }
  CHECK(resumed.count == curve.count);
  CHECK(h2 == h);
  CHECK(score2 == score);
  // A curve of other inputs is refused.
  std::vector<double> other = {start[0] * 2, start[1]};
  CvCurve stale{bw2.data(), scores2.data(), 256, resumed.count, grads2.data()};
  GradientSearch third;
  CHECK(select_cv_gradient(s.p, other.data(), &score2, &stale, {}, {}, &third).status == Status::BadArgument);
}

TEST_CASE("the gradient search refuses what it cannot differentiate or does not model") {
  Sample s(40, 2, 61);
  std::vector<double> h = {0.2, 0.2};
  std::vector<float> omega(40, 1.0f);
  double score = 0;
  GradientSearch search;
  CHECK(select_cv_gradient(s.p, h.data(), &score, nullptr, {Estimator::LocalLinear}, {}, &search).status ==
        Status::BadArgument);
  CHECK(select_cv_gradient(s.p, h.data(), &score, nullptr, {Estimator::NadarayaWatson, Score::AICc}, {}, &search)
            .status == Status::BadArgument);
  CHECK(select_cv_gradient(s.p, h.data(), &score, nullptr,
                           {Estimator::NadarayaWatson, Score::LeaveOneOut, omega.data()}, {}, &search)
            .status == Status::BadArgument);
  s.p.kernel.kind = KernelKind::Uniform;
  CHECK(select_cv_gradient(s.p, h.data(), &score, nullptr, {}, {}, &search).status == Status::BadArgument);
}
