// The backward pass in double (backward_double.h).
#include "gradients/backward_double.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/online_softmax.h"
#include "kernel/kernels_simd.h"

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

// s(q, k) of one kernel (pair_score<K>).
using PairScore = double (*)(const float*, const float*, const double*, int64_t, double, double&);

// The log-sum-exp of row i over its admissible keys, in double (for rows where the float32 one is too coarse: rare,
// so the score is reached through a pointer and one copy serves every kernel).
double row_lse(const Head& hd, int64_t i, const double* h, double scale, PairScore score) {
  const int64_t m = hd.queries.cols;
  double z = 0;
  SoftmaxState<double> st(&z, 0);  // width 0: only the shift and the sum
  st.reset();
  double dot = 0;
  for (int64_t j = 0; j < hd.keys.rows; ++j)
    if (hd.allows(i, j)) st.add(score(hd.queries.row(i), hd.keys.row(j), h, m, scale, dot), nullptr);
  return st.max == -kInf ? -kInf : st.max + std::log(st.sum());
}

// Every pair's gradient terms, key tile by key tile.
template <KernelKind K, bool Masked>
void backward_tiles(const Head& hd, const double* h, ConstMatrix dout, const RowData& rows_in, const HeadGrads& g_in) {
  // Local copies: the loop's stores into the accumulators could alias the callers' structs, whose pointers would
  // then be reloaded for every pair.
  const RowData rows = rows_in;
  const HeadGrads g = g_in;
  const int64_t I = hd.queries.rows, J = hd.keys.rows, m = hd.queries.cols, width = hd.values.cols;
  const double scale = hd.kernel.scale;
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
    L = row_lse(hd, i, h, hd.kernel.scale, &pair_score<K>);
    if (L == -kInf) return;
    row_statistics<K>(hd, i, h, dout, L, delta);
    return;
  }
  L += std::log(z);
  delta = pd / z;
}

// The kernel's per-pair passes: each row's statistics, and every pair's gradient terms.
struct KernelPasses {
  using Tiles = void (*)(const Head&, const double*, ConstMatrix, const RowData&, const HeadGrads&);
  void (*statistics)(const Head&, int64_t, const double*, ConstMatrix, double&, double&);
  Tiles tiles, masked_tiles;
};

// The double path for the rows of one head that `skip` does not mark (null: every row); marked rows are left to
// backward_wide() and contribute nothing here. It runs once per row and head, so one copy serves every kernel.
Result backward_head(const KernelPasses& passes, const Head& hd, int32_t head, const double* h, const double* lse,
                     int32_t heads, ConstMatrix dout, const RowData& rows, const HeadGrads& g, uint8_t* chosen,
                     const uint8_t* skip) {
  const int64_t I = hd.queries.rows, width = hd.values.cols;
  bool any = false;
  for (int64_t i = 0; i < I; ++i) {
    double L = lse[i * heads + head], delta = 0;
    if (skip && skip[i]) {
      rows.lse[i] = -kInf;
      rows.delta[i] = 0;
      continue;
    }
    if (!(L > -kInf)) {  // an empty row: its outcome by the policy (finalize_empty_row), its gradient below
      rows.lse[i] = -kInf;
      rows.delta[i] = 0;
      if (finalize_empty_row(0, nullptr, hd.empty) == RowOutcome::Error) return {Status::EmptyRow, i, head};
      continue;
    }
    passes.statistics(hd, i, h, dout, L, delta);
    rows.lse[i] = L;
    rows.delta[i] = delta;
    any = any || L > -kInf;
  }
  if (any) (hd.masks->any() ? passes.masked_tiles : passes.tiles)(hd, h, dout, rows, g);
  // An empty row's output is what finalize_empty_row makes of it: a constant (NaN, zeros: no gradient), or under
  // Nearest the mean of the nearest keys' values, which it marks in `chosen`: only those values receive gradient.
  for (int64_t i = 0; i < I; ++i) {
    if (rows.lse[i] > -kInf || (skip && skip[i])) continue;
    int64_t n = 0;
    finalize_empty_row(0, nullptr, hd.empty, NearestKeys{&hd, i, chosen, &n});
    if (n == 0) continue;
    for (int64_t j = 0; j < hd.keys.rows; ++j)
      if (chosen[j])
        for (int64_t d = 0; d < width; ++d) g.dv[j * width + d] += double(dout.row(i)[d]) / double(n);
  }
  return {};
}

}  // namespace

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

bool several_keys(const Head& hd, int64_t i) {
  if (!hd.masks->any()) return hd.keys.rows > 1;
  int count = 0;
  for (int64_t j = 0; j < hd.keys.rows && count < 2; ++j) count += hd.allows(i, j);
  return count >= 2;
}

Result backward_double(KernelKind kind, const Head& hd, int32_t head, const double* h, const double* lse, int32_t heads,
                       ConstMatrix dout, const RowData& rows, const HeadGrads& g, uint8_t* chosen,
                       const uint8_t* skip) {
  // The uniform kernel has no gradient (attention_backward() refuses it), so it gets no passes of its own.
  const auto passes = [](auto k) {
    constexpr KernelKind K = decltype(k)::value;
    return KernelPasses{&row_statistics<K>, &backward_tiles<K, false>, &backward_tiles<K, true>};
  };
  using K = KernelKind;
  KernelPasses p{};
  switch (kind) {
    case K::Gaussian: p = passes(std::integral_constant<K, K::Gaussian>{}); break;
    case K::Laplacian: p = passes(std::integral_constant<K, K::Laplacian>{}); break;
    case K::Cauchy: p = passes(std::integral_constant<K, K::Cauchy>{}); break;
    case K::Epanechnikov: p = passes(std::integral_constant<K, K::Epanechnikov>{}); break;
    case K::Tricube: p = passes(std::integral_constant<K, K::Tricube>{}); break;
    case K::Uniform: return {Status::BadArgument};
    case K::Softmax: p = passes(std::integral_constant<K, K::Softmax>{}); break;
  }
  return backward_head(p, hd, head, h, lse, heads, dout, rows, g, chosen, skip);
}

}  // namespace ka
