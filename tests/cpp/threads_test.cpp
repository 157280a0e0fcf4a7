// Results do not depend on the number of threads: outputs are compared byte for byte.
#include <doctest/doctest.h>

#include <cstring>

#include "cases.h"
#include "reference.h"
#include "engine/exact.h"
#include "engine/states.h"

using namespace ka;
using namespace ka::testing;

TEST_CASE("every thread count gives bit-identical outputs and the same first error") {
  for (const KernelKind kind : {KernelKind::Softmax, KernelKind::Gaussian, KernelKind::Epanechnikov})
    for (const MaskKind mask : {MaskKind::None, MaskKind::Causal, MaskKind::Groups})
      for (const int64_t M : {1, 16}) {
        // Big enough (4000 × 300 × (M + 2) multiply-adds, at least 2^20 per thread) for the engine to start threads.
        Case c(4000, 300, M, 2, kind, mask, 1, uint32_t(int(kind) * 10 + int(mask) + M));
        CAPTURE(int(kind));
        CAPTURE(int(mask));
        CAPTURE(M);
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

TEST_CASE("Problem::threads is the thread count of attention() and attention_states(); results do not change") {
  Case c(100, 1000, 16, 4, KernelKind::Gaussian, MaskKind::Causal, 2, 99);  // 2e6 multiply-adds: 2 threads start
  const size_t n = size_t(c.I * c.D), rows = size_t(c.I * 2);
  std::vector<float> one(n), max1(rows), sum1(rows), acc1(n);
  REQUIRE(attention(c.problem, Matrix{one.data(), c.I, c.D, c.D}).status == Status::Ok);
  REQUIRE(attention_states(c.problem, States{max1.data(), sum1.data(), Matrix{acc1.data(), c.I, c.D, c.D}, 2}).status ==
          Status::Ok);
  for (const int32_t threads : {2, 4}) {
    CAPTURE(threads);
    c.problem.threads = threads;
    std::vector<float> many(n, -7.0f), max(rows), sum(rows), acc(n);
    REQUIRE(attention(c.problem, Matrix{many.data(), c.I, c.D, c.D}).status == Status::Ok);
    CHECK(std::memcmp(one.data(), many.data(), n * sizeof(float)) == 0);
    REQUIRE(attention_states(c.problem, States{max.data(), sum.data(), Matrix{acc.data(), c.I, c.D, c.D}, 2}).status ==
            Status::Ok);
    CHECK(std::memcmp(max1.data(), max.data(), rows * sizeof(float)) == 0);
    CHECK(std::memcmp(sum1.data(), sum.data(), rows * sizeof(float)) == 0);
    CHECK(std::memcmp(acc1.data(), acc.data(), n * sizeof(float)) == 0);
  }
  c.problem.threads = 0;
  CHECK(attention(c.problem, Matrix{one.data(), c.I, c.D, c.D}).status == Status::BadArgument);
}

TEST_CASE("few queries over many keys: keys cut into shards, bit-identical for every thread count, float64-accurate") {
  // 40 queries (3 blocks) over 50,000 keys: 6 shards of about 8,300 keys, merged in shard order.
  for (const KernelKind kind : {KernelKind::Softmax, KernelKind::Gaussian, KernelKind::Epanechnikov})
    for (const int64_t M : {1, 16}) {
      CAPTURE(int(kind));
      CAPTURE(M);
      Case c(40, 50000, M, 3, kind, MaskKind::None, 1, uint32_t(int(kind) * 7 + M));
      const std::vector<double> want = reference::attention(c.problem);
      double scale = 0;
      for (float x : c.v) scale = std::max(scale, double(std::fabs(x)));
      std::vector<float> one(size_t(c.I * c.D));
      REQUIRE(attention(c.problem, Matrix{one.data(), c.I, c.D, c.D}, 1).status == Status::Ok);
      CHECK(max_error(one, want) <= 1e-5 * scale);
      for (const int32_t threads : {2, 3, 8}) {
        CAPTURE(threads);
        std::vector<float> many(size_t(c.I * c.D), -7.0f);
        REQUIRE(attention(c.problem, Matrix{many.data(), c.I, c.D, c.D}, threads).status == Status::Ok);
        CHECK(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)) == 0);
      }
      // The partial states of the same call finalize to the same output.
      std::vector<float> max(size_t(c.I)), sum(size_t(c.I)), acc(size_t(c.I * c.D)), fin(size_t(c.I * c.D));
      const States s{max.data(), sum.data(), Matrix{acc.data(), c.I, c.D, c.D}, 1};
      REQUIRE(attention_states(c.problem, s).status == Status::Ok);
      REQUIRE(finalize_states(s, EmptyPolicy::NaN, Matrix{fin.data(), c.I, c.D, c.D}).status == Status::Ok);
      CHECK(max_error(fin, want) <= 1e-5 * scale);
    }
}

TEST_CASE("sharded keys: empty rows follow the policy, Nearest included, as a single pass would") {
  // A compact kernel whose support around the far queries holds no key.
  Case c(8, 40000, 1, 2, KernelKind::Epanechnikov, MaskKind::None, 1, 5);
  c.bandwidth[0] = 0.01f;
  for (int64_t i = 0; i < c.I; i += 2) c.q[size_t(i)] = 5.0f + float(i);  // far outside [-1, 1]
  std::vector<float> out(size_t(c.I * c.D));
  c.problem.empty = EmptyPolicy::Error;
  const Result r = attention(c.problem, Matrix{out.data(), c.I, c.D, c.D}, 2);
  CHECK(r.status == Status::EmptyRow);
  CHECK(r.row == 0);
  c.problem.empty = EmptyPolicy::Nearest;
  REQUIRE(attention(c.problem, Matrix{out.data(), c.I, c.D, c.D}, 2).status == Status::Ok);
  int64_t nearest = 0;  // the largest key is the nearest to every far query
  for (int64_t j = 1; j < c.J; ++j)
    if (c.k[size_t(j)] > c.k[size_t(nearest)]) nearest = j;
  for (int64_t i = 0; i < c.I; i += 2)
    for (int64_t d = 0; d < c.D; ++d) CHECK(out[size_t(i * c.D + d)] == c.v[size_t(nearest * c.D + d)]);
  c.problem.empty = EmptyPolicy::NaN;
  REQUIRE(attention(c.problem, Matrix{out.data(), c.I, c.D, c.D}, 3).status == Status::Ok);
  CHECK(std::isnan(out[0]));
  CHECK_FALSE(std::isnan(out[size_t(c.D)]));
}
