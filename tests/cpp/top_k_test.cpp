// Top-k attention against the float64 reference: each row's k largest reference weights (ties to the lower index),
// renormalised, over every kernel, mask and head count at boundary sizes; the reported dropped mass; k ≥ J is full
// attention; refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "cases.h"
#include "reference.h"
#include "methods/top_k.h"

using namespace ka;
using ka::testing::Case;
using ka::testing::MaskKind;

namespace {

// Output I × D and dropped I × H of the reference top-k (NaN rows where no key is admissible).
struct Reference {
  std::vector<double> out, dropped;
};

Reference reference_top_k(const Problem& p, int64_t k) {
  const int64_t I = p.queries.rows, J = p.keys.rows, D = p.values.cols, H = p.heads, dh = D / H;
  Reference r{std::vector<double>(size_t(I * D), NAN), std::vector<double>(size_t(I * H), NAN)};
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < I; ++i) {
      const auto w = reference::row_weights(p, h, i);
      if (w.empty()) continue;
      std::vector<int64_t> order(static_cast<size_t>(J));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return w[size_t(a)] > w[size_t(b)]; });
      double kept = 0, total = 0;
      int64_t n = 0;
      for (int64_t j : order) {
        if (!(w[size_t(j)] > 0)) break;
        total += w[size_t(j)];
        if (n++ < k) kept += w[size_t(j)];
      }
      for (int64_t d = h * dh; d < (h + 1) * dh; ++d) {
        double a = 0;
        for (int64_t m = 0; m < std::min(k, n); ++m)
          a += w[size_t(order[size_t(m)])] * double(p.values.row(order[size_t(m)])[d]);
        r.out[size_t(i * D + d)] = a / kept;
      }
      r.dropped[size_t(i * H + h)] = (total - kept) / kept;
    }
  return r;
}

}  // namespace

TEST_CASE(
    "top-k attention equals the reference's k largest weights renormalised, for every kernel, mask and head count") {
  for (const KernelKind kind : testing::kKernels)
    for (const MaskKind mask : testing::kMasks)
      for (const int64_t J : {1, 5, 17, 65})
        for (const int32_t heads : {1, 2}) {
          const int64_t I = mask == MaskKind::LeaveOneOut ? J : 9;
          Case c(I, J, 4, 2 * heads, kind, mask, heads, uint32_t(J * 7 + heads));
          for (const int64_t k : {int64_t(1), int64_t(3), J + 2}) {
            CAPTURE(int(kind));
            CAPTURE(int(mask));
            CAPTURE(J);
            CAPTURE(heads);
            CAPTURE(k);
            std::vector<float> out(size_t(I * c.D), -7.0f);
            std::vector<double> dropped(size_t(I * heads), -1.0);
            SparseReport rep;
            const Result r =
                top_k_attention(c.problem, k, SparseOut{Matrix{out.data(), I, c.D, c.D}, dropped.data()}, &rep);
            REQUIRE(r.status == Status::Ok);
            const Reference want = reference_top_k(c.problem, k);
            double worst_share = 0;
            for (int64_t n = 0; n < I * c.D; ++n) {
              if (std::isnan(want.out[size_t(n)])) {
                CHECK(std::isnan(out[size_t(n)]));  // an empty row, EmptyPolicy::NaN
                continue;
              }
              CHECK(std::fabs(double(out[size_t(n)]) - want.out[size_t(n)]) <= 2e-5);
            }
            for (int64_t n = 0; n < I * heads; ++n) {
              if (std::isnan(want.dropped[size_t(n)])) {
                CHECK(std::isnan(dropped[size_t(n)]));
                continue;
              }
              CHECK(std::fabs(dropped[size_t(n)] - want.dropped[size_t(n)]) <= 1e-5 * (1 + want.dropped[size_t(n)]));
              worst_share = std::max(worst_share, dropped[size_t(n)] / (1 + dropped[size_t(n)]));
              if (k >= J) CHECK(dropped[size_t(n)] == 0);
            }
            CHECK(rep.error_estimate == doctest::Approx(worst_share));
            CHECK(rep.kept_keys + rep.skipped_keys == I * J * heads);
          }
        }
}

TEST_CASE("top-k attention: ties go to the lower key index; bad k and outputs it does not compute are refused") {
  // Four keys at the same distance from the query: k = 2 keeps keys 0 and 1.
  const std::vector<float> q = {0}, keys = {1, -1, 1, -1}, v = {10, 20, 30, 40}, h = {1};
  Problem p;
  p.queries = {q.data(), 1, 1, 1};
  p.keys = {keys.data(), 4, 1, 1};
  p.values = {v.data(), 4, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, h.data()};
  float out = 0;
  double dropped = -1;
  REQUIRE(top_k_attention(p, 2, SparseOut{Matrix{&out, 1, 1, 1}, &dropped}, nullptr).status == Status::Ok);
  CHECK(out == doctest::Approx(15.0));
  CHECK(dropped == doctest::Approx(1.0));
  CHECK(top_k_attention(p, 0, SparseOut{Matrix{&out, 1, 1, 1}}, nullptr).status == Status::BadArgument);
  double extra = 0;
  SparseOut with_extras{Matrix{&out, 1, 1, 1}};
  with_extras.effective_keys = &extra;
  CHECK(top_k_attention(p, 1, with_extras, nullptr).status == Status::BadArgument);
  CHECK(top_k_attention(p, 1, SparseOut{Matrix{&out, 2, 1, 1}}, nullptr).status == Status::BadShape);
}

TEST_CASE("top-k attention: empty rows follow the policy as attention's do, with no keys at all too") {
  // Query 0 sees key 1 (distance 0.5 < h); query 1 is beyond every key's reach; the nearest key to it is key 2.
  const std::vector<float> q = {0.5f, 10}, keys = {-1, 0, 2}, v = {10, 20, 30}, h = {0.75f};
  for (const int64_t J : {3, 0})
    for (const EmptyPolicy policy : {EmptyPolicy::NaN, EmptyPolicy::Zero, EmptyPolicy::Nearest, EmptyPolicy::Error}) {
      CAPTURE(J);
      CAPTURE(int(policy));
      Problem p;
      p.queries = {q.data(), 2, 1, 1};
      p.keys = {keys.data(), J, 1, 1};
      p.values = {v.data(), J, 1, 1};
      p.kernel = {KernelKind::Epanechnikov, 1.0, h.data()};
      p.empty = policy;
      float out[2] = {-7, -7};
      double dropped[2] = {-7, -7};
      const Result r = top_k_attention(p, 1, SparseOut{Matrix{out, 2, 1, 1}, dropped}, nullptr);
      if (policy == EmptyPolicy::Error) {
        CHECK(r.status == Status::EmptyRow);
        CHECK(r.row == (J ? 1 : 0));
        continue;
      }
      REQUIRE(r.status == Status::Ok);
      if (J) {
        CHECK(out[0] == 20.0f);
        CHECK(dropped[0] == 0);
      }
      const float want = policy == EmptyPolicy::NaN ? NAN : policy == EmptyPolicy::Zero || J == 0 ? 0.0f : 30.0f;
      for (int64_t i = J ? 1 : 0; i < 2; ++i) {
        if (std::isnan(want)) {
          CHECK(std::isnan(out[i]));
          CHECK(std::isnan(dropped[i]));  // an empty row under 'nan'
        } else {
          CHECK(out[i] == want);
          CHECK(dropped[i] == 0);
        }
      }
    }
}
