// The online-softmax state: merging in any order equals one pass; extreme scores never give 0/0 or inf/inf; the batch
// forms (add_block, exponentiate_row) and a state with squares against float64 loops.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/online_softmax.h"

using namespace ka;

namespace {

struct Owned {
  std::vector<double> block;
  SoftmaxState<double> st;
  double* acc;
  explicit Owned(int64_t width, bool squares = false)
      : block(size_t(2 + width)), st(block.data(), width, squares), acc(st.acc()) {
    st.reset();
  }
  Owned(const Owned&) = delete;
};

double reference(const std::vector<double>& s, const std::vector<float>& v) {
  double m = -INFINITY, z = 0, a = 0;
  for (double x : s) m = std::max(m, x);
  for (size_t j = 0; j < s.size(); ++j) {
    z += std::exp(s[j] - m);
    a += std::exp(s[j] - m) * v[j];
  }
  return a / z;
}

}  // namespace

TEST_CASE("merging partial states in any split and order equals the one-pass result") {
  const std::vector<double> s = {1.0, -3.0, 700.0, 699.5, -INFINITY, 2.0, 650.0};
  const std::vector<float> v = {1, 2, 3, 4, 5, 6, 7};
  const double want = reference(s, v);
  for (size_t split = 0; split <= s.size(); ++split) {
    Owned a(1), b(1);
    for (size_t j = 0; j < split; ++j) a.st.add(s[j], &v[j]);
    for (size_t j = split; j < s.size(); ++j) b.st.add(s[j], &v[j]);
    Owned ab(1), ba(1);
    ab.st.merge(a.st);
    ab.st.merge(b.st);
    ba.st.merge(b.st);
    ba.st.merge(a.st);
    float x = 0, y = 0;
    REQUIRE(finalize(ab.st, &x, EmptyPolicy::NaN) == RowOutcome::Done);
    REQUIRE(finalize(ba.st, &y, EmptyPolicy::NaN) == RowOutcome::Done);
    CAPTURE(split);
    CHECK(x == doctest::Approx(want).epsilon(1e-7));
    CHECK(y == doctest::Approx(want).epsilon(1e-7));
  }
}

TEST_CASE("huge and tiny scores give the arg-max value, and exact ties average") {
  Owned o(1);
  const float v[3] = {10, 20, 30};
  o.st.add(-1e300, &v[0]);
  o.st.add(-1e300 + 1e290, &v[1]);
  float out = 0;
  REQUIRE(finalize(o.st, &out, EmptyPolicy::NaN) == RowOutcome::Done);
  CHECK(out == 20.0f);
  o.st.reset();
  o.st.add(1e300, &v[0]);
  o.st.add(1e300, &v[2]);
  REQUIRE(finalize(o.st, &out, EmptyPolicy::NaN) == RowOutcome::Done);
  CHECK(out == 20.0f);
}

TEST_CASE("an empty row follows the policy and is decided in one place") {
  Owned o(2);
  o.st.add(-INFINITY, nullptr);  // outside the support: contributes nothing
  float out[2] = {5, 5};
  CHECK(finalize(o.st, out, EmptyPolicy::NaN) == RowOutcome::Done);
  CHECK(std::isnan(out[0]));
  CHECK(std::isnan(out[1]));
  CHECK(finalize(o.st, out, EmptyPolicy::Zero) == RowOutcome::Done);
  CHECK(out[0] == 0.0f);
  CHECK(finalize(o.st, out, EmptyPolicy::Error) == RowOutcome::Error);
  Owned empty(2);
  o.st.merge(empty.st);
  CHECK(o.st.empty());
}

TEST_CASE("an empty row under Nearest: the mean of the nearest keys' values, their weights, or the known end keys") {
  // Query 0 at x = 0.9 against keys at 0, 1, 1 and 3 (two values each); the nearest admissible keys are the two at 1.
  const float q[1] = {0.9f}, k[4] = {0, 1, 1, 3}, v[8] = {1, 2, 10, 20, 30, 40, 5, 6}, h[1] = {0.5f};
  Masks masks;
  const Head hd{{q, 1, 1, 1}, {k, 4, 1, 1},        {v, 4, 2, 2}, {KernelKind::Epanechnikov, 1.0, h},
                &masks,       EmptyPolicy::Nearest};
  uint8_t chosen[4];
  int64_t found = -1;
  float out[4] = {-1, -1, -1, -1};
  REQUIRE(finalize_empty_row(2, out, EmptyPolicy::Nearest, NearestKeys{&hd, 0, chosen, &found}) == RowOutcome::Done);
  CHECK(found == 2);
  CHECK(out[0] == 20.0f);  // (10 + 30) / 2
  CHECK(out[1] == 30.0f);
  CHECK((chosen[0] == 0 && chosen[1] == 1 && chosen[2] == 1 && chosen[3] == 0));
  // weights(): 1/n on each nearest key, over the J keys.
  REQUIRE(finalize_empty_row(4, out, EmptyPolicy::Nearest, NearestKeys{&hd, 0, chosen, nullptr, true}) ==
          RowOutcome::Done);
  CHECK((out[0] == 0.0f && out[1] == 0.5f && out[2] == 0.5f && out[3] == 0.0f));
  // Keys a caller found itself: their value sums and count.
  const double sums[2] = {9, 3};
  NearestKeys known;
  known.known_sums = sums;
  known.known_count = 3;
  REQUIRE(finalize_empty_row(2, out, EmptyPolicy::Nearest, known) == RowOutcome::Done);
  CHECK((out[0] == 3.0f && out[1] == 1.0f));
  // A row of width 0 asks only for the outcome.
  CHECK(finalize_empty_row(0, nullptr, EmptyPolicy::Error) == RowOutcome::Error);
  CHECK(finalize_empty_row(0, nullptr, EmptyPolicy::Nearest) == RowOutcome::Done);
  // No admissible key at all: zeros.
  const uint8_t none[4] = {1, 1, 1, 1};
  masks.key_padding = none;
  REQUIRE(finalize_empty_row(2, out, EmptyPolicy::Nearest, NearestKeys{&hd, 0, chosen, &found}) == RowOutcome::Done);
  CHECK(found == 0);
  CHECK((out[0] == 0.0f && out[1] == 0.0f));
}

