// Shared decoding for the libFuzzer harnesses: arbitrary bytes → shapes, kernels, bandwidths, masks and data.
//
// Bytes are read front to back. The first bytes choose the shape and options (see make_corpus.py, which writes
// seeds in this order); once the input runs out, the rest comes from a small PRNG seeded by the input, so a short
// input still describes a 70 × 70 problem. Every float is drawn from one of three "ranges", chosen per input:
// ordinary values, finite extremes (huge, tiny, denormal, ±0), or anything (NaN, ±inf, raw bit patterns).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "engine/problem.h"

namespace fuzz {

// Violations of an invariant abort, which libFuzzer reports as a crash with the input that caused it.
#define KA_FUZZ_CHECK(cond)                                                              \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

// Absolute error floor of float32 weighted sums near underflow: products w·v below FLT_MIN round to multiples of
// 2^-149 (gradual underflow), and the fixed-shift path keeps rows whose largest weight w is as small as 2^-58 before
// redoing them in double, so the quotient a / z of ≤ 70 such products can be off by 70 · 2^-149 / 2^-58 ≈ 2.8e-26.
constexpr float kUnderflowFloor = 70 * 0x1p-91f;

enum class Range : uint8_t { Ordinary, Extreme, Any };

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t k = 0; k < size; ++k) h = (h ^ data[k]) * 0x100000001B3ull;
    rng_ = h | 1;
  }

  uint8_t byte() {
    if (at_ < size_) return data_[at_++];
    rng_ ^= rng_ << 13;  // xorshift64 once the input is used up
    rng_ ^= rng_ >> 7;
    rng_ ^= rng_ << 17;
    return uint8_t(rng_ >> 32);
  }
  uint32_t u32() {
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) v = v << 8 | byte();
    return v;
  }
  // An integer in [lo, hi].
  int64_t in(int64_t lo, int64_t hi) { return lo + int64_t(u32() % uint32_t(hi - lo + 1)); }
  // True with probability about percent / 100.
  bool chance(int percent) { return byte() % 100 < percent; }

  // One data value in `range`.
  float value(Range range) {
    const uint8_t kind = byte();
    if (range == Range::Ordinary || kind < 160) return float(int8_t(byte())) / 16.0f;  // -8 … 7.94, exact steps
    if (range == Range::Any && kind >= 240) {
      if (kind < 246) return special(byte());
      uint32_t bits = u32();
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    }
    return extreme(byte());
  }

  // A bandwidth: usually a power of two times 1..2 in [2^-8, 2^8]; with `invalid`, sometimes one check() rejects.
  float bandwidth(Range range, bool& invalid) {
    const uint8_t kind = byte();
    if (range != Range::Ordinary && kind >= 200) {
      const float h = kind >= 230 && range == Range::Any ? special(byte()) : extreme(byte());
      if (!(h > 0) || !std::isfinite(h)) invalid = true;
      return h;
    }
    return std::ldexp(1.0f + float(byte()) / 256.0f, int(in(-8, 8)));
  }

  // The softmax scale (a double): usually 1/√m-like, sometimes huge, tiny, denormal or non-finite.
  double scale(Range range, bool& invalid) {
    const uint8_t kind = byte();
    if (range != Range::Ordinary && kind >= 200) {
      static const double table[] = {0.0,
                                     -0.0,
                                     1e-310,
                                     1e-300,
                                     1e-40,
                                     -1e-44,
                                     1e-30,
                                     1e30,
                                     1e300,
                                     -1e300,
                                     3.5e38,
                                     3.4028234e38,
                                     -1e4,
                                     1e4,
                                     std::numeric_limits<double>::max(),
                                     std::numeric_limits<double>::quiet_NaN(),
                                     std::numeric_limits<double>::infinity(),
                                     -std::numeric_limits<double>::infinity()};
      const double s = table[byte() % (sizeof table / sizeof table[0])];
      if (!(std::fabs(s) <= std::numeric_limits<float>::max())) invalid = true;  // check() wants float32 range
      return s;
    }
    return double(int8_t(byte())) / 32.0;
  }

 private:
  static float extreme(uint8_t k) {
    static const float table[] = {0.0f,          -0.0f,          1e-45f,   -1e-45f, 1e-40f,      1.17549435e-38f,
                                  1e-30f,        1e-20f,         1e20f,    1e30f,   1e38f,       -1e38f,
                                  3.4028235e38f, -3.4028235e38f, 65504.0f, 1e-7f,   16777217.0f, -0.5f};
    return table[k % (sizeof table / sizeof table[0])];
  }
  static float special(uint8_t k) {
    switch (k % 3) {
      case 0: return std::numeric_limits<float>::quiet_NaN();
      case 1: return std::numeric_limits<float>::infinity();
      default: return -std::numeric_limits<float>::infinity();
    }
  }

  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
  uint64_t rng_;
};

