// Limits the engine must reach where naive code returns 0/0 or inf/inf: vanishing bandwidths, huge scores,
// duplicate keys, a single key, far-away queries, and the empty-row policies.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/exact.h"
#include "base/scratch.h"
#include "engine/weights.h"

using namespace ka;

namespace {

struct OneD {
  std::vector<float> q, k, v, h;
  Problem p;
  OneD(std::vector<float> q_, std::vector<float> k_, std::vector<float> v_, KernelKind kind, float bandwidth)
      : q(std::move(q_)), k(std::move(k_)), v(std::move(v_)), h{bandwidth} {
    p.queries = {q.data(), int64_t(q.size()), 1, 1};
    p.keys = {k.data(), int64_t(k.size()), 1, 1};
    p.values = {v.data(), int64_t(v.size()), 1, 1};
    p.kernel = {kind, 1.0, h.data()};
  }
  std::vector<float> run() {
    std::vector<float> out(q.size(), -7.0f);
    REQUIRE(attention(p, Matrix{out.data(), int64_t(q.size()), 1, 1}).status == Status::Ok);
    return out;
  }
};

// Keys 0, 0.01, …, 0.99 with value 10·j + 1 (distinct), queries off-grid.
std::vector<float> grid_keys() {
  std::vector<float> k;
  for (int j = 0; j < 100; ++j) k.push_back(0.01f * j);
  return k;
}
std::vector<float> grid_values() {
  std::vector<float> v;
  for (int j = 0; j < 100; ++j) v.push_back(10.0f * j + 1);
  return v;
}

}  // namespace

TEST_CASE("a vanishing Gaussian bandwidth gives the nearest key's value, never NaN") {
  for (float h : {1e-4f, 1e-8f, 1e-30f, 1e-45f}) {
    OneD c({0.2012f, 0.7349f, -3.0f, 50.0f}, grid_keys(), grid_values(), KernelKind::Gaussian, h);
    const auto out = c.run();
    CAPTURE(h);
    CHECK(out[0] == doctest::Approx(201.0f));
    CHECK(out[1] == doctest::Approx(731.0f));
    CHECK(out[2] == doctest::Approx(1.0f));
    CHECK(out[3] == doctest::Approx(991.0f));
  }
}

TEST_CASE("far-away queries give the nearest key for the Gaussian and an exponential tilt for the Laplacian") {
  for (float q : {-1e6f, 1e6f, -1e9f, 1e9f}) {
    OneD c({q}, grid_keys(), grid_values(), KernelKind::Gaussian, 0.05f);
    CAPTURE(q);
    CHECK(c.run()[0] == doctest::Approx(q < 0 ? 1.0f : 991.0f));
  }
  // exp(-|q - k|/h) for q below every key is proportional to exp(-k/h): the limit is that fixed weighting.
  OneD lap({-1e6f}, grid_keys(), grid_values(), KernelKind::Laplacian, 0.05f);
  double z = 0, a = 0;
  for (int j = 0; j < 100; ++j) {
    z += std::exp(-0.01 * j / 0.05);
    a += std::exp(-0.01 * j / 0.05) * (10.0 * j + 1);
  }
  CHECK(lap.run()[0] == doctest::Approx(a / z).epsilon(1e-5));
}

TEST_CASE("a mean of values at FLT_MAX stays finite: the weighted sums' float32 rounding does not overflow it") {
  // Two keys valued FLT_MAX: the float32 sum a = Σ w·v rounds by up to 2^-24 of itself, so a / z could land beyond
  // FLT_MAX, and about a fifth of these queries came back inf (found by fuzz_attention).
  constexpr float kMax = std::numeric_limits<float>::max();
  std::vector<float> q;
  for (int i = 0; i <= 600; ++i) q.push_back(-3.0f + 0.01f * float(i));
  for (KernelKind kind : {KernelKind::Gaussian, KernelKind::Laplacian, KernelKind::Cauchy}) {
    OneD c(q, {0.0f, 0.073f}, {kMax, kMax}, kind, 0.3f);
    const auto out = c.run();
    int overflowed = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      overflowed += !std::isfinite(out[i]);
      CHECK(double(out[i]) == doctest::Approx(double(kMax)).epsilon(2e-7));  // within a's float32 rounding
    }
    CAPTURE(int(kind));
    CHECK(overflowed == 0);
  }
}

