// The kept keys of one sparse row (sparse.cpp): the distance kernels as functions of a norm of u = (q − k)/h, and the
// runs of keys (contiguous in the cell grid's order) scored, exponentiated and summed, in float32 SIMD or in double.
// Internal to sparse.cpp, which alone includes it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/simd.h"
#include "engine/online_softmax.h"
#include "kernel/kernels_simd.h"
#include "methods/sparse.h"
#include "methods/sparse_grid.h"

namespace ka {
// Internal linkage, as when this code lived in sparse.cpp, its one includer: the inliner then folds each template
// into its one caller (the last-call bonus), which the hot runs depend on.
namespace {

using simd::Batch;
using simd::kLanes;
constexpr int A = CellGrid::kAxes;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.6931471805599453;
constexpr int64_t kFlushKeys = 64;         // float32 lane sums go to double every 64 keys
constexpr float kUnderflowFloor = -58.0f;  // log2: below it a row is redone in double (exact_narrow.h's floor)

// The kernel as a function of a "norm" ν of u = (q − k)/h: Σu² (gaussian, cauchy) or Σ|u| (laplacian). Compact
// kernels are handled by their support (|u_d| <= 1 on every axis) and do not use these. A run-time value: it is
// evaluated per cell, not per key, so the row code that uses it is compiled once for every kernel (issue 21).
struct Norm {
  KernelKind kind;
  bool squared;  // Σu² rather than Σ|u|

  explicit Norm(KernelKind k) : kind(k), squared(k != KernelKind::Laplacian) {}
  double of(double t) const { return squared ? t * t : std::fabs(t); }
  double log_w(double nu) const {
    if (kind == KernelKind::Gaussian) return -nu / 2;
    if (kind == KernelKind::Laplacian) return -nu;
    return -std::log1p(nu);
  }
  // ν at which the weight is tolerance × the weight at ν = best.
  double radius(double best, double tolerance) const {
    if (kind == KernelKind::Gaussian) return best - 2 * std::log(tolerance);
    if (kind == KernelKind::Laplacian) return best - std::log(tolerance);
    return (1 + best) / tolerance - 1;
  }
  double extent(double nu) const { return squared ? std::sqrt(std::max(nu, 0.0)) : nu; }  // distance along one axis
  // A radius at which the weights are `excess` (> 1) times smaller relative to those at `nu`, with some margin.
  double widen(double nu, double excess) const {
    if (kind == KernelKind::Gaussian) return nu + 2 * std::log(excess) + 2;
    if (kind == KernelKind::Laplacian) return nu + std::log(excess) + 1;
    return (1 + nu) * excess * 2 - 1;
  }
};

// Per-row sums of the float32 pass: the row's online-softmax state under the fixed shift 0 (distance-kernel scores
// are <= 0), into which the float32 lane sums are flushed (its batch form), and Σw² under the same shift.
struct RowSums {
  SoftmaxState<double> state;  // max 0, acc the row's `width` value sums
  double sum_sq = 0;
  float top = -std::numeric_limits<float>::infinity();  // best log2 score seen (compact kernels)
  int64_t kept = 0;