// A row-major matrix with `pad` extra columns per row that hold NaN: the core must never read them.
struct Owned {
  std::vector<float> data;
  int64_t rows = 0, cols = 0, stride = 0;

  Owned() = default;
  Owned(Input& in, int64_t r, int64_t c, Range range) : rows(r), cols(c) {
    stride = c + in.in(0, 3);
    data.assign(size_t(std::max<int64_t>(r * stride, 1)), std::numeric_limits<float>::quiet_NaN());
    for (int64_t i = 0; i < r; ++i)
      for (int64_t d = 0; d < c; ++d) data[size_t(i * stride + d)] = in.value(range);
  }
  float at(int64_t i, int64_t d) const { return data[size_t(i * stride + d)]; }
  ka::ConstMatrix view() const { return {data.data(), rows, cols, stride}; }
  bool finite() const {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t d = 0; d < cols; ++d)
        if (!std::isfinite(at(i, d))) return false;
    return true;
  }
};

// A whole attention call: data, kernel, masks, heads and policy, with what check() must say about it.
struct Call {
  Range range = Range::Ordinary;
  Owned q, k, v;
  std::vector<float> bandwidth;
  std::vector<uint8_t> key_padding, general;
  std::vector<int32_t> query_groups, key_groups;
  ka::Problem p;
  bool valid = true;                 // check(p, true) must accept it
  bool valid_without_values = true;  // check(p, false) must accept it
  bool finite = true;                // every input value (data and bandwidths) is finite

  // Decodes a problem with I ≤ max_rows, J ≤ max_rows, M ≤ max_dims, D ≤ max_width; `shardable` leaves out the
  // masks that depend on absolute key indices (causal, leave-one-out).
  Call(Input& in, int64_t max_rows, int64_t max_dims, int64_t max_width, bool shardable = false) {
    range = Range(in.byte() % 3);
    const int64_t I = edge_size(in, max_rows), J = in.chance(25) ? I : edge_size(in, max_rows);
    int32_t heads = int32_t(in.in(1, 4));
    int64_t M = in.in(1, max_dims), D = in.in(1, max_width);
    if (in.chance(90)) {  // mostly shapes that heads divide
      M = std::max<int64_t>(heads, M / heads * heads);
      D = std::max<int64_t>(heads, D / heads * heads);
    }
    if (M % heads) valid = false;
    p.heads = heads;
    p.threads = int32_t(in.in(1, 2));
    if (in.chance(1)) p.threads = 0, valid = false;

    int32_t kind = int32_t(in.byte() % 7);
    if (in.chance(2)) kind = in.chance(50) ? -1 : 7, valid = false;
    p.kernel.kind = ka::KernelKind(kind);
    int32_t policy = int32_t(in.byte() % 4);
    if (in.chance(2)) policy = in.chance(50) ? -1 : 4, valid = false;
    p.empty = ka::EmptyPolicy(policy);

    if (kind == int32_t(ka::KernelKind::Softmax)) {
      bool invalid = false;
      p.kernel.scale = in.scale(range, invalid);
      if (invalid) valid = false;
    } else if (kind >= 0 && kind <= 6) {
      bool invalid = false;
      bandwidth.resize(size_t(M));
      const bool shared = in.chance(50);
      for (int64_t d = 0; d < M; ++d) bandwidth[size_t(d)] = shared && d ? bandwidth[0] : in.bandwidth(range, invalid);
      for (float h : bandwidth) finite = finite && std::isfinite(h);
      if (invalid) valid = false;
      p.kernel.bandwidth = bandwidth.data();
    }

    const uint8_t masks = in.byte();
    if (!shardable && (masks & 1)) p.masks.causal = true;
    if (!shardable && (masks & 2)) {
      p.masks.leave_one_out = true;
      if (I != J) valid = false;
    }
    const int density = in.byte() % 101;
    if (masks & 4) {
      key_padding.resize(size_t(J) + 1);
      for (auto& m : key_padding) m = in.chance(density);
      p.masks.key_padding = key_padding.data();
    }
    if (masks & 8) {
      general.resize(size_t(I * J) + 1);
      for (auto& m : general) m = in.chance(density);
      p.masks.general = general.data();
    }
    if (masks & 16) {
      const int groups = int(in.in(1, 4));
      query_groups.resize(size_t(I) + 1);
      key_groups.resize(size_t(J) + 1);
      for (auto& g : query_groups) g = int32_t(in.in(0, groups - 1));
      for (auto& g : key_groups) g = int32_t(in.in(0, groups - 1));
      p.masks.query_groups = query_groups.data();
      if (in.chance(97))
        p.masks.key_groups = key_groups.data();
      else
        valid = false;  // one side of the groups only
    }

    valid_without_values = valid;  // weights() reads no values
    if (D % heads) valid = false;

    q = Owned(in, I, M, range);
    k = Owned(in, J, M, range);
    v = Owned(in, J, D, range);
    finite = finite && q.finite() && k.finite() && v.finite();
    p.queries = q.view();
    p.keys = k.view();
    p.values = v.view();
  }