TEST_CASE("exact ties average, duplicate keys average, and one key gives its value") {
  OneD tie({0.5f}, {0.0f, 1.0f}, {2.0f, 4.0f}, KernelKind::Gaussian, 1e-6f);
  CHECK(tie.run()[0] == doctest::Approx(3.0f));
  OneD dup({0.3f, 7.0f}, {0.3f, 0.3f, 0.3f}, {1.0f, 2.0f, 6.0f}, KernelKind::Gaussian, 1e-3f);
  const auto d = dup.run();
  CHECK(d[0] == doctest::Approx(3.0f));
  CHECK(d[1] == doctest::Approx(3.0f));
  OneD one({-5.0f, 0.0f, 1e30f}, {2.0f}, {-4.5f}, KernelKind::Cauchy, 1e-20f);
  for (float x : one.run()) CHECK(x == -4.5f);
}

TEST_CASE("softmax scores near ±1e4 and beyond float32 give the arg-max key's value") {
  std::vector<float> q = {100.0f, -100.0f, 1e20f}, k = {100.0f, -99.0f, 30.0f}, v = {1.0f, 2.0f, 3.0f};
  Problem p;
  p.queries = {q.data(), 3, 1, 1};
  p.keys = {k.data(), 3, 1, 1};
  p.values = {v.data(), 3, 1, 1};
  p.kernel = {KernelKind::Softmax, 1.0, nullptr};
  std::vector<float> out(3);
  REQUIRE(attention(p, Matrix{out.data(), 3, 1, 1}).status == Status::Ok);
  CHECK(out[0] == 1.0f);  // scores 1e4, -9.9e3, 3e3
  CHECK(out[1] == 2.0f);  // scores -1e4, 9.9e3, -3e3
  CHECK(out[2] == 1.0f);  // scores overflow float32: recomputed in double
}

TEST_CASE("a softmax scale beyond float32 range is refused; at FLT_MAX the arg-max key's value comes back") {
  // Found by fuzz/fuzz_attention.cpp: scale 1.8e308 made the double scores scale·q·k overflow to ±inf, and rows of
  // finite inputs came back NaN. Within float32 range every double score of float32 inputs is finite.
  std::vector<float> q = {3e38f, -2.0f}, k = {3e38f, -3e38f, 1.0f}, v = {1.0f, 2.0f, 3.0f};
  Problem p;
  p.queries = {q.data(), 2, 1, 1};
  p.keys = {k.data(), 3, 1, 1};
  p.values = {v.data(), 3, 1, 1};
  std::vector<float> out(2, -7.0f);
  for (const double scale : {1e300, -1e300, 1e39, std::numeric_limits<double>::max()}) {
    CAPTURE(scale);
    p.kernel = {KernelKind::Softmax, scale, nullptr};
    CHECK(attention(p, Matrix{out.data(), 2, 1, 1}).status == Status::BadArgument);
  }
  p.kernel = {KernelKind::Softmax, double(std::numeric_limits<float>::max()), nullptr};
  REQUIRE(attention(p, Matrix{out.data(), 2, 1, 1}).status == Status::Ok);
  CHECK(out[0] == 1.0f);  // q·k = 9e76 for key 0, the largest
  CHECK(out[1] == 2.0f);  // q·k = 6e38 for key 1
}

TEST_CASE("softmax dots beyond float32 range with a zero or tiny scale are weighed in double, on both paths") {
  // Found by fuzz/fuzz_states.cpp: q·k = -4e38 overflows the float32 dot to -inf; a scale of 0 made its score NaN,
  // which the AVX2 build did not see (xsimd 8.1's != is ordered), and a tiny scale made it -inf (weight 0), where
  // the true scores scale·q·k are small and every key counts.
  for (const int64_t M : {1, 8}) {  // the narrow path, and the wide one (head dimension >= 8)
    std::vector<float> q(size_t(M), 0.0f), k(size_t(2 * M), 0.0f), v = {1.0f, 3.0f};
    q[0] = 1e38f;
    k[0] = 3.0f;           // q·k = 3e38, within float32
    k[size_t(M)] = -4.0f;  // q·k = -4e38, beyond
    for (const double scale : {0.0, -0.0, 1e-40, -1e-40, 1e-300}) {
      CAPTURE(M);
      CAPTURE(scale);
      Problem p;
      p.queries = {q.data(), 1, M, M};
      p.keys = {k.data(), 2, M, M};
      p.values = {v.data(), 2, 1, 1};
      p.kernel = {KernelKind::Softmax, scale, nullptr};
      const double w0 = std::exp(scale * 3e38), w1 = std::exp(scale * -4e38);
      float out = -7.0f;
      REQUIRE(attention(p, Matrix{&out, 1, 1, 1}).status == Status::Ok);
      CHECK(out == doctest::Approx((w0 * 1 + w1 * 3) / (w0 + w1)).epsilon(1e-6));  // float32 output rounding
      float w[2] = {-7.0f, -7.0f};
      REQUIRE(weights(p, w).status == Status::Ok);
      CHECK(w[0] == doctest::Approx(w0 / (w0 + w1)).epsilon(1e-6));
      CHECK(w[1] == doctest::Approx(w1 / (w0 + w1)).epsilon(1e-6));
    }
  }
}

