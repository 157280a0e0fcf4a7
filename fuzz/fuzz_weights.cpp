// libFuzzer harness for ka::weights (weights.h) and ka::top_k_attention (top_k.h), which streams the same rows.
// Invariants: the status is what check() implies; nothing is written past H·I·J floats; with finite inputs each row
// is all NaN or all zero exactly where the policy allows an empty row, and otherwise holds weights in [0, 1] that are
// 0 wherever the masks forbid the key and sum to 1. Top-k stops at the same empty row, leaves the output's row padding
// alone, and gives NaN, zeros or a value within the range of the values of the keys with nonzero weight, as the
// weights' row is NaN, zero or neither; its dropped mass is ≥ 0 (NaN for a NaN row).
#include "decode.h"
#include "methods/top_k.h"
#include "engine/weights.h"

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

// Top-k attention of the call with k drawn from the input, against `w`, the weights() output of the same call.
void check_top_k(const fuzz::Call& c, fuzz::Input& in, const float* w, const Result& weights_result) {
  const int64_t I = c.I(), J = c.J(), H = c.p.heads, D = c.p.values.cols, width = D / H;
  const int64_t k = in.in(1, J + 2);
  fuzz::Out out(in, I, D);
  std::vector<double> dropped(size_t(I * H), -1.0);
  SparseReport report;
  const Result r = top_k_attention(c.p, k, SparseOut{out.view(), dropped.data()}, &report);
  KA_FUZZ_CHECK(r.status == weights_result.status && r.row == weights_result.row && r.head == weights_result.head);
  if (r.status != Status::Ok) return;
  KA_FUZZ_CHECK(out.padding_untouched());
  KA_FUZZ_CHECK(report.kept_keys + report.skipped_keys == I * J * H);
  if (!c.finite) return;
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < I; ++i) {
      const float* row = w + (h * I + i) * J;
      const double d = dropped[size_t(i * H + h)];
      // An empty row under 'nan': weights() writes NaN weights; with no keys at all there is no weight row to read.
      const bool nan_row = J > 0 ? std::isnan(row[0]) : c.p.empty == EmptyPolicy::NaN;
      KA_FUZZ_CHECK(nan_row ? std::isnan(d) : d >= 0);
      for (int64_t col = h * width; col < (h + 1) * width; ++col) {
        const float o = out.at(i, col);
        float lo = INFINITY, hi = -INFINITY;
        for (int64_t j = 0; j < J; ++j)
          if (row[j] > 0) lo = std::min(lo, c.v.at(j, col)), hi = std::max(hi, c.v.at(j, col));
        if (nan_row) {
          KA_FUZZ_CHECK(std::isnan(o));
        } else if (lo > hi) {
          KA_FUZZ_CHECK(o == 0);
        } else {
          // A mean in double of float32 weights and values, rounded once: within the hull up to one rounding.
          const float tol = 1e-6f * std::max(std::fabs(lo), std::fabs(hi)) + fuzz::kUnderflowFloor;
          if (!(o >= lo - tol && o <= hi + tol)) {
            std::fprintf(stderr, "top-k row %lld col %lld: %.9g outside [%.9g, %.9g]\n", (long long)i, (long long)col,
                         o, lo, hi);
            KA_FUZZ_CHECK(false);
          }
        }
      }
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
    if (c.valid) check_top_k(c, in, out.data(), r);
    return 0;
  }
  KA_FUZZ_CHECK(r.status == Status::Ok);
  if (c.finite)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < I; ++i) check_row(c, out.data() + (h * I + i) * J, i);
  if (c.valid) check_top_k(c, in, out.data(), r);
  return 0;
}