  // Prints the decoded call (run a harness on one input with KA_FUZZ_VERBOSE=1 to see what it was).
  void describe() const {
    if (!std::getenv("KA_FUZZ_VERBOSE")) return;
    std::fprintf(stderr,
                 "I=%lld J=%lld M=%lld D=%lld heads=%d threads=%d kernel=%d scale=%g empty=%d valid=%d finite=%d\n",
                 (long long)I(), (long long)J(), (long long)p.queries.cols, (long long)p.values.cols, p.heads,
                 p.threads, int(p.kernel.kind), p.kernel.scale, int(p.empty), valid, finite);
    std::fprintf(stderr, "masks: causal=%d loo=%d padding=%d general=%d groups=%d\n", p.masks.causal,
                 p.masks.leave_one_out, !!p.masks.key_padding, !!p.masks.general, !!p.masks.query_groups);
    for (float h : bandwidth) std::fprintf(stderr, "h %.9g\n", h);
    const auto dump = [](const char* name, const Owned& m) {
      for (int64_t i = 0; i < m.rows; ++i) {
        std::fprintf(stderr, "%s[%lld]", name, (long long)i);
        for (int64_t d = 0; d < m.cols; ++d) std::fprintf(stderr, " %.9g", m.at(i, d));
        std::fprintf(stderr, "\n");
      }
    };
    dump("q", q), dump("k", k), dump("v", v);
  }

  int64_t I() const { return p.queries.rows; }
  int64_t J() const { return p.keys.rows; }
  // Whether the masks (not the kernel's support) admit key j for query i.
  bool allows(int64_t i, int64_t j) const { return p.masks.allows(i, j, J()); }

 private:
  // Sizes near the SIMD and tile edges (0, 1, lanes ± 1, 16, 63, 64, 65) more often than elsewhere.
  static int64_t edge_size(Input& in, int64_t max) {
    static const int64_t edges[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65};
    const uint8_t k = in.byte();
    if (k < 128) {
      const int64_t e = edges[k % (sizeof edges / sizeof edges[0])];
      if (e <= max) return e;
    }
    return in.in(0, max);
  }
};

// Output with `pad` sentinel columns per row, which the core must leave untouched.
struct Out {
  static constexpr uint32_t kSentinel = 0x7fc0beefu;  // a NaN payload no computation produces
  std::vector<float> data;
  int64_t rows, cols, stride;

  Out(Input& in, int64_t r, int64_t c) : rows(r), cols(c), stride(c + in.in(0, 2)) {
    data.resize(size_t(std::max<int64_t>(r * stride, 1)));
    float s;
    std::memcpy(&s, &kSentinel, sizeof s);
    std::fill(data.begin(), data.end(), s);
  }
  ka::Matrix view() { return {data.data(), rows, cols, stride}; }
  float at(int64_t i, int64_t d) const { return data[size_t(i * stride + d)]; }
  bool padding_untouched() const {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t d = cols; d < stride; ++d) {
        uint32_t bits;
        std::memcpy(&bits, &data[size_t(i * stride + d)], sizeof bits);
        if (bits != kSentinel) return false;
      }
    return true;
  }
};

// Bit-identical, except that any NaN matches any NaN: with two NaN operands x86 returns the first one's, and the
// compiler may commute an addition differently in two inlined copies, so a NaN's sign and payload are not part of
// the determinism contract (a NaN row stays a NaN row).
inline bool same_bits(const float* a, const float* b, size_t n) {
  for (size_t k = 0; k < n; ++k)
    if (std::memcmp(&a[k], &b[k], sizeof(float)) != 0 && !(std::isnan(a[k]) && std::isnan(b[k]))) return false;
  return true;
}
inline bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && same_bits(a.data(), b.data(), a.size());
}

}  // namespace fuzz
