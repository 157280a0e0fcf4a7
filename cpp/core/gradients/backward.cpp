// The backward pass of the exact engine (backward.h): recomputation of the weights from the saved log-sum-exp.
#include "gradients/backward.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "gradients/backward_wide.h"
#include "engine/exact.h"
#include "engine/head.h"
#include "kernel/kernels_simd.h"
#include "engine/online_softmax.h"
#include "engine/scalar_row.h"
#include "base/scratch.h"
#include "engine/workspace.h"

namespace ka {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kBackwardTile = 64;  // keys whose gradient rows stay in L1 while every query passes over them

// s(q, k) in double from float32 inputs, the same arithmetic as log_score<double> (kernels.h), so the support of a
// compact kernel is decided exactly as the reference decides it. `dot` receives q·k for softmax.
template <KernelKind K>
double pair_score(const float* q, const float* k, const double* h, int64_t m, double scale, double& dot) {
  if constexpr (K == KernelKind::Softmax) {
    double s = 0;
    for (int64_t d = 0; d < m; ++d) s += double(q[d]) * double(k[d]);
    dot = s;
    return scale * s;
  }
  double acc = 0;
  for (int64_t d = 0; d < m; ++d) {
    if constexpr (is_compact(K)) {
      const double f = compact_log_factor<double>(K, double(q[d]), double(k[d]), h[d]);
      if (f == -kInf) return -kInf;
      acc += f;
      continue;
    }
    const double u = (double(q[d]) - double(k[d])) / h[d];
    if constexpr (K == KernelKind::Gaussian || K == KernelKind::Cauchy) acc += u * u;
    if constexpr (K == KernelKind::Laplacian) acc += std::abs(u);
  }
  if constexpr (K == KernelKind::Gaussian) return -acc / 2;
  if constexpr (K == KernelKind::Laplacian) return -acc;
  if constexpr (K == KernelKind::Cauchy) return -std::log1p(acc);
  return acc;
}

// Adds dS · ∂s/∂(q, k, log h) of one distance-kernel pair: with g_d = ∂s/∂u_d, ∂s/∂q_d = g_d/h_d,
// ∂s/∂k_d = −g_d/h_d and ∂s/∂b_d = −u_d g_d.
template <KernelKind K>
void add_distance_grads(const float* q, const float* k, const double* h, int64_t m, double s, double dS, double* dq,
                        double* dk, double* db) {
  // Cauchy: s = −log(1 + A), so 1 + A = e^(−s) and g_d = −2 u_d / (1 + A).
  const double cauchy = K == KernelKind::Cauchy ? 2 * std::exp(s) : 0;
  for (int64_t d = 0; d < m; ++d) {
    const double u = (double(q[d]) - double(k[d])) / h[d];
    const double a = std::abs(u), sign = u > 0 ? 1.0 : u < 0 ? -1.0 : 0.0;
    double g = 0;
    if constexpr (K == KernelKind::Gaussian) g = -u;
    if constexpr (K == KernelKind::Laplacian) g = -sign;  // subgradient 0 at u = 0
    if constexpr (K == KernelKind::Cauchy) g = -cauchy * u;
    if constexpr (K == KernelKind::Epanechnikov) g = -2 * u / ((1 - a) * (1 + a));
    if constexpr (K == KernelKind::Tricube) g = -9 * a * a * sign / ((1 - a) * (1 + a + a * a));
    const double t = dS * g / h[d];
    dq[d] += t;
    dk[d] -= t;
    db[d] -= dS * u * g;
  }
}

// Per-query data of one head: the log-sum-exp in double (−inf: empty row) and D_i = dO_i·O_i.
struct RowData {
  double* lse;
  double* delta;
};

// Accumulators of one head, in double: dq I × m, dk J × m, dv J × width, dtheta m (or 1 for softmax).
struct HeadGrads {
  double* dq;
  double* dk;
  double* dv;
  double* dtheta;
};

// The log-sum-exp of row i over its admissible keys, in double (for rows where the float32 one is too coarse).
template <KernelKind K>
double row_lse(const Head& hd, int64_t i, const double* h, double scale) {
  const int64_t m = hd.queries.cols;
  SoftmaxState<double> st;  // width 0: only the shift and the sum
  double dot = 0;
  for (int64_t j = 0; j < hd.keys.rows; ++j)
    if (hd.allows(i, j)) st.add(pair_score<K>(hd.queries.row(i), hd.keys.row(j), h, m, scale, dot), nullptr);
  return st.max == -kInf ? -kInf : st.max + std::log(st.sum);
}

template <KernelKind K, bool Masked>
void backward_tiles(const Head& hd, const double* h, double scale, ConstMatrix dout, const RowData& rows,
                    const HeadGrads& g) {
  const int64_t I = hd.queries.rows, J = hd.keys.rows, m = hd.queries.cols, width = hd.values.cols;
  const bool causal = hd.masks->causal;
  double dot = 0;
  for (int64_t j0 = 0; j0 < J; j0 += kBackwardTile) {
    const int64_t j1 = std::min(J, j0 + kBackwardTile);
    for (int64_t i = causal ? j0 : 0; i < I; ++i) {  // causal: keys j0… are admissible for queries i >= j0 only
      const double L = rows.lse[i];
      if (L == -kInf) continue;
      const float* q = hd.queries.row(i);
      const float* dO = dout.row(i);
      double* dq = g.dq + i * m;
      for (int64_t j = j0; j < j1; ++j) {
        if (Masked && !hd.allows(i, j)) continue;
        const float* k = hd.keys.row(j);
        const double s = pair_score<K>(q, k, h, m, scale, dot);
        const double P = std::exp(s - L);  // 0 outside a compact support (s = −inf)
        if (P == 0) continue;
        const float* v = hd.values.row(j);
        double dP = 0;
        for (int64_t d = 0; d < width; ++d) dP += double(dO[d]) * double(v[d]);
        const double dS = P * (dP - rows.delta[i]);
        double* dv = g.dv + j * width;
        for (int64_t d = 0; d < width; ++d) dv[d] += P * double(dO[d]);
        double* dk = g.dk + j * m;
        if constexpr (K == KernelKind::Softmax) {
          const double f = dS * scale;
          for (int64_t d = 0; d < m; ++d) {
            dq[d] += f * double(k[d]);
            dk[d] += f * double(q[d]);
          }
          g.dtheta[0] += dS * dot;
        } else {
          add_distance_grads<K>(q, k, h, m, s, dS, dq, dk, g.dtheta);
        }
      }
    }
  }
}

// Row statistics in double, one pass over each row's keys shifted by the saved log-sum-exp L_i (so no weight
// exceeds ~1 and no running maximum is needed): Z_i = Σ_j e^(s_ij − L_i), which corrects L_i to the exact double
// log-sum-exp, and D_i = Σ_j P_ij dO_i·v_j, which equals dO_i·O_i. Taking D_i from the float32 output instead (as
// FlashAttention-2 does) leaves Σ_j dS_ij ≠ 0 by the output's rounding, and the scale or log-bandwidth gradients,
// sums over all I·J pairs with heavy cancellation, then lose up to 5e-2 of their value (measured).
template <KernelKind K>
void row_statistics(const Head& hd, int64_t i, const double* h, ConstMatrix dout, double& L, double& delta) {
  const int64_t m = hd.queries.cols, width = hd.values.cols;
  const float* q = hd.queries.row(i);
  const float* dO = dout.row(i);
  double z = 0, pd = 0, dot = 0;
  for (int64_t j = 0; j < hd.keys.rows; ++j) {
    if (!hd.allows(i, j)) continue;
    const double w = std::exp(pair_score<K>(q, hd.keys.row(j), h, m, hd.kernel.scale, dot) - L);
    if (w == 0) continue;
    const float* v = hd.values.row(j);
    double dP = 0;
    for (int64_t d = 0; d < width; ++d) dP += double(dO[d]) * double(v[d]);
    z += w;
    pd += w * dP;
  }
  if (!(z > 0) || !std::isfinite(z)) {  // only when the saved L_i was far off: redo the row from scratch
    L = row_lse<K>(hd, i, h, hd.kernel.scale);
    if (L == -kInf) return;
    row_statistics<K>(hd, i, h, dout, L, delta);
    return;
  }
  L += std::log(z);
  delta = pd / z;
}

// The scale gradient of softmax row i in double, Σ_j P_ij (dP_ij − D_i) q_i·k_j, for rows of the float32 path whose
// float32 sum was not accurate enough (backward_wide.h).
double row_theta(const Head& hd, int64_t i, double L, ConstMatrix dout) {
  constexpr KernelKind K = KernelKind::Softmax;
  double delta = 0, dot = 0, theta = 0;
  row_statistics<K>(hd, i, nullptr, dout, L, delta);
  if (L == -kInf) return 0;
  const int64_t m = hd.queries.cols, width = hd.values.cols;
  const float* dO = dout.row(i);
  for (int64_t j = 0; j < hd.keys.rows; ++j) {
    if (!hd.allows(i, j)) continue;
    const double P = std::exp(pair_score<K>(hd.queries.row(i), hd.keys.row(j), nullptr, m, hd.kernel.scale, dot) - L);
    const float* v = hd.values.row(j);
    double dP = 0;
    for (int64_t d = 0; d < width; ++d) dP += double(dO[d]) * double(v[d]);
    theta += P * (dP - delta) * dot;
  }
  return theta;
}

// Whether query i has at least two admissible keys. With one, dS_ij = 0 exactly (P = 1, D_i = dP_ij), which the
// double path reproduces and float32 would not (its dP and D round differently): rows of I×1 problems, the first
// row under a causal mask.
bool several_keys(const Head& hd, int64_t i) {
  if (!hd.masks->any()) return hd.keys.rows > 1;
  int count = 0;
  for (int64_t j = 0; j < hd.keys.rows && count < 2; ++j) count += hd.allows(i, j);
  return count >= 2;
}

// The double path for the rows of one head that `skip` does not mark (null: every row); marked rows are left to
// backward_wide() and contribute nothing here.
template <KernelKind K>
Result backward_head(const Head& hd, int32_t head, const double* h, const double* lse, int32_t heads, ConstMatrix dout,
                     const RowData& rows, const HeadGrads& g, uint8_t* chosen, const uint8_t* skip) {
  const int64_t I = hd.queries.rows, width = hd.values.cols;
  bool any = false;
  for (int64_t i = 0; i < I; ++i) {
    double L = lse[i * heads + head], delta = 0;
    if (skip && skip[i]) {
      rows.lse[i] = -kInf;
      rows.delta[i] = 0;
      continue;
    }
    if (!(L > -kInf)) {
      rows.lse[i] = -kInf;
      rows.delta[i] = 0;
      if (hd.empty == EmptyPolicy::Error) return {Status::EmptyRow, i, head};
      continue;
    }
    row_statistics<K>(hd, i, h, dout, L, delta);
    rows.lse[i] = L;
    rows.delta[i] = delta;
    any = any || L > -kInf;
  }
  if (any && hd.masks->any())
    backward_tiles<K, true>(hd, h, hd.kernel.scale, dout, rows, g);
  else if (any)
    backward_tiles<K, false>(hd, h, hd.kernel.scale, dout, rows, g);
  if (hd.empty != EmptyPolicy::Nearest) return {};
  // Empty rows under Nearest return the mean of the nearest keys' values: only those values receive gradient.
  for (int64_t i = 0; i < I; ++i) {
    if (rows.lse[i] > -kInf || (skip && skip[i])) continue;
    const int64_t n = nearest_keys(hd, i, chosen);
    if (n == 0) continue;
    for (int64_t j = 0; j < hd.keys.rows; ++j)
      if (chosen[j])
        for (int64_t d = 0; d < width; ++d) g.dv[j * width + d] += double(dout.row(i)[d]) / double(n);
  }
  return {};
}

bool fits(const Matrix& m, int64_t rows, int64_t cols) {
  return m.rows == 0 || (m.data && m.rows == rows && m.cols == cols && m.stride >= cols);
}

}  // namespace

