// The explicit weight matrix against the reference, per head, and its empty-row policies.
#include <doctest/doctest.h>

#include "cases.h"
#include "reference.h"
#include "engine/weights.h"

using namespace ka;
using namespace ka::testing;

TEST_CASE("weights match the reference and each non-empty row sums to 1") {
  for (const KernelKind kind : kKernels)
    for (const MaskKind mask : kMasks)
      for (const int32_t heads : {1, 2})
        for (const int64_t n : {1, 5, 17, 65}) {
          const Case c(n, n, 4, 2, kind, mask, heads, uint32_t(n * 100 + int(kind) * 10 + int(mask) + heads));
          std::vector<float> w(size_t(heads * n * n), -7.0f);
          REQUIRE(weights(c.problem, w.data()).status == Status::Ok);
          CAPTURE(int(kind));
          CAPTURE(int(mask));
          CAPTURE(heads);
          CAPTURE(n);
          for (int32_t h = 0; h < heads; ++h)
            for (int64_t i = 0; i < n; ++i) {
              const auto want = reference::row_weights(c.problem, h, i);
              const float* row = &w[size_t((h * n + i) * n)];
              if (want.empty()) {
                for (int64_t j = 0; j < n; ++j) CHECK(std::isnan(row[j]));
                continue;
              }
              double sum = 0;
              for (int64_t j = 0; j < n; ++j) {
                CHECK(std::fabs(row[j] - want[size_t(j)]) <= 1e-5);
                sum += row[j];
              }
              CHECK(sum == doctest::Approx(1.0).epsilon(1e-5));
            }
        }
}

TEST_CASE("empty weight rows follow the policy: zeros, nearest keys sharing 1, or an error naming the row") {
  const float q[2] = {0.0f, 6.0f}, k[3] = {1.0f, 2.0f, 8.0f}, h[1] = {0.5f};
  Problem p;
  p.queries = {q, 2, 1, 1};
  p.keys = {k, 3, 1, 1};
  p.kernel = {KernelKind::Epanechnikov, 1.0, h};
  std::vector<float> w(6, -7.0f);
  p.empty = EmptyPolicy::Zero;
  REQUIRE(weights(p, w.data()).status == Status::Ok);
  for (float x : w) CHECK(x == 0.0f);
  p.empty = EmptyPolicy::Nearest;
  REQUIRE(weights(p, w.data()).status == Status::Ok);
  CHECK(w == std::vector<float>{1, 0, 0, 0, 0, 1});
  p.empty = EmptyPolicy::Error;
  const Result r = weights(p, w.data());
  CHECK(r.status == Status::EmptyRow);
  CHECK(r.row == 0);
}
