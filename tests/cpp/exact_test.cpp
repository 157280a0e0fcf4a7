// The exact engine against the float64 reference: every kernel, mask and head count at lane and tile boundaries.
#include <doctest/doctest.h>

#include "cases.h"
#include "engine/exact.h"
#include "reference.h"

using namespace ka;
using namespace ka::testing;

namespace {

// 1e-5 relative to max|v| (values are in [-1, 1]): float32 scores of size O(10) carry ~1e-6 absolute error, which
// moves weights by ~1e-6 relative; the rest is float32 accumulation over at most 257 keys.
constexpr double kTolerance = 1e-5;

double run_and_compare(const Case& c) {
  std::vector<float> out(size_t(c.I * c.D), -7.0f);
  const Result r = attention(c.problem, Matrix{out.data(), c.I, c.D, c.D});
  REQUIRE(r.status == Status::Ok);
  return max_error(out, reference::attention(c.problem));
}

uint32_t seed_of(int64_t a, int64_t b, int64_t c, int64_t d) { return uint32_t(((a * 131 + b) * 131 + c) * 131 + d); }

}  // namespace

TEST_CASE("every kernel matches the reference at all boundary sizes I x J and every dimension M") {
  for (const KernelKind kind : kKernels)
    for (const int64_t M : kDims)
      for (const int64_t I : kSizes)
        for (const int64_t J : kSizes) {
          const int64_t D = 1 + (I + J + M) % 5;
          const Case c(I, J, M, D, kind, MaskKind::None, 1, seed_of(int64_t(kind), M, I, J));
          CAPTURE(int(kind));
          CAPTURE(M);
          CAPTURE(I);
          CAPTURE(J);
          CAPTURE(D);
          CHECK(run_and_compare(c) <= kTolerance);
        }
}

TEST_CASE("every mask matches the reference for every kernel") {
  for (const MaskKind mask : kMasks)
    for (const KernelKind kind : kKernels)
      for (const int64_t M : kDims)
        for (const int64_t n : kSizes) {
          const int64_t J = n, I = mask == MaskKind::LeaveOneOut ? n : (n * 7) % 20 + 1;
          const Case c(I, J, M, 3, kind, mask, 1, seed_of(int64_t(mask), int64_t(kind), M, n));
          CAPTURE(int(mask));
          CAPTURE(int(kind));
          CAPTURE(M);
          CAPTURE(I);
          CAPTURE(J);
          CHECK(run_and_compare(c) <= kTolerance);
        }
}

TEST_CASE("heads split dimensions and values evenly and match the reference") {
  for (const int32_t heads : {1, 2, 4})
    for (const KernelKind kind : kKernels)
      for (const MaskKind mask : {MaskKind::None, MaskKind::Causal, MaskKind::KeyPadding})
        for (const int64_t M : {4, 16, 64})
          for (const int64_t n : kSizes) {
            const Case c(n, n, M, 2 * heads, kind, mask, heads, seed_of(heads, int64_t(kind), M, n));
            CAPTURE(heads);
            CAPTURE(int(kind));
            CAPTURE(int(mask));
            CAPTURE(M);
            CAPTURE(n);
            CHECK(run_and_compare(c) <= kTolerance);
          }
}

TEST_CASE("output rows may be strided and are written only within their columns") {
  const Case c(17, 65, 3, 2, KernelKind::Gaussian, MaskKind::None, 1, 5);
  std::vector<float> out(size_t(17 * 5), -7.0f);
  REQUIRE(attention(c.problem, Matrix{out.data(), 17, 2, 5}).status == Status::Ok);
  const auto want = reference::attention(c.problem);
  for (int64_t i = 0; i < 17; ++i) {
    CAPTURE(i);
    for (int64_t d = 0; d < 2; ++d)
      CHECK(out[size_t(i * 5 + d)] == doctest::Approx(want[size_t(i * 2 + d)]).epsilon(1e-5));
    for (int64_t d = 2; d < 5; ++d) CHECK(out[size_t(i * 5 + d)] == -7.0f);
  }
}

TEST_CASE("bad shapes and options are reported, not computed") {
  Case c(4, 5, 2, 1, KernelKind::Gaussian, MaskKind::None, 1, 9);
  std::vector<float> out(4, -7.0f);
  const Matrix o{out.data(), 4, 1, 1};
  Problem p = c.problem;
  p.heads = 3;
  CHECK(attention(p, o).status == Status::BadArgument);
  p = c.problem;
  p.masks.leave_one_out = true;  // needs I == J
  CHECK(attention(p, o).status == Status::BadShape);
  p = c.problem;
  c.bandwidth[1] = 0;
  CHECK(attention(p, o).status == Status::BadArgument);
  c.bandwidth[1] = NAN;
  CHECK(attention(p, o).status == Status::BadArgument);
  c.bandwidth[1] = 1;
  p.kernel.kind = KernelKind(42);
  CHECK(attention(p, o).status == Status::BadArgument);
  p = c.problem;
  CHECK(attention(p, Matrix{out.data(), 3, 1, 1}).status == Status::BadShape);
  for (float x : out) CHECK(x == -7.0f);
}

TEST_CASE("zero queries or zero keys are valid calls") {
  const Case none(0, 5, 2, 1, KernelKind::Softmax, MaskKind::None, 1, 1);
  CHECK(attention(none.problem, Matrix{nullptr, 0, 1, 1}).status == Status::Ok);
  const Case nokeys(3, 0, 2, 1, KernelKind::Gaussian, MaskKind::None, 1, 1);
  std::vector<float> out(3, -7.0f);
  REQUIRE(attention(nokeys.problem, Matrix{out.data(), 3, 1, 1}).status == Status::Ok);
  for (float x : out) CHECK(std::isnan(x));  // empty rows under the default policy
}
