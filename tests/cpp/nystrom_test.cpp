// Nyström attention against the float64 reference: the error shrinks as the landmarks grow (to the exact result when
// every key is a landmark), the held-out estimate tracks the measured error, and the pieces (Cholesky, landmarks).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <vector>

#include "base/counter_rng.h"
#include "cases.h"
#include "methods/nystrom.h"
#include "reference.h"

using namespace ka;
using ka::testing::Case;
using ka::testing::MaskKind;

namespace {

double rms_error(const std::vector<float>& got, const std::vector<double>& want, const std::vector<float>& values) {
  double sum = 0, lo = INFINITY, hi = -INFINITY;
  for (size_t n = 0; n < want.size(); ++n) sum += (double(got[n]) - want[n]) * (double(got[n]) - want[n]);
  for (float v : values) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
  return std::sqrt(sum / double(want.size())) / (hi - lo);
}

struct Run {
  std::vector<float> out;
  ApproxReport report;
  Result result;
};

Run run(const Case& c, int32_t landmarks, double tolerance = 1e-2, uint64_t seed = 7,
        LandmarkSampling sampling = LandmarkSampling::KMeansPlusPlus) {
  Run r;
  r.out.assign(size_t(c.I * c.D), -1.0f);
  ApproxOptions o;
  o.count = landmarks;
  o.tolerance = tolerance;
  o.seed = seed;
  o.sampling = sampling;
  r.result = nystrom_attention(c.problem, o, Matrix{r.out.data(), c.I, c.D, c.D}, &r.report);
  return r;
}

}  // namespace

TEST_CASE("cholesky factors a positive-definite matrix and refuses an indefinite one") {
  std::vector<double> a = {4, 2, 2, 2, 5, 3, 2, 3, 6};
  const std::vector<double> original = a;
  REQUIRE(cholesky(a, 3, 0));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += a[size_t(i * 3 + k)] * a[size_t(j * 3 + k)];
      CHECK(s == doctest::Approx(original[size_t(i * 3 + j)]).epsilon(1e-14));
    }
  std::vector<double> indefinite = {1, 2, 2, 1};
  CHECK_FALSE(cholesky(indefinite, 2, 0));
}

TEST_CASE("landmarks are distinct keys, reproducible by seed, and k-means++ stops at the distinct points") {
  std::vector<double> x(200);
  for (size_t n = 0; n < x.size(); ++n) x[n] = std::sin(double(n) * 1.7);
  for (const LandmarkSampling s : {LandmarkSampling::KMeansPlusPlus, LandmarkSampling::Uniform}) {
    const std::vector<int64_t> a = choose_landmarks(x, 100, 2, 30, s, 9, 0);
    CHECK(a == choose_landmarks(x, 100, 2, 30, s, 9, 0));
    CHECK(a != choose_landmarks(x, 100, 2, 30, s, 10, 0));
    CHECK(std::set<int64_t>(a.begin(), a.end()).size() == 30);
    for (int64_t j : a) CHECK((j >= 0 && j < 100));
  }
  std::vector<double> repeated(40);
  for (size_t n = 0; n < repeated.size(); ++n) repeated[n] = double(n % 4);  // 4 distinct 1-D points
  CHECK(choose_landmarks(repeated, 40, 1, 10, LandmarkSampling::KMeansPlusPlus, 1, 0).size() == 4);
}

TEST_CASE("Nyström attention converges as the landmarks grow and its held-out estimate tracks the error") {
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Softmax, KernelKind::Laplacian, KernelKind::Cauchy}) {
    for (const MaskKind mask : {MaskKind::None, MaskKind::Causal}) {
      const Case c(200, 300, 4, 3, kind, mask, 1, 21);
      const std::vector<double> want = reference::attention(c.problem);
      double first = 0, last = 0;
      for (const int32_t L : {8, 32, 128}) {
        const Run r = run(c, L);
        REQUIRE(r.result.status == Status::Ok);
        const double err = rms_error(r.out, want, c.v);
        MESSAGE("nystrom kind ", int(kind), " mask ", int(mask), " L ", L, " err ", err, " estimate ",
                r.report.error_estimate, " exact rows ", r.report.exact_rows);
        CAPTURE(int(kind));
        CAPTURE(int(mask));
        CAPTURE(L);
        CAPTURE(err);
        CHECK(r.report.count == L);
        CHECK(r.report.error_estimate > 0.3 * err);
        CHECK(r.report.error_estimate < 3 * err + 1e-6);
        if (L == 8) first = err;
        last = err;
      }
      CHECK(last < first / 3);
    }
  }
}

