// The table-free sin, cos and tan (base/math.h) against the C library's, the independent reference: errors in units
// in the last place of the reference over random arguments across 2^-30 … 2^20·π/2, the special values, and the error
// bound beyond 2^20·π/2.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include "base/math.h"

namespace {

double ulps(double ours, double reference) {
  if (ours == reference) return 0;
  const double a = std::fabs(reference);
  const double ulp = std::nextafter(a, std::numeric_limits<double>::infinity()) - a;
  return std::fabs(ours - reference) / ulp;
}

}  // namespace

TEST_CASE("math::sin, cos, tan, sin_cos: within 1, 1, 2 ulp of the C library's up to 2^20·π/2") {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> unit(1, 2);
  std::uniform_int_distribution<int> exponent(-30, 20);
  double worst_sin = 0, worst_cos = 0, worst_tan = 0;
  for (int i = 0; i < 400000; ++i) {
    const double x = (i % 2 ? -1 : 1) * std::ldexp(unit(rng), exponent(rng));
    double s, c;
    ka::math::sin_cos(x, &s, &c);
    CHECK(s == ka::math::sin(x));
    CHECK(c == ka::math::cos(x));
    worst_sin = std::max(worst_sin, ulps(s, std::sin(x)));
    worst_cos = std::max(worst_cos, ulps(c, std::cos(x)));
    worst_tan = std::max(worst_tan, ulps(ka::math::tan(x), std::tan(x)));
  }
  MESSAGE("sin ", worst_sin, ", cos ", worst_cos, ", tan ", worst_tan, " ulp");
  CHECK(worst_sin <= 1);
  CHECK(worst_cos <= 1);
  CHECK(worst_tan <= 2);
  CHECK(ka::math::sin(0.0) == 0.0);
  CHECK(std::signbit(ka::math::sin(-0.0)));
  CHECK(std::signbit(ka::math::tan(-0.0)));
  CHECK(ka::math::cos(0.0) == 1.0);
  for (double bad : {std::numeric_limits<double>::infinity(), std::nan("")}) {
    CHECK(std::isnan(ka::math::sin(bad)));
    CHECK(std::isnan(ka::math::cos(-bad)));
    CHECK(std::isnan(ka::math::tan(bad)));
  }
}

TEST_CASE("math::sin and cos beyond 2^20·π/2: off by at most about one ulp of the argument, and within [-1, 1]") {
  std::mt19937_64 rng(13);
  std::uniform_real_distribution<double> unit(1, 2);
  std::uniform_int_distribution<int> exponent(21, 1023);
  for (int i = 0; i < 20000; ++i) {
    const double x = std::ldexp(unit(rng), exponent(rng));
    const double ulp_x = std::nextafter(x, std::numeric_limits<double>::infinity()) - x;
    const double s = ka::math::sin(x), c = ka::math::cos(x);
    REQUIRE(std::fabs(s) <= 1);
    REQUIRE(std::fabs(c) <= 1);
    if (ulp_x < 1e-3) {  // where the argument still fixes its phase
      CHECK(std::fabs(s - std::sin(x)) <= 2 * ulp_x + 1e-15);
      CHECK(std::fabs(c - std::cos(x)) <= 2 * ulp_x + 1e-15);
    }
  }
}
