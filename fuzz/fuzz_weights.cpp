// libFuzzer harness for ka::weights (weights.h). Invariants: the status is what check() implies; nothing is written
// past H·I·J floats; with finite inputs each row is all NaN or all zero exactly where the policy allows an empty row,
// and otherwise holds weights in [0, 1] that are 0 wherever the masks forbid the key and sum to 1.
#include "decode.h"
#include "weights.h"

using namespace ka;

namespace {

// A row of J ≤ 70 normalised float32 weights sums to 1 within about 2 · 70 · 2^-24 ≈ 8.3e-6.
constexpr double kSumTolerance = 1e-5;
constexpr int64_t kGuard = 16;

void check_row(const fuzz::Call& c, const float* w, int64_t i) {
  const int64_t J = c.J();
  int64_t admitted = 0, nans = 0, zeros = 0;
  for (int64_t j = 0; j < J; ++j) {
    admitted += c.allows(i, j);
    nans += std::isnan(w[j]);
    zeros += w[j] == 0;
  }
  const bool may_be_empty = is_compact(c.p.kernel.kind) || admitted == 0;
  if (may_be_empty && c.p.empty == EmptyPolicy::NaN && nans == J) return;
  if (may_be_empty && (c.p.empty == EmptyPolicy::Zero || admitted == 0) && zeros == J) {
    KA_FUZZ_CHECK(c.p.empty != EmptyPolicy::NaN);
    return;
  }
  KA_FUZZ_CHECK(admitted > 0);
  double sum = 0;
  for (int64_t j = 0; j < J; ++j) {
    KA_FUZZ_CHECK(w[j] >= 0 && w[j] <= 1);
    if (!c.allows(i, j)) KA_FUZZ_CHECK(w[j] == 0);
    sum += w[j];
  }
  if (!(std::fabs(sum - 1) <= kSumTolerance)) {
    std::fprintf(stderr, "row %lld sums to %.9g\n", (long long)i, sum);
    KA_FUZZ_CHECK(false);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const fuzz::Call c(in, 70, 20, 4);
  c.describe();
  const int64_t I = c.I(), J = c.J(), H = c.p.heads, n = H * I * J;
  std::vector<float> out(size_t(n + kGuard), -1.0f);
  const Result r = weights(c.p, out.data());

  if (!c.valid_without_values) {
    KA_FUZZ_CHECK(r.status == Status::BadArgument || r.status == Status::BadShape);
    return 0;
  }
  for (int64_t g = n; g < n + kGuard; ++g) KA_FUZZ_CHECK(out[size_t(g)] == -1.0f);
  if (r.status == Status::EmptyRow) {
    KA_FUZZ_CHECK(c.p.empty == EmptyPolicy::Error && r.row >= 0 && r.row < I && r.head >= 0 && r.head < H);
    return 0;
  }
  KA_FUZZ_CHECK(r.status == Status::Ok);
  if (c.finite)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < I; ++i) check_row(c, out.data() + (h * I + i) * J, i);
  return 0;
}