TEST_CASE("with every key a landmark, Nyström is exact up to its regularisation") {
  const Case c(50, 40, 3, 2, KernelKind::Gaussian, MaskKind::None, 1, 22);
  const std::vector<double> want = reference::attention(c.problem);
  const Run r = run(c, 40);
  REQUIRE(r.result.status == Status::Ok);
  CHECK(rms_error(r.out, want, c.v) < 1e-4);
}

TEST_CASE("the tolerance chooses the landmarks, uniform sampling works, and a seed fixes the bytes") {
  const Case c(120, 500, 6, 2, KernelKind::Gaussian, MaskKind::None, 2, 23);
  const std::vector<double> want = reference::attention(c.problem);
  const Run loose = run(c, 0, 0.05), tight = run(c, 0, 1e-4);
  REQUIRE(tight.result.status == Status::Ok);
  MESSAGE("landmarks at 0.05: ", loose.report.count, "; at 1e-4: ", tight.report.count, " error ",
          rms_error(tight.out, want, c.v), " estimate ", tight.report.error_estimate);
  CHECK(loose.report.count < tight.report.count);
  CHECK(tight.report.error_estimate <= 1e-4);
  CHECK(rms_error(tight.out, want, c.v) < 3e-4);
  const Run u = run(c, 64, 1e-2, 7, LandmarkSampling::Uniform);
  REQUIRE(u.result.status == Status::Ok);
  CHECK(rms_error(u.out, want, c.v) < 0.05);
  CHECK(run(c, 64).out == run(c, 64).out);
  CHECK(run(c, 64, 1e-2, 1).out != run(c, 64, 1e-2, 2).out);
}

TEST_CASE("Nyström refuses compact kernels and masks other than causal") {
  for (const KernelKind kind : {KernelKind::Epanechnikov, KernelKind::Tricube, KernelKind::Uniform}) {
    const Case c(5, 7, 2, 1, kind, MaskKind::None, 1, 24);
    CHECK(run(c, 4).result.status == Status::BadArgument);
  }
  const Case c(7, 7, 2, 1, KernelKind::Gaussian, MaskKind::LeaveOneOut, 1, 25);
  CHECK(run(c, 4).result.status == Status::BadArgument);
  const Case ok(5, 7, 2, 1, KernelKind::Gaussian, MaskKind::None, 1, 26);
  CHECK(run(ok, kMaxLandmarks + 1).result.status == Status::BadArgument);
}

TEST_CASE("sample_rows draws the rows of Floyd's algorithm: distinct, increasing, the seed's") {
  // Floyd's algorithm written out with a linear search of the rows drawn so far, the definition of the sample.
  const auto floyd = [](int64_t I, int64_t count, uint64_t seed, uint64_t stream) {
    std::vector<int64_t> rows;
    const CounterRng rng(seed, stream);
    for (int64_t n = I - count; n < I; ++n) {
      const int64_t t = int64_t(rng.below(uint64_t(n + 1), uint64_t(n)));
      rows.push_back(std::find(rows.begin(), rows.end(), t) == rows.end() ? t : n);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
  };
  for (const int64_t I : {1, 2, 7, 64, 65, 1000, 5000})
    for (const int64_t count : {int64_t(0), int64_t(1), I / 2, I - 1, I, I + 3, int64_t(4096)}) {
      CAPTURE(I);
      CAPTURE(count);
      const std::vector<int64_t> got = sample_rows(I, count, 11, 5);
      REQUIRE(int64_t(got.size()) == std::min(std::max<int64_t>(count, 0), I));
      CHECK(std::adjacent_find(got.begin(), got.end(), std::greater_equal<int64_t>()) == got.end());
      CHECK((got.empty() || (got.front() >= 0 && got.back() < I)));
      if (count < I) CHECK(got == floyd(I, count, 11, 5));
    }
}