  static RowSums at_zero(double* acc, int64_t width) { return {SoftmaxState<double>{0.0, 0.0, acc, width}}; }
};

struct Query {
  const Head* hd;
  const CellGrid* g;
  int64_t i;
  const float* q;
  const float* factors;  // BatchScore<K>::dimension_factor per dimension
  bool masked;
  float* spill;  // width × kLanes
  int64_t width;
};

// Keys [b, e) of the sorted order, scored, exponentiated (fixed shift 0: distance-kernel scores are <= 0) and summed.
template <KernelKind K, int DIMS, int W>
void add_run(const Query& qr, int64_t b, int64_t e, RowSums& rs) {
  const CellGrid& g = *qr.g;
  const int64_t dims = DIMS > 0 ? DIMS : g.dims;
  const float* keys = g.keys_t.data();
  const float* vals = g.values_t.data();
  const int64_t stride = g.stride, width = qr.width;
  const bool masked = qr.masked;
  const simd::ExpConstants& ek = simd::exp_constants();
  constexpr int kRegs = W > 0 ? W : 1;
  const float minus_inf = -std::numeric_limits<float>::infinity();
  alignas(64) float bias[kLanes];
  Batch top(minus_inf), qb[kSparseMaxDims], fb[kSparseMaxDims];
  for (int64_t d = 0; d < dims; ++d) {
    qb[d] = Batch(qr.q[d]);
    fb[d] = Batch(qr.factors[d]);
  }
  rs.kept += e - b;
  // One batch of keys [c, c + kLanes) into one set of lane sums; lanes at or past c1, or masked, weigh 0.
  const auto step = [&](int64_t c, int64_t c1, Batch& sum, Batch& sq, Batch* acc) {
    Batch s = BatchScore<K>::init();
    if constexpr (DIMS > 0) {
      for (int64_t d = 0; d < DIMS; ++d) s = BatchScore<K>::step(s, qb[d], simd::load(keys + d * stride + c), fb[d]);
    } else {  // 1 to kSparseMaxDims dimensions, unrolled: a loop would keep qb and fb in memory
      s = BatchScore<K>::step(s, qb[0], simd::load(keys + c), fb[0]);
      if (dims > 1) s = BatchScore<K>::step(s, qb[1], simd::load(keys + stride + c), fb[1]);
      if (dims > 2) s = BatchScore<K>::step(s, qb[2], simd::load(keys + 2 * stride + c), fb[2]);
    }
    s = BatchScore<K>::finish(s, Batch(1.0f));
    if (masked || c + kLanes > c1) {
      for (int64_t l = 0; l < kLanes; ++l) {
        const int64_t j = c + l;
        bias[l] = j < c1 && (!masked || qr.hd->allows(qr.i, g.order[size_t(j)])) ? 0.0f : minus_inf;
      }
      s += Batch::load_aligned(bias);
    }
    if constexpr (is_compact(K)) top = xsimd::max(top, s);
    const Batch w = simd::exp2_nonpositive(s, ek);
    sum += w;
    sq = xsimd::fma(w, w, sq);
    if constexpr (W > 0) {
      for (int d = 0; d < W; ++d) acc[d] = xsimd::fma(w, simd::load(vals + d * stride + c), acc[d]);
    } else {
      for (int64_t d = 0; d < width; ++d) {
        float* a = qr.spill + d * kLanes;
        simd::store(a, xsimd::fma(w, simd::load(vals + d * stride + c), simd::load(a)));
      }
    }
  };
  for (int64_t c0 = b; c0 < e; c0 += kFlushKeys) {
    const int64_t c1 = std::min(e, c0 + kFlushKeys);
    Batch sum(0.0f), sq(0.0f), acc[kRegs], sum2(0.0f), sq2(0.0f), acc2[kRegs];
    for (int r = 0; r < kRegs; ++r) acc[r] = acc2[r] = Batch(0.0f);
    if constexpr (W == 0) std::fill(qr.spill, qr.spill + width * kLanes, 0.0f);
    int64_t c = c0;
    // Two batches per step into separate sums: their exp chains (long, about 50 cycles) then overlap.
    if constexpr (W > 0)
      for (; c + 2 * kLanes <= c1; c += 2 * kLanes) {
        step(c, c1, sum, sq, acc);
        step(c + kLanes, c1, sum2, sq2, acc2);
      }
    for (; c < c1; c += kLanes) step(c, c1, sum, sq, acc);
    rs.state.add_block<W>(simd::sum(sum + sum2), [&](int64_t d) {
      if constexpr (W > 0)
        return simd::sum(acc[d] + acc2[d]);
      else
        return simd::sum(simd::load(qr.spill + d * kLanes));
    });
    rs.sum_sq += simd::sum(sq + sq2);
  }
  if constexpr (is_compact(K)) rs.top = std::max(rs.top, simd::max(top));
}

// The key runs of one kernel, by dimensions (1–3) and value width (1, or any): the one part of a row compiled per
// kernel and shape, since it is the loop over keys; the rest of the row reaches it through this table.
using RunFn = void (*)(const Query&, int64_t, int64_t, RowSums&);
struct Runs {
  RunFn by_dims[kSparseMaxDims][2];  // [dims − 1][width == 1]

  template <KernelKind K>
  static Runs of() {
    return {{{add_run<K, 0, 0>, add_run<K, 1, 1>},
             {add_run<K, 0, 0>, add_run<K, 2, 1>},
             {add_run<K, 0, 0>, add_run<K, 3, 1>}}};
  }
};

// The same keys in double, one at a time (rows whose float32 weights would underflow).
void add_run_double(const Query& qr, int64_t b, int64_t e, SoftmaxState<double>& st, double& sum_sq) {
  const Head& hd = *qr.hd;
  for (int64_t s = b; s < e; ++s) {
    const int64_t j = qr.g->order[size_t(s)];
    if (qr.masked && !hd.allows(qr.i, j)) continue;
    const double score = log_score<double>(hd.kernel, qr.q, hd.keys.row(j), hd.keys.cols);
    st.add_with_square(score, hd.values.row(j), &sum_sq);
  }
}

}  // namespace
}  // namespace ka