Result attention_forward(const Problem& p, Matrix out, double* lse) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  const int64_t I = p.queries.rows, H = p.heads, width = p.values.cols / H;
  if (out.rows != I || out.cols != p.values.cols || (I > 0 && (!out.data || !lse))) return {Status::BadShape};
  Scratch<double> sums(I * H);
  Scratch<uint8_t> chosen(p.keys.rows);
  if (!sums.ok() || !chosen.ok()) return {Status::OutOfMemory};
  const StateOut states{lse, sums.get(), out, p.heads};
  if (const Result r = run_exact(p, out, &states, p.threads); r.status != Status::Ok) return r;
  // out holds each row's unnormalised value sums a, lse its reference maximum m and sums its z: O = a/z, L = m + log z.
  for (int64_t i = 0; i < I; ++i)
    for (int32_t h = 0; h < p.heads; ++h) {
      const int64_t at = i * H + h;
      const double z = sums.get()[at];
      float* row = out.row(i) + h * width;
      if (z > 0) {
        for (int64_t d = 0; d < width; ++d) row[d] = mean_to_float(double(row[d]) / z);
        lse[at] += std::log(z);
        continue;
      }
      lse[at] = -kInf;
      const Head hd = head_of(p, h);
      if (finalize(empty_state(width), row, p.empty, NearestKeys{&hd, i, chosen.get()}) == RowOutcome::Error)
        return {Status::EmptyRow, i, h};
    }
  return {};
}

