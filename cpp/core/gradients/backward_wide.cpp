// The float32 SIMD backward pass of softmax attention (backward_wide.h), FlashAttention-2's loop order: key tiles
// outer, with their dK and dV accumulators in L1, query blocks of 64 inner. Per block and tile, with scores in log2
// units (S = scale·log2(e)·Q·Kᵀ) and L_i the row's log-sum-exp in log2 units:
//   S  = dot_tile(Q, K),  P = 2^(S − L),  dP = dot_tile(dO, V)   (V packed transposed like the keys),
//   dS = P ∘ (dP − D),    dV += Pᵀ·dO,   dK += scale·dSᵀ·Q,   dQ += scale·dS·K,
// the last three by accumulate_rows4 (4 rows × 2 batches in registers; Pᵀ is read as columns of P at a stride).
//
// D_i. FlashAttention-2 takes D_i = dO_i·O_i from the forward's output, and so does this path; the double path
// instead sums D_i = Σ_j P_ij dP_ij in an extra pass. With D from the float32 output, Σ_j dS_ij = δ_i·Z_i ≠ 0 by the
// output's rounding (δ_i = D_i − D*_i, where D*_i = Σ_j P_ij dP_ij / Z_i is the D consistent with these P and
// Z_i = Σ_j P_ij ≈ 1). The scale gradient dθ = Σ_ij dS_ij dot_ij then picks up −Σ_i δ_i·Σ_j P_ij dot_ij: when the
// dots are large and dP nearly uniform, that error dwarfs dθ itself (the double path measured up to 5e-2 of it).
// The fix costs four scalars per row, summed in the same pass (per tile in float32, across tiles in double), with
// x_ij = S_ij − L_i (the exponent of P, already at hand):
//   A_i = Σ_j dS_ij x_ij,  B_i = Σ_j P_ij x_ij,  C_i = Σ_j dS_ij,  Z_i = Σ_j P_ij,
//   dθ_i = (A_i − C_i·B_i/Z_i) / (scale·log2 e) = Σ_j P_ij (dP_ij − D*_i) dot_ij,
// exactly the dθ of the self-consistent D*, whatever δ_i (the δ terms cancel algebraically), and summed over
// centred terms: x is O(1) where P matters, so no large dot is ever multiplied by a rounded dS.
// dQ and dK carry the same first-order error, −scale·δ_i·Σ_j P_ij k_j in dQ_i and −scale·Σ_i P_ij δ_i q_i in dK_j.
// Relative to their size it is |δ_i| / spread of dP_ij (times |mean k| / spread of k for dQ): ~1e-7 for ordinary
// data (measured: the suite's dQ and dK errors are ~3e-7 of their maxima), but 5e-4 for nearly equal values and keys
// far from the origin. Correcting it would cost one more I×J×M product (and dK's correction needs C_i before the
// pass), so the pass measures the largest δ_i = C_i / Z_i against the largest mean |dS| of a row and, where it could
// matter, hands the head to the double path (kDeltaTolerance). dθ itself can cancel far below its terms (one test case:
// Σ_i |dθ_i| = 2.8 for dθ = 1.2e-3), beyond what float32 terms resolve; the pass also sums a rounding bound E
// (row_weights), and the caller re-sums dθ in double where the bound is too large a part of it (backward.cpp).
//
// Precision: every product is float32; sums along a tile (64 keys, or the 64 queries of a block) stay in float32 and
// go into the double accumulators after every kFlushEvery tiles (dQ) or blocks (dK, dV), so no float32 sum runs
// over more than 256 terms.
#include "gradients/backward_wide.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/key_tile.h"
#include "base/rare.h"
#include "base/scratch.h"
#include "engine/tile_kernels.h"

