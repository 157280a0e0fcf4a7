// Partial states over key shards, merged in any order, equal attention over all keys.
#include <doctest/doctest.h>

#include <memory>

#include "cases.h"
#include "engine/exact.h"
#include "reference.h"
#include "engine/states.h"

using namespace ka;
using namespace ka::testing;

namespace {

struct OwnedStates {
  std::vector<float> max, sum, acc;
  States view;
  OwnedStates(int64_t I, int64_t D, int32_t H)
      : max(size_t(I * H)),
        sum(size_t(I * H)),
        acc(size_t(I * D)),
        view{max.data(), sum.data(), {acc.data(), I, D, D}, H} {}
};

// Shard `c` by key ranges [cuts[s], cuts[s+1]) and return each shard's states.
std::vector<std::unique_ptr<OwnedStates>> shard_states(const Case& c, const std::vector<int64_t>& cuts) {
  std::vector<std::unique_ptr<OwnedStates>> out;
  for (size_t s = 0; s + 1 < cuts.size(); ++s) {
    Problem p = c.problem;
    const int64_t j0 = cuts[s], n = cuts[s + 1] - cuts[s];
    p.keys = {c.k.data() + j0 * c.M, n, c.M, c.M};
    p.values = {c.v.data() + j0 * c.D, n, c.D, c.D};
    if (p.masks.key_padding) p.masks.key_padding = c.key_padding.data() + j0;
    out.push_back(std::make_unique<OwnedStates>(c.I, c.D, p.heads));
    REQUIRE(attention_states(p, out.back()->view).status == Status::Ok);
  }
  return out;
}

}  // namespace

TEST_CASE("states over key shards merge in any order to the reference over all keys") {
  for (const KernelKind kind : kKernels)
    for (const MaskKind mask : {MaskKind::None, MaskKind::KeyPadding})
      for (const int32_t heads : {1, 2})
        for (const int64_t M : {2, 16}) {
          const Case c(17, 150, M, 2 * heads, kind, mask, heads,
                       uint32_t(int(kind) * 100 + int(mask) * 10 + heads + M));
          CAPTURE(int(kind));
          CAPTURE(int(mask));
          CAPTURE(heads);
          CAPTURE(M);
          const auto want = reference::attention(c.problem);
          auto shards = shard_states(c, {0, 64, 65, 150});
          for (const std::vector<int> order : {std::vector<int>{0, 1, 2}, {2, 0, 1}, {1, 2, 0}}) {
            OwnedStates merged = *shards[size_t(order[0])];
            merged.view = {merged.max.data(), merged.sum.data(), {merged.acc.data(), c.I, c.D, c.D}, heads};
            for (size_t s = 1; s < order.size(); ++s)
              REQUIRE(merge_states(merged.view, shards[size_t(order[s])]->view).status == Status::Ok);
            std::vector<float> out(size_t(c.I * c.D));
            REQUIRE(finalize_states(merged.view, EmptyPolicy::NaN, {out.data(), c.I, c.D, c.D}).status == Status::Ok);
            CHECK(max_error(out, want) <= 1e-5);
          }
        }
}

TEST_CASE("empty shards and rows: merging an empty state changes nothing, and finalize applies the policy") {
  std::vector<float> q = {0.0f, 10.0f}, k = {0.1f, 0.2f}, v = {1.0f, 3.0f}, h = {0.5f};
  Problem p;
  p.queries = {q.data(), 2, 1, 1};
  p.keys = {k.data(), 2, 1, 1};
  p.values = {v.data(), 2, 1, 1};
  p.kernel = {KernelKind::Epanechnikov, 1.0, h.data()};
  OwnedStates a(2, 1, 1), b(2, 1, 1);
  REQUIRE(attention_states(p, a.view).status == Status::Ok);
  CHECK(a.max[1] == -INFINITY);  // query 10 reaches no key
  p.keys.rows = 0;               // an empty shard
  p.values.rows = 0;
  REQUIRE(attention_states(p, b.view).status == Status::Ok);
  REQUIRE(merge_states(a.view, b.view).status == Status::Ok);
  std::vector<float> out(2, -7.0f);
  REQUIRE(finalize_states(a.view, EmptyPolicy::Zero, {out.data(), 2, 1, 1}).status == Status::Ok);
  CHECK(out[0] == doctest::Approx((0.96 * 1 + 0.84 * 3) / (0.96 + 0.84)));
  CHECK(out[1] == 0.0f);
  const Result r = finalize_states(a.view, EmptyPolicy::Error, {out.data(), 2, 1, 1});
  CHECK(r.status == Status::EmptyRow);
  CHECK(r.row == 1);
  CHECK(finalize_states(a.view, EmptyPolicy::Nearest, {out.data(), 2, 1, 1}).status == Status::BadArgument);
}

TEST_CASE("states of rows recomputed in double (huge softmax scores) merge exactly") {
  std::vector<float> q = {100.0f}, k = {100.0f, -99.0f, 99.5f, 30.0f}, v = {1.0f, 2.0f, 3.0f, 4.0f};
  Problem p;
  p.queries = {q.data(), 1, 1, 1};
  p.kernel = {KernelKind::Softmax, 1.0, nullptr};
  OwnedStates a(1, 1, 1), b(1, 1, 1);
  p.keys = {k.data(), 2, 1, 1};
  p.values = {v.data(), 2, 1, 1};
  REQUIRE(attention_states(p, a.view).status == Status::Ok);
  p.keys = {k.data() + 2, 2, 1, 1};
  p.values = {v.data() + 2, 2, 1, 1};
  REQUIRE(attention_states(p, b.view).status == Status::Ok);
  REQUIRE(merge_states(a.view, b.view).status == Status::Ok);
  float out = 0;
  REQUIRE(finalize_states(a.view, EmptyPolicy::NaN, {&out, 1, 1, 1}).status == Status::Ok);
  const double w2 = std::exp(-50.0);  // scores 1e4 and 9950
  CHECK(out == doctest::Approx((1 + 3 * w2) / (1 + w2)));
}
