// libFuzzer harness for the partial states (states.h): attention_states, merge_states, finalize_states.
// Invariants: the status is what check() implies; merging with an empty state, on either side, gives back the
// state's own values; finalize(states) is attention() up to the float32 rounding of the stored state; without the
// masks that depend on absolute key indices, two shards merge in either order to the same values, and finalise to the
// direct result within the rounding the float32 reference log-weight m allows.
#include "decode.h"
#include "engine/exact.h"
#include "engine/exact_narrow.h"
#include "engine/states.h"

using namespace ka;

namespace {

struct OwnedStates {
  std::vector<float> max, sum, acc;
  int64_t rows, cols, stride;
  int32_t heads;
  OwnedStates(int64_t I, int64_t D, int32_t H, int64_t pad)
      : max(size_t(std::max<int64_t>(I * H, 1)), -INFINITY),
        sum(max.size(), 0.0f),
        acc(size_t(std::max<int64_t>(I * (D + pad), 1)), 0.0f),
        rows(I),
        cols(D),
        stride(D + pad),
        heads(H) {}
  States view() { return {max.data(), sum.data(), {acc.data(), rows, cols, stride}, heads}; }
  // Equal values: merging into an empty state turns a −0 sum of weighted values into +0.
  bool same_values(const OwnedStates& o) const { return max == o.max && sum == o.sum && acc == o.acc; }
};

// The keys [first, last) of a call as a problem of its own, masks sliced to match.
struct Shard {
  Problem p;
  std::vector<uint8_t> general;
  Shard(const fuzz::Call& c, int64_t first, int64_t last) : p(c.p) {
    const int64_t I = c.I(), J = c.J(), n = last - first;
    p.keys = {c.p.keys.data + first * c.p.keys.stride, n, c.p.keys.cols, c.p.keys.stride};
    p.values = {c.p.values.data + first * c.p.values.stride, n, c.p.values.cols, c.p.values.stride};
    if (p.masks.key_padding) p.masks.key_padding += first;
    if (p.masks.key_groups) p.masks.key_groups += first;
    if (p.masks.general) {
      general.resize(size_t(I * n) + 1);
      for (int64_t i = 0; i < I; ++i)
        for (int64_t j = 0; j < n; ++j) general[size_t(i * n + j)] = c.p.masks.general[i * J + first + j];
      p.masks.general = general.data();
    }
  }
};

float max_abs_value(const fuzz::Call& c, int64_t col) {
  float m = 0;
  for (int64_t j = 0; j < c.J(); ++j) m = std::max(m, std::fabs(c.v.at(j, col)));
  return m;
}

// The stored a = Σ w·v (every w <= 1 after the shift) is a float32: with J·max|v| beyond FLT_MAX it may overflow
// where attention(), dividing in double, does not (a limit of the float32 state format; docs/reliability.md), so
// the checks on a apply only below that.
bool a_fits(const fuzz::Call& c, int64_t col) {
  return double(c.J()) * max_abs_value(c, col) <= std::numeric_limits<float>::max();
}

// An upper bound on |log-weight| over the call, in double. The state's m is a float32: beyond FLT_MAX it overflows
// to ±inf (softmax logits past float32 range, or (q − k)/h past ~2.6e19 for the Gaussian), a limit of the state
// format (docs/reliability.md), so the checks on m and on merged shards apply only below that.
double score_bound(const fuzz::Call& c) {
  double q = 0, k = 0, h = INFINITY;
  for (int64_t i = 0; i < c.I(); ++i)
    for (int64_t d = 0; d < c.q.cols; ++d) q = std::max(q, double(std::fabs(c.q.at(i, d))));
  for (int64_t j = 0; j < c.J(); ++j)
    for (int64_t d = 0; d < c.k.cols; ++d) k = std::max(k, double(std::fabs(c.k.at(j, d))));
  for (float b : c.bandwidth) h = std::min(h, double(b));
  const double M = double(c.q.cols);
  switch (c.p.kernel.kind) {
    case KernelKind::Softmax: return std::fabs(c.p.kernel.scale) * M * q * k;
    case KernelKind::Gaussian: return M * ((q + k) / h) * ((q + k) / h);
    case KernelKind::Laplacian: return M * (q + k) / h;
    case KernelKind::Cauchy: return M * std::log1p(((q + k) / h) * ((q + k) / h));
    default: return 1e4 * M;  // compact kernels: log of factors of 1 − |u| >= 2^-48 or so
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const bool shardable = in.chance(60);
  fuzz::Call c(in, 70, 20, 6, shardable);
  c.describe();
  const int64_t I = c.I(), J = c.J(), D = c.p.values.cols;
  const int32_t H = c.p.heads;
  const int64_t pad = in.in(0, 2);
  EmptyPolicy policy = EmptyPolicy(in.byte() % 3 == 2 ? 3 : in.byte() % 2);  // NaN, Zero or Error (not Nearest)

  OwnedStates s(I, D, H, pad);
  const Result r = attention_states(c.p, s.view());
  if (!c.valid) {
    KA_FUZZ_CHECK(r.status == Status::BadArgument || r.status == Status::BadShape);
    return 0;
  }
  KA_FUZZ_CHECK(r.status == Status::Ok);
  if (!c.finite) {  // still exercise merge and finalize on whatever came out
    OwnedStates t = s;
    merge_states(t.view(), s.view());
    fuzz::Out out(in, I, D);
    finalize_states(s.view(), policy, out.view());
    return 0;
  }
  const bool m_fits = score_bound(c) < 1e38;
  for (size_t k = 0; k < s.sum.size() && I > 0 && std::getenv("KA_FUZZ_VERBOSE"); ++k)
    std::fprintf(stderr, "state %zu: max %g sum %g\n", k, s.max[k], s.sum[k]);
  for (size_t k = 0; k < s.sum.size() && I > 0 && m_fits; ++k) {
    KA_FUZZ_CHECK(s.sum[k] >= 0 && std::isfinite(s.sum[k]));
    KA_FUZZ_CHECK(s.sum[k] > 0 ? std::isfinite(s.max[k]) : s.max[k] == -INFINITY);
  }

  // Merging with an empty state, on either side, is the identity.
  OwnedStates empty(I, D, H, pad), left = s, right = empty;
  KA_FUZZ_CHECK(merge_states(left.view(), empty.view()).status == Status::Ok);
  KA_FUZZ_CHECK(merge_states(right.view(), s.view()).status == Status::Ok);
  for (int64_t i = 0; i < I; ++i)  // the row padding of acc is not the engine's to write
    for (int64_t d = D; d < D + pad; ++d) KA_FUZZ_CHECK(s.acc[size_t(i * (D + pad) + d)] == 0);
  KA_FUZZ_CHECK(!m_fits || left.same_values(s));
  KA_FUZZ_CHECK(!m_fits || right.same_values(s));

  // finalize(states) against attention() with the same policy.
  fuzz::Out fin(in, I, D), direct = fin;
  Problem p = c.p;
  p.empty = policy;
  const Result rf = finalize_states(s.view(), policy, fin.view());
  const Result ra = attention(p, direct.view());
  KA_FUZZ_CHECK(rf.status == ra.status);
  if (rf.status != Status::Ok) return 0;
  KA_FUZZ_CHECK(fin.padding_untouched());
  for (int64_t i = 0; i < I; ++i)
    for (int64_t d = 0; d < D; ++d) {
      if (!a_fits(c, d)) continue;
      const float a = fin.at(i, d), b = direct.at(i, d);
      if (std::isnan(a) && std::isnan(b)) continue;
      // Two roundings of the stored state (z and a) and one of the quotient, and the underflow floor for a.
      const float tol = 4e-7f * std::fabs(b) + fuzz::kUnderflowFloor;
      if (!(std::fabs(a - b) <= tol)) {
        std::fprintf(stderr, "finalize %.9g vs attention %.9g at row %lld col %lld\n", a, b, (long long)i,
                     (long long)d);
        KA_FUZZ_CHECK(false);
      }
    }
  if (!shardable || !m_fits) return 0;

  // Two shards, merged in both orders.
  const int64_t cut = in.in(0, J);
  const Shard first(c, 0, cut), second(c, cut, J);
  OwnedStates a(I, D, H, pad), b(I, D, H, pad);
  KA_FUZZ_CHECK(attention_states(first.p, a.view()).status == Status::Ok);
  KA_FUZZ_CHECK(attention_states(second.p, b.view()).status == Status::Ok);
  OwnedStates ab = a, ba = b;
  KA_FUZZ_CHECK(merge_states(ab.view(), b.view()).status == Status::Ok);
  KA_FUZZ_CHECK(merge_states(ba.view(), a.view()).status == Status::Ok);
  // Equal values (m may be +0 in one shard and −0 in the other: a tie keeps whichever came first).
  KA_FUZZ_CHECK(ab.max == ba.max && ab.sum == ba.sum);
  for (int64_t i = 0; i < I; ++i)
    for (int64_t d = 0; d < D; ++d)
      if (a_fits(c, d)) KA_FUZZ_CHECK(ab.acc[size_t(i * (D + pad) + d)] == ba.acc[size_t(i * (D + pad) + d)]);
  fuzz::Out merged(in, I, D);
  KA_FUZZ_CHECK(finalize_states(ab.view(), policy, merged.view()).status == rf.status);
  for (int64_t i = 0; i < I; ++i)
    for (int32_t h = 0; h < H; ++h) {
      // Each shard's weights are relative to its own m, stored as float32: a relative error up to |m|·2^-24 in
      // each shard's share, on top of the rounding of z and a. The float32 scores themselves err by ~|s|·2^-24,
      // and a distance kernel's narrow path shifts by a fixed 0, storing m = 0 for scores down to
      // narrow::kFixedShiftFloor (−58 in log2 units): there |s|, not m, sets the error.
      const size_t at = size_t(i * H + h);
      float m = c.p.kernel.kind == KernelKind::Softmax ? 0.0f : -narrow::kFixedShiftFloor;
      for (const OwnedStates* st : {&s, &a, &b})
        if (st->sum[at] > 0) m = std::max(m, std::fabs(st->max[at]));
      const int64_t width = D / H;
      for (int64_t d = h * width; d < (h + 1) * width; ++d) {
        if (!a_fits(c, d)) continue;
        const float x = merged.at(i, d), y = fin.at(i, d);
        if (std::isnan(x) && std::isnan(y)) continue;
        const float tol = 2 * max_abs_value(c, d) * (1e-6f + m * 0x1p-23f) + fuzz::kUnderflowFloor;
        if (!(std::fabs(x - y) <= tol)) {
          std::fprintf(stderr, "merged %.9g vs direct %.9g at row %lld col %lld (cut %lld, m %g)\n", x, y, (long long)i,
                       (long long)d, (long long)cut, m);
          std::fprintf(stderr, "admitted keys:");
          for (int64_t j = 0; j < J; ++j)
            if (c.allows(i, j)) std::fprintf(stderr, " %lld", (long long)j);
          const size_t ad = size_t(i * (D + pad) + d);
          std::fprintf(stderr, "\nstates (m, z, a): direct (%g, %g, %g) first (%g, %g, %g) second (%g, %g, %g)\n",
                       s.max[at], s.sum[at], s.acc[ad], a.max[at], a.sum[at], a.acc[ad], b.max[at], b.sum[at],
                       b.acc[ad]);
          KA_FUZZ_CHECK(false);
        }
      }
    }
  return 0;
}
