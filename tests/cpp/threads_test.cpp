// Results do not depend on the number of threads: outputs are compared byte for byte.
#include <doctest/doctest.h>

#include <cstring>

#include "cases.h"
#include "exact.h"

using namespace ka;
using namespace ka::testing;

TEST_CASE("every thread count gives bit-identical outputs and the same first error") {
  for (const KernelKind kind : {KernelKind::Softmax, KernelKind::Gaussian, KernelKind::Epanechnikov})
    for (const MaskKind mask : {MaskKind::None, MaskKind::Causal, MaskKind::Groups})
      for (const int64_t M : {1, 16}) {
        Case c(257, 300, M, 2, kind, mask, 1, uint32_t(int(kind) * 10 + int(mask) + M));
        CAPTURE(int(kind)); CAPTURE(int(mask)); CAPTURE(M);
        std::vector<float> one(size_t(c.I * c.D));
        REQUIRE(attention(c.problem, Matrix{one.data(), c.I, c.D, c.D}, 1).status == Status::Ok);
        for (const int32_t threads : {2, 3, 8}) {
          std::vector<float> many(size_t(c.I * c.D), -7.0f);
          REQUIRE(attention(c.problem, Matrix{many.data(), c.I, c.D, c.D}, threads).status == Status::Ok);
          CAPTURE(threads);
          CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0);
        }
        c.problem.empty = EmptyPolicy::Error;
        const Result first = attention(c.problem, Matrix{one.data(), c.I, c.D, c.D}, 1);
        for (const int32_t threads : {2, 5}) {
          const Result r = attention(c.problem, Matrix{one.data(), c.I, c.D, c.D}, threads);
          CHECK(r.status == first.status);
          CHECK(r.row == first.row);
        }
      }
}