TEST_CASE("mean_to_float clamps a finite mean beyond float32 to its largest value and passes inf and NaN") {
  constexpr float kMax = std::numeric_limits<float>::max();
  CHECK(mean_to_float(1e39) == kMax);
  CHECK(mean_to_float(-1e300) == -kMax);
  CHECK(mean_to_float(0.1) == 0.1f);
  CHECK(mean_to_float(INFINITY) == INFINITY);
  CHECK(std::isnan(mean_to_float(NAN)));
}

TEST_CASE("a state with squares keeps the sum of squared weights under its shift, as a float64 loop computes it") {
  const std::vector<double> s = {-3.0, 1.0, -INFINITY, 40.0, 39.0, -700.0, 40.0, 2.5};
  const std::vector<float> v = {1, 2, 3, 4, 5, 6, 7, 8};
  Owned o(1, true);
  for (size_t j = 0; j < s.size(); ++j) o.st.add(s[j], &v[j]);
  const double sum_sq = o.st.sum_sq();
  double m = -INFINITY, z = 0, z2 = 0;
  for (double x : s) m = std::max(m, x);
  for (double x : s) {
    z += std::exp(x - m);
    z2 += std::exp(2 * (x - m));
  }
  CHECK(o.st.max == m);
  // Rescales round once per new maximum (two here): a few ulps.
  CHECK(o.st.sum() == doctest::Approx(z).epsilon(1e-14));
  CHECK(sum_sq == doctest::Approx(z2).epsilon(1e-14));
  CHECK(o.acc[0] / o.st.sum() == doctest::Approx(reference(s, v)).epsilon(1e-14));
}

TEST_CASE("add_block adds sums taken under the state's fixed shift, as adding each key does") {
  const std::vector<double> s = {-0.5, -2.0, -1.0, 0.0, -30.0};
  const std::vector<float> v = {1, -2, 3, 4, 5, 6, 7, 8, 9, -10};  // two columns per key
  Owned blocks(2), keys(2);
  blocks.st.max = keys.st.max = 0;  // the fixed shift
  for (size_t b = 0; b < s.size(); b += 2) {
    double z = 0, a[2] = {0, 0};
    for (size_t j = b; j < std::min(s.size(), b + 2); ++j) {
      z += std::exp(s[j]);
      for (int d = 0; d < 2; ++d) a[d] += std::exp(s[j]) * v[2 * j + d];
    }
    blocks.st.add_block(z, [&](int64_t d) { return a[d]; });
  }
  for (size_t j = 0; j < s.size(); ++j) keys.st.add(s[j], &v[2 * j]);
  CHECK(blocks.st.max == 0);
  CHECK(blocks.st.sum() == doctest::Approx(keys.st.sum()).epsilon(1e-15));
  for (int d = 0; d < 2; ++d) CHECK(blocks.acc[d] == doctest::Approx(keys.acc[d]).epsilon(1e-15));
}

TEST_CASE("exponentiate_row shifts by the row's maximum: weights e^(s - max) or 2^(s - max), their sum in the state") {
  std::vector<double> d = {3.0, -INFINITY, 1.0, 3.0, -600.0};
  const std::vector<double> d0 = d;
  double zd = 0;
  SoftmaxState<double> sd(&zd, 0);
  exponentiate_row(d.data(), int64_t(d.size()), sd);
  double z = 0;
  CHECK(sd.max == 3.0);
  for (size_t j = 0; j < d.size(); ++j) {
    CHECK(d[j] == doctest::Approx(std::exp(d0[j] - 3.0)).epsilon(1e-15));
    z += std::exp(d0[j] - 3.0);
  }
  CHECK(sd.sum() == doctest::Approx(z).epsilon(1e-15));

  std::vector<float> f = {-1.0f, 2.0f, -INFINITY, 0.5f};
  float zf = 0;
  SoftmaxState<float, true> sf(&zf, 0);
  exponentiate_row(f.data(), int64_t(f.size()), sf);
  CHECK(sf.max == 2.0f);
  CHECK(f[0] == doctest::Approx(0.125).epsilon(1e-7));
  CHECK(f[1] == 1.0f);
  CHECK(f[2] == 0.0f);
  CHECK(f[3] == doctest::Approx(std::exp2(-1.5)).epsilon(1e-7));
  CHECK(sf.sum() == doctest::Approx(1.0 + 0.125 + std::exp2(-1.5)).epsilon(1e-6));

  // No admissible score: the empty state, the row untouched.
  std::vector<double> none = {-INFINITY, -INFINITY};
  double ze = 5;
  SoftmaxState<double> se(&ze, 0);
  exponentiate_row(none.data(), 2, se);
  CHECK(se.empty());
  CHECK(se.max == -INFINITY);
  CHECK(none[0] == -INFINITY);
  exponentiate_row(static_cast<double*>(nullptr), 0, se);
  CHECK(se.empty());
}
