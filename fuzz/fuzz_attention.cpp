// libFuzzer harness for ka::attention (exact.h): every kernel, mask, head count and empty-row policy, on one and two
// threads. Invariants: the status is what check() implies; two threads give the bytes of one; the output's row
// padding is untouched; with finite inputs every output lies within [min, max] of the values its masks admit (a
// convex combination), is 0 or NaN only where the policy says so, and is finite unless the policy is NaN.
#include "decode.h"
#include "engine/exact.h"

using namespace ka;

namespace {

// Accumulation error allowed outside [lo, hi], relative to max(|lo|, |hi|): the float32 sums of ≤ 70 weighted values
// and of their weights each carry at most ~70 · 2^-24 ≈ 4.2e-6 relative error.
constexpr float kHullTolerance = 1e-5f;

void check_row(const fuzz::Call& c, const fuzz::Out& out, int64_t i) {
  const int64_t J = c.J();
  // Only compact kernels can leave a row with admissible keys empty; the others always reach the nearest key.
  const bool may_be_empty = is_compact(c.p.kernel.kind);
  for (int64_t col = 0; col < c.p.values.cols; ++col) {
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t j = 0; j < J; ++j)
      if (c.allows(i, j)) lo = std::min(lo, c.v.at(j, col)), hi = std::max(hi, c.v.at(j, col));
    const float o = out.at(i, col);
    if (c.p.empty == EmptyPolicy::NaN && std::isnan(o) && (may_be_empty || lo > hi)) continue;  // an empty row
    KA_FUZZ_CHECK(std::isfinite(o));
    if (lo > hi) {  // no key admitted by the masks: the policy's fill (Nearest falls back to zeros)
      KA_FUZZ_CHECK(o == 0 && c.p.empty != EmptyPolicy::NaN);
      continue;
    }
    if (c.p.empty == EmptyPolicy::Zero && o == 0) continue;
    const float tol = kHullTolerance * std::max(std::fabs(lo), std::fabs(hi)) + fuzz::kUnderflowFloor;
    if (!(o >= lo - tol && o <= hi + tol)) {
      std::fprintf(stderr, "row %lld col %lld: %.9g outside [%.9g, %.9g]\n", (long long)i, (long long)col, o, lo, hi);
      KA_FUZZ_CHECK(false);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const fuzz::Call c(in, 70, 20, 6);
  c.describe();
  const int64_t I = c.I(), D = c.p.values.cols;
  fuzz::Out one(in, I, D);
  fuzz::Out two = one;
  const Result r1 = attention(c.p, one.view());                            // p.threads (1 or 2)
  const Result r2 = attention(c.p, two.view(), c.p.threads == 1 ? 2 : 1);  // the other count

  KA_FUZZ_CHECK(r1.status == r2.status && r1.row == r2.row && r1.head == r2.head);
  if (!c.valid) {
    KA_FUZZ_CHECK(r1.status == Status::BadArgument || r1.status == Status::BadShape);
    return 0;
  }
  if (r1.status == Status::EmptyRow) {
    KA_FUZZ_CHECK(c.p.empty == EmptyPolicy::Error && r1.row >= 0 && r1.row < I && r1.head >= 0 && r1.head < c.p.heads);
    return 0;
  }
  KA_FUZZ_CHECK(r1.status == Status::Ok);
  KA_FUZZ_CHECK(fuzz::same_bits(one.data, two.data));
  KA_FUZZ_CHECK(one.padding_untouched());
  if (c.finite)
    for (int64_t i = 0; i < I; ++i) check_row(c, one, i);
  return 0;
}
