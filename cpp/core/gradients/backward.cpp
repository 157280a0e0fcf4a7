// The backward pass of the exact engine (backward.h): recomputation of the weights from the saved log-sum-exp, in
// float32 where it is accurate enough (backward_wide.h), else in double (backward_double.h).
#include "gradients/backward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gradients/backward_double.h"
#include "gradients/backward_wide.h"
#include "engine/exact.h"
#include "engine/head.h"
#include "kernel/kernels_simd.h"
#include "engine/online_softmax.h"
#include "engine/scalar_row.h"
#include "base/rare.h"
#include "base/scratch.h"
#include "engine/workspace.h"

namespace ka {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool fits(const Matrix& m, int64_t rows, int64_t cols) {
  return m.rows == 0 || (m.data && m.rows == rows && m.cols == cols && m.stride >= cols);
}

}  // namespace

// O(I·D) around the engine's forward pass: KA_RARE.
KA_RARE Result attention_forward(const Problem& p, Matrix out, double* lse) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  const int64_t I = p.queries.rows, H = p.heads, width = p.values.cols / H;
  if (out.rows != I || out.cols != p.values.cols || (I > 0 && (!out.data || !lse))) return {Status::BadShape};
  Scratch<double> sums(I * H), block(1 + width);
  Scratch<uint8_t> chosen(p.keys.rows);
  if (!sums.ok() || !block.ok() || !chosen.ok()) return {Status::OutOfMemory};
  const StateOut states{lse, sums.get(), out, p.heads};
  if (const Result r = run_exact(p, out, &states, p.threads); r.status != Status::Ok) return r;
  // out holds each row's unnormalised value sums a, lse its reference maximum m and sums its z: O = a/z, L = m + log z.
  for (int64_t i = 0; i < I; ++i)
    for (int32_t h = 0; h < p.heads; ++h) {
      const int64_t at = i * H + h;
      float* row = out.row(i) + h * width;
      SoftmaxState<double> st(block.get(), width);
      st.max = lse[at];
      st.sum() = sums.get()[at];
      for (int64_t d = 0; d < width; ++d) st.acc()[d] = row[d];
      const Head hd = head_of(p, h);
      if (finalize(st, row, p.empty, NearestKeys{&hd, i, chosen.get()}) == RowOutcome::Error)
        return {Status::EmptyRow, i, h};
      lse[at] = st.empty() ? -kInf : lse[at] + std::log(st.sum());
    }
  return {};
}