namespace ka {
namespace {

using simd::Batch;
using simd::kLanes;
using tiles::accumulate_rows4;
using tiles::dot_tile;

// Queries per block: each tile's dK and dV rows are loaded and stored once per block, so longer blocks amortise
// that.
constexpr int64_t kRows = 64;
// Float32 partial sums go to the double accumulators after this many blocks (dK, dV) or key tiles (dQ): sums of at
// most 4 · 64 = 256 terms, whose rounding (~16 · 2^-24 relative, as a random walk) stays far below the 1e-5 the
// gradients are held to, while the conversions to double, one per entry, cost a quarter of flushing every time.
constexpr int64_t kFlushEvery = 4;
// The scale gradient is a sum over all I·J pairs that can cancel to far below its terms (it is a covariance per
// row, and rows add with either sign); float32 terms carry ~1e-7 of each row's |terms|. The rows' bounds E_i
// (row_weights) add as a random walk; times this constant they bound dθ's error (over the test suite, natively
// with and without FMA, the measured error stayed below 0.27 of the bound).
constexpr double kThetaErrorScale = 0x1p-24 * 4;
// D_i = dO_i·O_i from the float32 output errs by ~1e-7 of |D_i|; that is harmless unless dP_ij − D_i is tiny for
// every key (values nearly equal: then the output's rounding is a large part of what D must resolve).
constexpr double kDeltaTolerance = 2e-6;

// Scratch of one call: packed tiles, the block's scores and their float32 gradient sums.
struct Tiles {
  float* keys_t;    // m × kKeyTile
  float* values_t;  // width × kKeyTile
  float* p;         // kRows × kKeyTile: scores, then P
  float* ds;        // kRows × kKeyTile: dP, then dS
  float* dq;        // rows of I rounded up to 4, × m: every query's dQ over the key tiles since the last flush
  float* dk;        // kKeyTile × m
  float* dv;        // kKeyTile × width
};

// One block of queries [first, first + rows) against one packed key tile.
struct Block {
  const float* const* q;  // query rows
  const float* const* o;  // dO rows
  int64_t first, rows;
  const WideRows* rows_in;
  double* sums;  // kRowSums per query of the call, indexed from query 0
  uint8_t* bad;  // set when a float32 score or dP overflowed in an admissible pair
};

// Per query: the sums behind its scale gradient (see the file comment) and their error bound.
enum RowSum { kA, kB, kC, kCx, kZ, kE, kG, kRowSums };

// P and dS of one row in place (p: scores → P, ds: dP → dS), and its sums. Two passes over the row: the first
// takes P and the tile's P-mean x̄_t of x = S − L, the second dS and A_t = Σ dS (x − x̄_t), so the float32 sums
// run over centred terms (x itself is about −log2 J where P matters); A_i = Σ_t (A_t + C_t x̄_t) in double.
// E bounds the row's rounding error in A − C·B/Z: P (|dP| + |D|) |x − x̄_t| for dP and D, and |dS| |S| for the
// score (in units of 2^-24, before the constant of backward_wide()).
void row_weights(const Head& hd, int64_t i, const KeyTile& tile, float lse2, float delta, float* p, float* ds,
                 double* sums, uint8_t* bad) {
  mask_tile(hd, i, tile, p);
  const simd::ExpConstants& ek = simd::exp_constants();
  const Batch l(lse2), lo(ek.lo);
  alignas(64) float xs[kKeyTile];
  Batch b(0.0f), z(0.0f);
  for (int64_t n = 0; n < tile.padded; n += kLanes) {
    const Batch x = simd::load(p + n) - l;  // <= 0 up to rounding; -inf for masked and padding keys
    const Batch w = simd::exp2_nonpositive(x, ek);
    const Batch xc = xsimd::max(x, lo);  // finite where w = 0, so 0·x stays 0
    b = xsimd::fma(w, xc, b);
    z += w;
    simd::store(p + n, w);
    simd::store(xs + n, xc);
  }
  const float zt = simd::sum(z), bt = simd::sum(b);
  const float mean = zt > 0 ? bt / zt : 0.0f;
  // |S| <= |L| − x; the float32 dot behind S errs by ~2^-24·√m·|S| (m products, rounded as a random walk).
  const Batch d(delta), ad(std::fabs(delta)), m(mean), al(std::fabs(lse2));
  const Batch sf(1.0f + 0.125f * std::sqrt(float(hd.queries.cols)));
  Batch a(0.0f), c(0.0f), e(0.0f), ga(0.0f);
  for (int64_t n = 0; n < tile.padded; n += kLanes) {
    const Batch w = simd::load(p + n), dp = simd::load(ds + n), xc = simd::load(xs + n);
    const Batch g = w * (dp - d);
    const Batch u = xc - m;
    a = xsimd::fma(g, u, a);
    c += g;
    ga += xsimd::abs(g);
    const Batch t = xsimd::fma(w * (xsimd::abs(dp) + ad), xsimd::abs(u), xsimd::abs(g) * (al - xc) * sf);
    e = xsimd::fma(t, t, e);
    simd::store(ds + n, g);
  }
  // A NaN or infinite score or dP (float32 overflow) makes these sums NaN or infinite: the head goes to double.
  if (!std::isfinite(zt) || !std::isfinite(simd::sum(c))) *bad = 1;
  const double ct = double(simd::sum(c));
  sums[kA] += double(simd::sum(a));
  sums[kB] += double(bt);
  sums[kC] += ct;
  sums[kCx] += ct * double(mean);
  sums[kZ] += double(zt);
  sums[kE] += double(simd::sum(e));
  sums[kG] += double(simd::sum(ga));
}

void block_tile(const Head& hd, float scale2, const KeyTile& keys, const KeyTile& values, ConstMatrix dout,
                const Tiles& t, const Block& b) {
  const int64_t m = hd.queries.cols, width = hd.values.cols, padded = keys.padded;
  dot_tile(b.q, b.rows, m, scale2, keys, t.p);
  dot_tile(b.o, b.rows, width, 1.0f, values, t.ds);
  const int64_t groups = (b.rows + 3) / 4 * 4;
  for (int64_t r = 0; r < groups; ++r) {
    float* p = t.p + r * kKeyTile;
    float* ds = t.ds + r * kKeyTile;
    const int64_t i = b.first + r;
    if (r >= b.rows || !b.rows_in->on[i]) {
      std::fill(p, p + padded, 0.0f);
      std::fill(ds, ds + padded, 0.0f);
      continue;
    }
    row_weights(hd, i, keys, b.rows_in->lse2[i], b.rows_in->delta[i], p, ds, b.sums + kRowSums * i, b.bad);
  }
  // dV += Pᵀ·dO and dK += dSᵀ·Q (scaled when flushed): 4 keys at a time, their weights a column of P or dS.
  const float* o0 = dout.row(b.first);
  const float* q0 = hd.queries.row(b.first);
  for (int64_t c = 0; c < padded; c += 4) {
    const float* wp[4] = {t.p + c, t.p + c + 1, t.p + c + 2, t.p + c + 3};
    float* av[4] = {t.dv + c * width, t.dv + (c + 1) * width, t.dv + (c + 2) * width, t.dv + (c + 3) * width};
    accumulate_rows4(wp, kKeyTile, b.rows, o0, dout.stride, width, av);
    const float* ws[4] = {t.ds + c, t.ds + c + 1, t.ds + c + 2, t.ds + c + 3};
    float* ak[4] = {t.dk + c * m, t.dk + (c + 1) * m, t.dk + (c + 2) * m, t.dk + (c + 3) * m};
    accumulate_rows4(ws, kKeyTile, b.rows, q0, hd.queries.stride, m, ak);
  }
  // dQ += dS·K over the tile's keys, in float32 (scaled when flushed).
  const float* k0 = hd.keys.row(keys.first);
  float* dq = t.dq + b.first * m;
  for (int64_t r = 0; r < groups; r += 4) {
    const float* ws[4] = {t.ds + r * kKeyTile, t.ds + (r + 1) * kKeyTile, t.ds + (r + 2) * kKeyTile,
                          t.ds + (r + 3) * kKeyTile};
    float* aq[4] = {dq + r * m, dq + (r + 1) * m, dq + (r + 2) * m, dq + (r + 3) * m};
    accumulate_rows4(ws, 1, keys.count, k0, hd.keys.stride, m, aq);
  }
}

// acc[c][·] += scale · part[c][·] for `count` rows, and part's `rows` rows (count and the padding) back to zero. Once
// per tile or block beside its O(64·64·m) products, from five places: one copy.
__attribute__((noinline)) void flush(float* part, int64_t count, int64_t rows, int64_t cols, double scale,
                                     double* acc) {
  for (int64_t n = 0; n < count * cols; ++n) acc[n] += scale * double(part[n]);
  std::fill(part, part + rows * cols, 0.0f);
}

// |mean of the keys| / RMS spread about it: how far the keys sit from the origin in units of their spread. Once per
// head, O(J·m) beside the pass's O(I·J·m): KA_RARE.
KA_RARE double key_offset(const ConstMatrix& keys) {
  const int64_t J = keys.rows, m = keys.cols;
  if (J < 2) return 0;
  double offset = 0, spread = 0;
  for (int64_t d = 0; d < m; ++d) {
    double mean = 0, square = 0;
    for (int64_t j = 0; j < J; ++j) mean += double(keys.row(j)[d]);
    mean /= double(J);
    for (int64_t j = 0; j < J; ++j) square += (double(keys.row(j)[d]) - mean) * (double(keys.row(j)[d]) - mean);
    offset += mean * mean;
    spread += square / double(J);
  }
  return spread > 0 ? std::sqrt(offset / spread) : 0;
}

KA_RARE bool all_finite(const double* x, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += x[k] * 0.0;  // NaN for any NaN or ±inf entry
  return s == 0;
}

}  // namespace

WideOutcome backward_wide(const Head& hd, ConstMatrix dout, const WideRows& rows, double* dq, double* dk, double* dv,
                          ScaleGradient& dtheta) {
  const int64_t I = hd.queries.rows, J = hd.keys.rows, m = hd.queries.cols, width = hd.values.cols;
  const double scale = hd.kernel.scale;
  const float scale2 = BatchScore<KernelKind::Softmax>::scale_factor(scale);
  // dθ is read back from scores as dot = S / scale2; a scale so small that scores would be subnormal cannot carry it.
  if (!(std::fabs(scale2) >= 1e-20f)) return WideOutcome::Fallback;
  const int64_t I4 = (I + 3) / 4 * 4;  // block_tile writes whole register tiles of 4 rows
  Scratch<float> keys_t(m * kKeyTile), values_t(width * kKeyTile), p(kRows * kKeyTile), ds(kRows * kKeyTile),
      dq_t(I4 * m), dk_t(kKeyTile * m), dv_t(kKeyTile * width);
  Scratch<double> sums(kRowSums * I);
  if (!keys_t.ok() || !values_t.ok() || !p.ok() || !ds.ok() || !dq_t.ok() || !dk_t.ok() || !dv_t.ok() || !sums.ok())
    return WideOutcome::OutOfMemory;
  std::fill(sums.get(), sums.get() + kRowSums * I, 0.0);
  std::fill(dq_t.get(), dq_t.get() + I4 * m, 0.0f);
  std::fill(dk_t.get(), dk_t.get() + kKeyTile * m, 0.0f);
  std::fill(dv_t.get(), dv_t.get() + kKeyTile * width, 0.0f);
  const Tiles t{keys_t.get(), values_t.get(), p.get(), ds.get(), dq_t.get(), dk_t.get(), dv_t.get()};
  const auto step = simd::keep_out_of_line(&block_tile);
  uint8_t bad = 0;
  const float* q[kRows];
  const float* o[kRows];
  for (int64_t j0 = 0; j0 < J; j0 += kKeyTile) {
    KeyTile keys{keys_t.get(), values_t.get()};
    pack_tile(hd, j0, std::min(kKeyTile, J - j0), keys);
    const KeyTile values{values_t.get(), nullptr, keys.first, keys.count, keys.padded};
    // Causal: keys from j0 on are admissible only for queries i >= j0.
    const int64_t start = hd.masks->causal ? j0 / kRows * kRows : 0;
    int64_t pending = 0;  // blocks in t.dk and t.dv since their last flush
    for (int64_t b0 = start; b0 < I; b0 += kRows) {
      const int64_t n = std::min(kRows, I - b0);
      bool any = false;
      for (int64_t r = 0; r < n; ++r) {
        q[r] = hd.queries.row(b0 + r);
        o[r] = dout.row(b0 + r);
        any = any || rows.on[b0 + r];
      }
      if (!any) continue;
      step(hd, scale2, keys, values, dout, t, Block{q, o, b0, n, &rows, sums.get(), &bad});
      if (++pending == kFlushEvery || b0 + kRows >= I) {
        flush(t.dk, keys.count, kKeyTile, m, scale, dk + j0 * m);
        flush(t.dv, keys.count, kKeyTile, width, 1.0, dv + j0 * width);
        pending = 0;
      }
    }
    if (pending) {  // the last blocks were skipped (no row on)
      flush(t.dk, keys.count, kKeyTile, m, scale, dk + j0 * m);
      flush(t.dv, keys.count, kKeyTile, width, 1.0, dv + j0 * width);
    }
    if ((j0 / kKeyTile + 1) % kFlushEvery == 0 || j0 + kKeyTile >= J) flush(t.dq, I, I4, m, scale, dq);
  }
  if (bad) return WideOutcome::Fallback;
  // C_i / Z_i = D*_i − D_i, the error of D_i, enters dQ and dK to first order (see the file comment); keys sharing
  // an offset amplify it in dQ by |mean k| / spread of k. Gradients are measured against their largest entries, so
  // the largest δ_i goes against the largest mean |dS| of a row (a row of few keys with nearly equal dP is no
  // problem: its own gradients are that small). Beyond kDeltaTolerance of it, the head is redone in double.
  double worst_delta = 0, largest_ds = 0;
  for (int64_t i = 0; i < I; ++i) {
    const double* s = sums.get() + kRowSums * i;
    if (!rows.on[i] || !(s[kZ] > 0)) continue;
    worst_delta = std::max(worst_delta, std::fabs(s[kC]) / s[kZ]);
    largest_ds = std::max(largest_ds, s[kG] / s[kZ]);
  }
  if (worst_delta * (1 + key_offset(hd.keys)) > kDeltaTolerance * largest_ds) return WideOutcome::Fallback;
  // dθ = Σ_i (A_i − C_i B_i / Z_i) / scale2, and the bound of its rounding error as a random walk over the rows.
  double theta = 0, variance = 0;
  for (int64_t i = 0; i < I; ++i) {
    const double* s = sums.get() + kRowSums * i;
    if (!rows.on[i] || !(s[kZ] > 0)) continue;
    theta += s[kA] + s[kCx] - s[kC] * s[kB] / s[kZ];
    variance += s[kE];
  }
  theta /= double(scale2);
  if (!all_finite(dq, I * m) || !all_finite(dk, J * m) || !all_finite(dv, J * width) || !std::isfinite(theta))
    return WideOutcome::Fallback;
  dtheta.value += theta;
  dtheta.variance += variance * (kThetaErrorScale * kThetaErrorScale) / (double(scale2) * double(scale2));
  return WideOutcome::Done;
}

}  // namespace ka
