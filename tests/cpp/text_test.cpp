// format_text (base/text.h) against the C library's snprintf, the independent reference, for every conversion it
// takes: %g over 24 orders of magnitude (random mantissas, powers of ten, the values next to them, carries such as
// 9.999995), %.0f and %.1f for counts and percentages, %lld, %s, %%, and truncation.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "base/text.h"

using namespace ka;

namespace {

template <class... Args>
void same_as_printf(const char* format, Args... args) {
  char ours[160], libc[160];
  format_text(ours, sizeof ours, format, args...);
  std::snprintf(libc, sizeof libc, format, args...);
  CHECK_MESSAGE(std::string(ours) == std::string(libc), format, " gave ", ours, ", printf ", libc);
}

}  // namespace

TEST_CASE("format_text: %g as printf writes it") {
  for (double v :
       {0.0,      -0.0,     1.0, -1.0,      0.5,      0.001,     1e-3,      5e-4,  1e-4,  9.99e-5, 1e-5,  2.5e-7,
        123456.0, 999999.0, 1e6, 1234567.0, 9.999995, 9.9999949, 0.1 + 0.2, 100.0, 1e-10, 3e21,    0.015, 0.0625})
    same_as_printf("%g", v);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(1, 10);
  for (int e = -12; e <= 12; ++e) {
    const double p = std::pow(10.0, e);
    same_as_printf("%g", p);
    same_as_printf("%g", std::nextafter(p, 0.0));
    same_as_printf("%g", std::nextafter(p, 1e300));
    for (int k = 0; k < 200; ++k) same_as_printf("%g", unit(rng) * p);
  }
}

TEST_CASE("format_text: %.0f, %.1f, %lld, %s and %%") {
  for (double n : {0.0, 1.0, 1048576.0, 4294967296.0, 1e13, 123456789012.0, 2.5, 3.5}) same_as_printf("%.0f", n);
  for (double pct : {0.0, 0.04, 0.05, 0.15, 14.96, 15.0, 99.94, 99.96, 100.0, 12.345}) same_as_printf("%.1f %%", pct);
  for (long long n : {0LL, 7LL, -7LL, 20000LL, 1LL << 40, -(1LL << 62)}) same_as_printf("%lld", n);
  same_as_printf("%lld-D %s, %.1f %% of keys within reach at tolerance %g: %s", 2LL, "gaussian", 13.27, 1e-3, "ok");
}

TEST_CASE("format_text: truncates and terminates as snprintf does") {
  char ours[8], libc[8];
  format_text(ours, sizeof ours, "%s: %lld", "exact", 123456LL);
  std::snprintf(libc, sizeof libc, "%s: %lld", "exact", 123456LL);
  CHECK(std::string(ours) == std::string(libc));
  char one[1] = {'x'};
  format_text(one, 1, "%g", 1.5);
  CHECK(one[0] == 0);
}