namespace {

// The dθ of the rows the float32 path took (in the heads marked in wide_heads), again in double (rare: KA_RARE).
KA_RARE double wide_theta_in_double(const Problem& p, const double* lse, ConstMatrix dout,
                                    const std::vector<uint8_t>& wide_heads) {
  const int64_t I = p.queries.rows, H = p.heads, width = p.values.cols / H;
  double theta = 0;
  for (int32_t h = 0; h < p.heads; ++h) {
    if (!wide_heads[size_t(h)]) continue;
    const Head hd = head_of(p, h);
    const ConstMatrix dout_h = dout.columns(h * width, width);
    for (int64_t i = 0; i < I; ++i) {
      const double L = lse[i * H + h];
      if (backward_row_in_float(L) && several_keys(hd, i)) theta += row_theta(hd, i, L, dout_h);
    }
  }
  return theta;
}

// Marks the rows of head h that the float32 path takes, with their log-sum-exp in log2 units and D_i = dO_i·O_i
// (O(I·width) beside the pass's O(I·J·(m + width)): KA_RARE); true when there is one.
KA_RARE bool wide_rows(const Head& hd, int32_t h, const double* lse, int64_t H, ConstMatrix dout_h, ConstMatrix out,
                       uint8_t* on, float* lse2, float* delta2) {
  const int64_t width = dout_h.cols;
  bool any = false;
  for (int64_t i = 0; i < hd.queries.rows; ++i) {
    const double L = lse[i * H + h];
    on[i] = backward_row_in_float(L) && several_keys(hd, i);
    any = any || on[i];
    lse2[i] = float(L * kLog2e);
    double dO_O = 0;
    for (int64_t d = 0; d < width; ++d) dO_O += double(dout_h.row(i)[d]) * double(out.row(i)[h * width + d]);
    delta2[i] = float(dO_O);
  }
  return any;
}

// Head h's double accumulators into the float32 outputs' columns (O((I + J)·(m + width)): KA_RARE).
KA_RARE void store_head(int32_t h, const HeadGrads& g, int64_t m, int64_t width, const Gradients& grads) {
  for (int64_t i = 0; i < grads.queries.rows; ++i)
    for (int64_t d = 0; d < m; ++d) grads.queries.row(i)[h * m + d] = float(g.dq[i * m + d]);
  for (int64_t j = 0; j < grads.keys.rows; ++j)
    for (int64_t d = 0; d < m; ++d) grads.keys.row(j)[h * m + d] = float(g.dk[j * m + d]);
  for (int64_t j = 0; j < grads.values.rows; ++j)
    for (int64_t d = 0; d < width; ++d) grads.values.row(j)[h * width + d] = float(g.dv[j * width + d]);
}

// attention_backward() given the forward's output `out` (I × D) for the float32 path's D_i = dO_i·O_i; `out` may be
// empty when no head takes that path.
Result backward(const Problem& p, const double* lse, ConstMatrix dout, Gradients grads, ConstMatrix out) {
  const int64_t I = p.queries.rows, J = p.keys.rows, M = p.queries.cols, D = p.values.cols, H = p.heads;
  const int64_t m = M / H, width = D / H;
  const bool softmax = p.kernel.kind == KernelKind::Softmax;
  const bool wide = softmax && out.rows == I && I > 0;
  Scratch<double> dq(I * m), dk(J * m), dv(J * width), dtheta(m), row_lse(I), delta(I), bandwidth(m);
  Scratch<uint8_t> chosen(J), on(wide ? I : 0);
  Scratch<float> lse2(wide ? I : 0), delta2(wide ? I : 0);
  if (!dq.ok() || !dk.ok() || !dv.ok() || !dtheta.ok() || !row_lse.ok() || !delta.ok() || !bandwidth.ok() ||
      !chosen.ok() || !on.ok() || !lse2.ok() || !delta2.ok())
    return {Status::OutOfMemory};
  const auto zero = [&] {
    std::fill(dq.get(), dq.get() + I * m, 0.0);
    std::fill(dk.get(), dk.get() + J * m, 0.0);
    std::fill(dv.get(), dv.get() + J * width, 0.0);
    std::fill(dtheta.get(), dtheta.get() + m, 0.0);
  };
  double scale_grad = 0;
  ScaleGradient wide_theta;                       // the float32 rows' share of dL/d scale
  std::vector<uint8_t> wide_heads(size_t(H), 0);  // heads whose float32 rows went through backward_wide()
  for (int32_t h = 0; h < p.heads; ++h) {
    const Head hd = head_of(p, h);
    zero();
    if (!softmax)
      for (int64_t d = 0; d < m; ++d) bandwidth.get()[d] = double(hd.kernel.bandwidth[d]);
    const RowData rows{row_lse.get(), delta.get()};
    const HeadGrads g{dq.get(), dk.get(), dv.get(), dtheta.get()};
    const ConstMatrix dout_h = dout.columns(h * width, width);
    // Softmax rows whose scores float32 resolves go to backward_wide(); the rest (empty rows, huge logits) stay here.
    bool any_wide = false;
    if (wide) any_wide = wide_rows(hd, h, lse, H, dout_h, out, on.get(), lse2.get(), delta2.get());
    const auto run_double = [&](const uint8_t* skip) {
      return backward_double(p.kernel.kind, hd, h, bandwidth.get(), lse, p.heads, dout_h, rows, g, chosen.get(), skip);
    };
    Result r = run_double(any_wide ? on.get() : nullptr);
    if (r.status != Status::Ok) return r;
    if (any_wide) {
      const WideRows in{on.get(), lse2.get(), delta2.get()};
      const WideOutcome w = backward_wide(hd, dout_h, in, dq.get(), dk.get(), dv.get(), wide_theta);
      if (w == WideOutcome::OutOfMemory) return {Status::OutOfMemory};
      if (w == WideOutcome::Done) wide_heads[size_t(h)] = 1;
      if (w == WideOutcome::Fallback) {  // rare (float32 overflow, or D too coarse): the whole head in double
        zero();
        if (r = run_double(nullptr); r.status != Status::Ok) return r;
      }
    }
    store_head(h, g, m, width, grads);
    if (softmax)
      scale_grad += dtheta.get()[0];
    else if (grads.kernel)
      for (int64_t d = 0; d < m; ++d) grads.kernel[h * m + d] = float(dtheta.get()[d]);
  }
  if (softmax && grads.kernel) {
    // The float32 rows' dθ, unless its estimated rounding error is too large a part of the total (its terms
    // cancelled): then those rows' dθ again, in double.
    double theta = wide_theta.value;
    if (wide_theta.error() > kScaleGradientTolerance * std::fabs(scale_grad + theta))
      theta = wide_theta_in_double(p, lse, dout, wide_heads);
    grads.kernel[0] = float(scale_grad + theta);
  }
  return {};
}

Status check_backward(const Problem& p, const double* lse, ConstMatrix dout, const Gradients& grads) {
  if (const Status s = check(p, true); s != Status::Ok) return s;
  if (p.kernel.kind == KernelKind::Uniform) return Status::BadArgument;
  const int64_t I = p.queries.rows, J = p.keys.rows, M = p.queries.cols, D = p.values.cols;
  if (dout.rows != I || dout.cols != D) return Status::BadShape;
  if (I > 0 && (!dout.data || !lse)) return Status::BadShape;
  if (!fits(grads.queries, I, M) || !fits(grads.keys, J, M) || !fits(grads.values, J, D)) return Status::BadShape;
  return Status::Ok;
}

}  // namespace