namespace {

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
    if (wide)
      for (int64_t i = 0; i < I; ++i) {
        const double L = lse[i * H + h];
        on.get()[i] = backward_row_in_float(L) && several_keys(hd, i);
        any_wide = any_wide || on.get()[i];
        lse2.get()[i] = float(L * kLog2e);
        double dO_O = 0;
        for (int64_t d = 0; d < width; ++d) dO_O += double(dout_h.row(i)[d]) * double(out.row(i)[h * width + d]);
        delta2.get()[i] = float(dO_O);
      }
    const auto run_double = [&](const uint8_t* skip) {
      return with_kernel(p.kernel.kind, [&](auto kind) {
        return backward_head<kind()>(hd, h, bandwidth.get(), lse, p.heads, dout_h, rows, g, chosen.get(), skip);
      });
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
    for (int64_t i = 0; i < grads.queries.rows; ++i)
      for (int64_t d = 0; d < m; ++d) grads.queries.row(i)[h * m + d] = float(dq.get()[i * m + d]);
    for (int64_t j = 0; j < grads.keys.rows; ++j)
      for (int64_t d = 0; d < m; ++d) grads.keys.row(j)[h * m + d] = float(dk.get()[j * m + d]);
    for (int64_t j = 0; j < grads.values.rows; ++j)
      for (int64_t d = 0; d < width; ++d) grads.values.row(j)[h * width + d] = float(dv.get()[j * width + d]);
    if (softmax)
      scale_grad += dtheta.get()[0];
    else if (grads.kernel)
      for (int64_t d = 0; d < m; ++d) grads.kernel[h * m + d] = float(dtheta.get()[d]);
  }
  if (softmax && grads.kernel) {
    // The float32 rows' dθ, unless its estimated rounding error is too large a part of the total (its terms
    // cancelled): then those rows' dθ again, in double.
    double theta = wide_theta.value;
    if (wide_theta.error() > kScaleGradientTolerance * std::fabs(scale_grad + theta)) {
      theta = 0;
      for (int32_t h = 0; h < p.heads; ++h) {
        if (!wide_heads[size_t(h)]) continue;
        const Head hd = head_of(p, h);
        const ConstMatrix dout_h = dout.columns(h * width, width);
        for (int64_t i = 0; i < I; ++i) {
          const double L = lse[i * H + h];
          if (backward_row_in_float(L) && several_keys(hd, i)) theta += row_theta(hd, i, L, dout_h);
        }
      }
    }
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