TEST_CASE("a compact kernel's support edge is decided exactly, in float32 SIMD and in double alike") {
  // q = h = 1e30: the key at 0 lies on the edge (|q − k| = h, inside the uniform kernel's closed support), the key
  // at −4 just beyond it (|q − k| = h + 4), although (q − k)/h rounds to 1 for both. The double path used to take
  // that rounded u and admit the far key, so a call's answer depended on which path ran (found by fuzz_states).
  const float far = 1e30f;
  const KernelSpec uniform{KernelKind::Uniform, 1.0, &far};
  const float on_edge = 0.0f, beyond = -4.0f;
  CHECK(log_score<double>(uniform, &far, &on_edge, 1) == 0.0);
  CHECK(log_score<double>(uniform, &far, &beyond, 1) == -std::numeric_limits<double>::infinity());
  CHECK(log_score<float>(uniform, &far, &beyond, 1) == -std::numeric_limits<float>::infinity());
  for (KernelKind kind : {KernelKind::Epanechnikov, KernelKind::Tricube}) {  // open support: the edge is outside
    const KernelSpec compact{kind, 1.0, &far};
    CHECK(log_score<double>(compact, &far, &on_edge, 1) == -std::numeric_limits<double>::infinity());
  }
  // The engine agrees: only the key on the edge counts (the SIMD path), alone or beside the other.
  OneD both({far}, {beyond, on_edge}, {5.0f, 1.0f}, KernelKind::Uniform, far);
  CHECK(both.run()[0] == 1.0f);
}

TEST_CASE("a compact kernel with no key in reach follows the empty policy") {
  OneD c({0.5f, 5.0f}, {0.0f, 1.0f, 9.0f}, {2.0f, 4.0f, 8.0f}, KernelKind::Epanechnikov, 1.0f);
  auto out = c.run();
  CHECK(out[0] == doctest::Approx(3.0f));
  CHECK(std::isnan(out[1]));
  c.p.empty = EmptyPolicy::Zero;
  CHECK(c.run()[1] == 0.0f);
  c.p.empty = EmptyPolicy::Nearest;  // 5 is nearer to 1 (distance 4) than to 9 (distance 4)? a tie: average
  CHECK(c.run()[1] == doctest::Approx(6.0f));
  c.q[1] = 6.0f;
  CHECK(c.run()[1] == 8.0f);
  c.p.empty = EmptyPolicy::Error;
  std::vector<float> o(2);
  const Result r = attention(c.p, Matrix{o.data(), 2, 1, 1});
  CHECK(r.status == Status::EmptyRow);
  CHECK(r.row == 1);
}

TEST_CASE("nearest respects the masks, and a query the masks leave no key gets zeros") {
  std::vector<float> q = {0.0f, 0.0f}, k = {0.1f, 0.2f}, v = {1.0f, 2.0f}, h = {0.01f};
  std::vector<uint8_t> pad = {1, 1};
  Problem p;
  p.queries = {q.data(), 2, 1, 1};
  p.keys = {k.data(), 2, 1, 1};
  p.values = {v.data(), 2, 1, 1};
  p.kernel = {KernelKind::Uniform, 1.0, h.data()};
  p.masks.causal = true;
  p.empty = EmptyPolicy::Nearest;
  std::vector<float> out(2);
  REQUIRE(attention(p, Matrix{out.data(), 2, 1, 1}).status == Status::Ok);
  CHECK(out[0] == 1.0f);  // only key 0 is allowed for query 0
  CHECK(out[1] == 1.0f);  // key 0 is nearer
  p.masks.key_padding = pad.data();
  REQUIRE(attention(p, Matrix{out.data(), 2, 1, 1}).status == Status::Ok);
  CHECK(out[0] == 0.0f);
  CHECK(out[1] == 0.0f);
}

TEST_CASE("scratch whose byte count exceeds size_t fails instead of wrapping around to a small buffer") {
  // 2^62 floats are 2^64 bytes: 0 after the wrap, which malloc would hand out. In WebAssembly (32-bit size_t) the
  // same happened from 4 GiB on: a value width of 8.5 million overran a 100 MB buffer.
  ka::Scratch<float> huge(int64_t(1) << 62);
  CHECK_FALSE(huge.ok());
  CHECK(huge.get() == nullptr);
  ka::Scratch<double> fine(16);
  CHECK(fine.ok());
}