Result attention_backward(const Problem& p, const double* lse, ConstMatrix dout, Gradients grads) {
  if (const Status s = check_backward(p, lse, dout, grads); s != Status::Ok) return {s};
  if (p.kernel.kind != KernelKind::Softmax) return backward(p, lse, dout, grads, ConstMatrix{});
  // The float32 path takes D_i = dO_i·O_i from the output, which this entry is not given: one forward pass more.
  const int64_t I = p.queries.rows, D = p.values.cols;
  Scratch<float> out(I * D);
  if (!out.ok()) return {Status::OutOfMemory};
  if (I > 0 && attention(p, Matrix{out.get(), I, D, D}).status != Status::Ok)
    return backward(p, lse, dout, grads,
                    ConstMatrix{});  // an empty row under EmptyPolicy::Error: double path reports it
  return backward(p, lse, dout, grads, ConstMatrix{out.get(), I, D, D});
}

Result attention_gradients(const Problem& p, ConstMatrix dout, Gradients grads, Matrix out) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  if (p.kernel.kind == KernelKind::Uniform) return {Status::BadArgument};
  const int64_t I = p.queries.rows, D = p.values.cols;
  Scratch<double> lse(I * p.heads);
  Scratch<float> own(out.rows == 0 ? I * D : 0);
  if (!lse.ok() || !own.ok()) return {Status::OutOfMemory};
  if (out.rows == 0) out = Matrix{own.get(), I, D, D};
  if (const Result r = attention_forward(p, out, lse.get()); r.status != Status::Ok) return r;
  if (const Status s = check_backward(p, lse.get(), dout, grads); s != Status::Ok) return {s};
  return backward(p, lse.get(), dout, grads, ConstMatrix{out.data, out.rows, out.cols, out.stride});
}

}  // namespace ka
