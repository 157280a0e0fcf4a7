// The SIMD pieces against plain scalar maths: exp2_nonpositive against std::exp2, batch scores against
// log_score<double>.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "cases.h"
#include "kernel/kernels_simd.h"

using namespace ka;

TEST_CASE("exp2_nonpositive is within 3e-7 relative of std::exp2 on [-126, 0] and is exactly 0 from -126.5 down") {
  std::vector<float> xs = {0.0f,        -0.0f, -1e-30f, -1e-7f,  -0.5f,  -0.49999997f,
                           -0.5000001f, -1.0f, -10.0f,  -125.5f, -126.0f};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-126.0f, 0.0f);
  for (int n = 0; n < 4000; ++n) xs.push_back(u(rng));
  for (size_t n = 0; n + simd::kLanes <= xs.size(); n += simd::kLanes) {
    alignas(64) float got[64];
    simd::store(got, simd::exp2_nonpositive(simd::load(&xs[n]), simd::exp_constants()));
    for (int64_t l = 0; l < simd::kLanes; ++l) {
      const double want = std::exp2(double(xs[n + l]));
      CAPTURE(xs[n + l]);
      CHECK(std::fabs(got[l] - want) <= 3e-7 * want);
    }
  }
  for (float x : {-126.5f, -126.51f, -127.0f, -150.0f, -1e30f, -INFINITY}) {
    alignas(64) float got[64];
    simd::store(got, simd::exp2_nonpositive(simd::Batch(x), simd::exp_constants()));
    CAPTURE(x);
    CHECK(got[0] == 0.0f);
  }
}

// The distance kernels' narrow path takes costs y = -x >= 0 to exp2_neg, and its results must not depend on which of
// the two it took (the wide path and the sparse one use exp2_nonpositive): equal bits, so the accuracy above holds.
TEST_CASE("exp2_neg(y) has the bits of exp2_nonpositive(-y) for y >= 0, +inf included") {
  std::vector<float> ys = {0.0f,   1e-30f, 1e-7f,   0.5f,   0.49999997f, 0.5000001f, 1.0f,  10.0f,    125.5f,
                           126.0f, 126.5f, 126.51f, 127.0f, 127.5f,      150.0f,     1e30f, INFINITY, 3.0f};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 130.0f);
  for (int n = 0; n < 4000; ++n) ys.push_back(u(rng));
  for (size_t n = 0; n + simd::kLanes <= ys.size(); n += simd::kLanes) {
    alignas(64) float got[64], want[64];
    const simd::Batch y = simd::load(&ys[n]);
    simd::store(got, simd::exp2_neg(y, simd::exp_constants()));
    simd::store(want, simd::exp2_nonpositive(-y, simd::exp_constants()));
    for (int64_t l = 0; l < simd::kLanes; ++l) {
      CAPTURE(ys[n + l]);
      CHECK(std::memcmp(&got[l], &want[l], sizeof(float)) == 0);
    }
  }
}

TEST_CASE("batch scores equal log_score<double> in log2 units up to float32 rounding for every kernel") {
  using B = simd::Batch;
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (const KernelKind kind : testing::kKernels)
    for (const int64_t M : testing::kDims) {
      const size_t m = size_t(M);
      std::vector<float> q(m), keys(m * size_t(simd::kLanes)), keys_t(m * size_t(simd::kLanes)), h(m), inv_h(m);
      for (auto& x : q) x = unit(rng);
      for (auto& x : keys) x = unit(rng);
      for (int64_t d = 0; d < M; ++d) {
        h[size_t(d)] = is_compact(kind) ? 1.9f : 0.5f * std::sqrt(float(M));
        inv_h[size_t(d)] = with_kernel(kind, [&](auto k) { return BatchScore<k()>::dimension_factor(h[size_t(d)]); });
        for (int64_t l = 0; l < simd::kLanes; ++l) keys_t[size_t(d * simd::kLanes + l)] = keys[size_t(l * M + d)];
      }
      const KernelSpec spec{kind, 0.3, h.data()};
      alignas(64) float got[64];
      with_kernel(kind, [&](auto k) {
        B acc = BatchScore<k()>::init();
        for (int64_t d = 0; d < M; ++d)
          acc = BatchScore<k()>::step(acc, B(q[size_t(d)]), simd::load(&keys_t[size_t(d * simd::kLanes)]),
                                      B(inv_h[size_t(d)]));
        simd::store(got, BatchScore<k()>::finish(acc, B(BatchScore<k()>::scale_factor(0.3))));
        return 0;
      });
      for (int64_t l = 0; l < simd::kLanes; ++l) {
        const double want = log_score<double>(spec, q.data(), &keys[size_t(l * M)], M) / 0.6931471805599453;  // log2
        CAPTURE(int(kind));
        CAPTURE(M);
        CAPTURE(l);
        if (std::isinf(want))
          CHECK(got[l] == want);
        else
          CHECK(std::fabs(got[l] - want) <= 1e-5 * (1 + std::fabs(want)));
      }
    }
}

TEST_CASE("compact kernels are zero outside the support and uniform is one on its boundary") {
  const float q[1] = {0.0f}, inside[1] = {0.5f}, edge[1] = {1.0f}, outside[1] = {1.5f}, h[1] = {1.0f};
  for (const KernelKind kind : {KernelKind::Epanechnikov, KernelKind::Tricube, KernelKind::Uniform}) {
    const KernelSpec spec{kind, 1.0, h};
    CAPTURE(int(kind));
    CHECK(std::isfinite(log_score<double>(spec, q, inside, 1)));
    CHECK(log_score<double>(spec, q, outside, 1) == -INFINITY);
  }
  CHECK(log_score<double>({KernelKind::Uniform, 1.0, h}, q, edge, 1) == 0.0);
  CHECK(log_score<double>({KernelKind::Epanechnikov, 1.0, h}, q, edge, 1) == -INFINITY);
  CHECK(std::exp(log_score<double>({KernelKind::Epanechnikov, 1.0, h}, q, inside, 1)) == doctest::Approx(0.75));
  CHECK(std::exp(log_score<double>({KernelKind::Tricube, 1.0, h}, q, inside, 1)) ==
        doctest::Approx(std::pow(0.875, 3)));
  CHECK(std::exp(log_score<double>({KernelKind::Cauchy, 1.0, h}, q, inside, 1)) == doctest::Approx(0.8));
}
