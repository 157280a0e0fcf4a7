// lowess() against R's lowess() outputs (the statsmodels test data) and a float64 reference that follows R's C code
// step by step, both in tests/fixtures/lowess_r.h (made by tests/fixtures/make_lowess.py); then input order,
// threads, the inputs left untouched, and the argument checks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../fixtures/lowess_r.h"
#include "stats/lowess.h"

using namespace ka;

namespace {

double range_of(const double* v, int64_t n) {
  const auto [lo, hi] = std::minmax_element(v, v + n);
  return *hi - *lo;
}

LowessOptions options_of(const lowess_fixture::Case& c, int32_t threads = 1) {
  LowessOptions o;
  o.frac = c.frac;
  o.iterations = c.iterations;
  o.delta = c.delta;
  o.threads = threads;
  return o;
}

}  // namespace

TEST_CASE("lowess matches R's lowess and the step-by-step reference") {
  for (const auto& c : lowess_fixture::kCases) {
    const std::string name = c.name;
    CAPTURE(name);
    std::vector<double> fitted(size_t(c.n)), weights(size_t(c.n));
    REQUIRE(lowess(c.x, c.y, c.n, options_of(c), fitted.data(), weights.data()) == Status::Ok);
    // The target is 1e-5 of range(y); both sides follow R's branch decisions, so the test holds a tighter bound.
    // Most cases agree to 1e-13; x = 1e6 + [0, 1] with 1,080 points per fit (an 80-bit reference there, as R's own
    // float64 sums of raw x drift by 5e-5) to about 1e-8.
    const double tol = 1e-7 * std::max(range_of(c.y, c.n), 1.0);
    for (int64_t j = 0; j < c.n; ++j) {
      CAPTURE(j);
      CHECK(std::fabs(fitted[size_t(j)] - c.fitted[j]) <= tol);
      if (c.weights) CHECK(std::fabs(weights[size_t(j)] - c.weights[j]) <= 1e-7);
    }
  }
}

TEST_CASE("lowess gives each point its own fit whatever the input order") {
  // Distinct x: any permutation of the input sorts to the same arrays, so the results move with their points, bit
  // for bit. (With ties the order within a tie group is R's stable order, which the unsorted fixture cases check.)
  for (const auto& k : lowess_fixture::kCases) {
    if (std::string(k.name) != "uniform n=1000 f=0.1") continue;
    std::vector<double> fitted(size_t(k.n)), weights(size_t(k.n));
    REQUIRE(lowess(k.x, k.y, k.n, options_of(k), fitted.data(), weights.data()) == Status::Ok);
    std::vector<int64_t> perm(size_t(k.n));
    std::iota(perm.begin(), perm.end(), int64_t(0));
    std::shuffle(perm.begin(), perm.end(), std::mt19937(3));
    std::vector<double> px(size_t(k.n)), py(size_t(k.n)), pf(size_t(k.n)), pw(size_t(k.n));
    for (int64_t j = 0; j < k.n; ++j) {
      px[size_t(j)] = k.x[perm[size_t(j)]];
      py[size_t(j)] = k.y[perm[size_t(j)]];
    }
    REQUIRE(lowess(px.data(), py.data(), k.n, options_of(k), pf.data(), pw.data()) == Status::Ok);
    for (int64_t j = 0; j < k.n; ++j) {
      CAPTURE(j);
      CHECK(pf[size_t(j)] == fitted[size_t(perm[size_t(j)])]);
      CHECK(pw[size_t(j)] == weights[size_t(perm[size_t(j)])]);
    }
  }
}

TEST_CASE("lowess: threads give the same bits, inputs are left untouched") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0, 10);
  std::normal_distribution<double> e(0, 0.5);
  const int64_t n = 3001;
  std::vector<double> x(n), y(n);
  for (int64_t j = 0; j < n; ++j) {
    x[size_t(j)] = std::round(u(rng) * 100) / 100;  // ties
    y[size_t(j)] = std::sin(x[size_t(j)]) + e(rng);
  }
  const std::vector<double> x0 = x, y0 = y;
  for (double delta : {0.0, 0.1}) {
    CAPTURE(delta);
    LowessOptions o;
    o.frac = 0.5;  // k = 1500: the block-moment sums
    o.delta = delta;
    std::vector<double> one(n), many(n), w1(n), wm(n);
    REQUIRE(lowess(x.data(), y.data(), n, o, one.data(), w1.data()) == Status::Ok);
    o.threads = 3;
    REQUIRE(lowess(x.data(), y.data(), n, o, many.data(), wm.data()) == Status::Ok);
    CHECK(one == many);
    CHECK(w1 == wm);
  }
  CHECK(x == x0);
  CHECK(y == y0);
}

TEST_CASE("lowess rejects bad arguments with a status") {
  const double x[3] = {0, 1, 2}, y[3] = {1, 2, 3}, bad[3] = {0, NAN, 2};
  double out[3];
  LowessOptions o;
  CHECK(lowess(x, y, 0, o, out, nullptr) == Status::BadShape);
  CHECK(lowess(x, y, 3, o, out, nullptr) == Status::Ok);  // weights may be null
  CHECK(lowess(bad, y, 3, o, out, nullptr) == Status::BadArgument);
  CHECK(lowess(x, bad, 3, o, out, nullptr) == Status::BadArgument);
  for (double f : {0.0, -0.5, 1.5, double(NAN)}) {
    o = LowessOptions{};
    o.frac = f;
    CHECK(lowess(x, y, 3, o, out, nullptr) == Status::BadArgument);
  }
  o = LowessOptions{};
  o.iterations = -1;
  CHECK(lowess(x, y, 3, o, out, nullptr) == Status::BadArgument);
  o = LowessOptions{};
  for (double d : {-1.0, double(INFINITY), double(NAN)}) {
    o.delta = d;
    CHECK(lowess(x, y, 3, o, out, nullptr) == Status::BadArgument);
  }
}
