// The shifted sums: rescaling moves sums of weights by e^(m − c) and of squared weights by its square, as a float64
// loop under the final shift computes them, in natural and log2 units and in mixed precision; MomentLayout places a,
// t, the extra sums and b as the local fits read them.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/shifted_sums.h"

using namespace ka;

TEST_CASE("sums added under a rising shift equal the float64 sums under the final shift") {
  const std::vector<double> s = {-3.0, 1.0, 40.0, 39.0, -700.0, 40.5, 2.5};
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7};
  for (const bool log2 : {false, true}) {
    CAPTURE(log2);
    std::vector<double> block(3);  // Σw, Σw·x, Σw²
    ShiftedSums<double> natural(block.data(), 2, 1);
    ShiftedSums<double, true> binary(block.data(), 2, 1);
    natural.clear();
    binary.clear();
    double& max = log2 ? binary.max : natural.max;
    for (size_t j = 0; j < s.size(); ++j) {
      if (s[j] > max) log2 ? binary.rescale_to(s[j]) : natural.rescale_to(s[j]);
      const double w = log2 ? std::exp2(s[j] - max) : std::exp(s[j] - max);
      block[0] += w;
      block[1] += w * x[j];
      block[2] += w * w;
    }
    double z = 0, a = 0, z2 = 0;
    for (size_t j = 0; j < s.size(); ++j) {
      const double w = log2 ? std::exp2(s[j] - 40.5) : std::exp(s[j] - 40.5);
      z += w;
      a += w * x[j];
      z2 += w * w;
    }
    CHECK(max == 40.5);
    // Each rescale rounds once (a few here): a few ulps.
    CHECK(block[0] == doctest::Approx(z).epsilon(1e-14));
    CHECK(block[1] == doctest::Approx(a).epsilon(1e-14));
    CHECK(block[2] == doctest::Approx(z2).epsilon(1e-14));
  }
}

TEST_CASE("rescale_to scales each run in its own precision, by the factor computed in the shift's type") {
  float max = 3.0f;
  double z = 10.0;
  float acc[2] = {4.0f, -8.0f};
  double sq = 16.0;
  const float f =
      rescale_to<true>(max, 5.0f, SumRun<double>{&z, 1}, SumRun<float>{acc, 2}, SumRun<double, true>{&sq, 1});
  CHECK(f == 0.25f);
  CHECK(max == 5.0f);
  CHECK(z == 2.5);
  CHECK((acc[0] == 1.0f && acc[1] == -2.0f));
  CHECK(sq == 1.0);
  // From −inf nothing was summed: the factor is 0.
  float none = -INFINITY;
  double s0 = 0;
  CHECK(rescale_to<false>(none, 1.0f, SumRun<double>{&s0, 1}) == 0.0f);
  CHECK(none == 1.0f);
}

TEST_CASE("MomentLayout places a, t, the extra sums, b and the extra squared sums in one block") {
  const MomentLayout m{3, 2, true, 4, 2};  // p = 3, two value columns
  CHECK(m.t() == 9);
  CHECK(m.extra_at() == 15);
  CHECK(m.linear() == 19);
  CHECK(m.b() == 19);
  CHECK(m.extra_squared_at() == 28);
  CHECK(m.squared() == 11);
  CHECK(m.size() == 30);
  std::vector<double> block(size_t(m.size()), 1.0);
  MomentSums<double> sums(block.data(), m);
  sums.max = 0;
  sums.rescale_to(1);  // f = e^-1: the sums of weights by f, the squared ones by f²
  CHECK(sums.a()[0] == doctest::Approx(std::exp(-1.0)).epsilon(1e-15));
  CHECK(sums.extra()[3] == doctest::Approx(std::exp(-1.0)).epsilon(1e-15));
  CHECK(sums.b()[0] == doctest::Approx(std::exp(-2.0)).epsilon(1e-15));
  CHECK(sums.extra_squared()[1] == doctest::Approx(std::exp(-2.0)).epsilon(1e-15));
  // p = 1 without squares: Σw, then the value sums (the online-softmax state).
  const MomentLayout nw{1, 4};
  CHECK((nw.t() == 1 && nw.linear() == 5 && nw.squared() == 0 && nw.size() == 5));
}
