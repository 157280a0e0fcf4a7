// The online-softmax state: merging in any order equals one pass; extreme scores never give 0/0 or inf/inf.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/online_softmax.h"

using namespace ka;

namespace {

struct Owned {
  std::vector<double> acc;
  SoftmaxState<double> st;
  explicit Owned(int64_t width) : acc(size_t(width)), st{-INFINITY, 0.0, nullptr, width} {
    st.acc = acc.data();
    st.reset();
  }
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
  CHECK(finalize(o.st, out, EmptyPolicy::Nearest) == RowOutcome::NeedsNearest);
  CHECK(finalize(o.st, out, EmptyPolicy::Error) == RowOutcome::Error);
  Owned empty(2);
  o.st.merge(empty.st);
  CHECK(o.st.empty());
}
