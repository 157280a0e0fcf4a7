// The 2-D Gaussian fit of a sample at itself, held out (a CV score) or not (a fit's summary), one sweep over its
// block's window per row (PlanarSample::sweep_fit, cv_planar.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/simd.h"
#include "engine/key_tile.h"
#include "engine/local_solve.h"
#include "engine/online_softmax.h"
#include "kernel/kernels_simd.h"
#include "stats/cv_planar.h"

namespace ka {
namespace {

using simd::Batch;
using simd::kLanes;

// Keys per chunk: the unit a row skips when the chunk's box lies beyond the row's reach. 32 rather than 64: a chunk
// of a strip is then about as tall as the strip is wide, and a row visits fewer keys beyond its reach (WebAssembly,
// 10^5 uniform points, interleaved: 0.0032 242 -> 166 ms, 0.0143 1,049 -> 910 ms; 16: 185 and 1,147 ms).
constexpr int64_t kChunk = 32;
// The float32 lane sums move to double every 64 terms a lane (64·kLanes/kChunk chunks of kChunk/kLanes terms each).
constexpr int64_t kFlushChunks = 64 * kLanes / kChunk;
// A row whose largest weight (2^−c·r², r its nearest key's distance in bandwidths) is below 2^−96 is solved in double:
// its keys within 2^−24 of that weight, those that matter in float32, would fall below float32's normal range.
constexpr float kSmallestTop = 1.262177448e-29f;  // 2^−96

// A block's window of keys, as columns: coordinates, values and ω (ω / max ω, 0 on the padding to whole chunks and on
// the held-out row's own key), and each chunk's box.
struct Columns {
  float *x1, *x2, *y, *omega;
  float *lo1, *hi1, *lo2, *hi2;
  int64_t chunks;
};

// Moments of the point q over the window's chunks whose box lies within `limit` squared bandwidths of it: Σw and
// Σw·y (Nadaraya–Watson), and with kLinear Σw·(u, v, u², uv, v²) and Σw·(u, v)·y, u and v the keys' offsets in
// bandwidths; with kSquares then the same sums of w² over (1, u, v, u², uv, v²) (Nadaraya–Watson: Σw²). `top`
// receives the largest weight.
template <bool kLinear, bool kSquares>
void row_moments(const Columns& k, float q1, float q2, float inv1, float inv2, float limit, double* m, float* top) {
  constexpr int kSums = kLinear ? 9 : 2, kAll = kSums + (kSquares ? (kLinear ? 6 : 1) : 0);
  const simd::ExpConstants& e = simd::exp_constants();
  const Batch b1(q1), b2(q2), i1(inv1), i2(inv2), c(kHalfLog2e);
  Batch sum[kAll], most(0.0f);
  for (int s = 0; s < kAll; ++s) sum[s] = Batch(0.0f);
  const auto flush = [&] {
    for (int s = 0; s < kAll; ++s) {
      m[s] += double(simd::sum(sum[s]));
      sum[s] = Batch(0.0f);
    }
  };
  int64_t pending = 0;
  for (int64_t t = 0; t < k.chunks; ++t) {
    const float d1 = std::max({0.0f, k.lo1[t] - q1, q1 - k.hi1[t]}) * inv1;
    const float d2 = std::max({0.0f, k.lo2[t] - q2, q2 - k.hi2[t]}) * inv2;
    if (d1 * d1 + d2 * d2 > limit) continue;
    // A loop a chunk for each group of sums, so that none holds more registers than V8 has: the weights, the sums,
    // then the squares' sums.
    alignas(64) float weights[kChunk];
    const int64_t j0 = t * kChunk;
    for (int64_t j = 0; j < kChunk; j += kLanes) {
      const Batch u = (simd::load(k.x1 + j0 + j) - b1) * i1, v = (simd::load(k.x2 + j0 + j) - b2) * i2;
      const Batch w = simd::exp2_neg((u * u + v * v) * c, e) * simd::load(k.omega + j0 + j);
      most = xsimd::max(most, w);
      simd::store(weights + j, w);
    }
    for (int64_t j = 0; j < kChunk; j += kLanes) {
      const Batch w = simd::load(weights + j), y = simd::load(k.y + j0 + j);
      sum[0] += w;
      if constexpr (kLinear) {
        const Batch u = (simd::load(k.x1 + j0 + j) - b1) * i1, v = (simd::load(k.x2 + j0 + j) - b2) * i2;
        const Batch wu = w * u, wv = w * v;
        sum[1] += wu;
        sum[2] += wv;
        sum[3] = xsimd::fma(wu, u, sum[3]);
        sum[4] = xsimd::fma(wu, v, sum[4]);
        sum[5] = xsimd::fma(wv, v, sum[5]);
        sum[6] = xsimd::fma(w, y, sum[6]);
        sum[7] = xsimd::fma(wu, y, sum[7]);
        sum[8] = xsimd::fma(wv, y, sum[8]);
      } else {
        sum[1] = xsimd::fma(w, y, sum[1]);
      }
    }
    if constexpr (kSquares) {
      for (int64_t j = 0; j < kChunk; j += kLanes) {
        const Batch w = simd::load(weights + j), ww = w * w;
        sum[kSums] += ww;
        if constexpr (kLinear) {
          const Batch u = (simd::load(k.x1 + j0 + j) - b1) * i1, v = (simd::load(k.x2 + j0 + j) - b2) * i2;
          const Batch wu = ww * u, wv = ww * v;
          sum[kSums + 1] += wu;
          sum[kSums + 2] += wv;
          sum[kSums + 3] = xsimd::fma(wu, u, sum[kSums + 3]);
          sum[kSums + 4] = xsimd::fma(wu, v, sum[kSums + 4]);
          sum[kSums + 5] = xsimd::fma(wv, v, sum[kSums + 5]);
        }
      }
    }
    if (++pending == kFlushChunks) {
      flush();
      pending = 0;
    }
  }
  flush();
  *top = simd::max(most);
}

}  // namespace

bool PlanarSample::sweep_suits(const Fit& f, const FitOut& out, bool leave_one_out) {
  const Problem& p = f.problem;
  // Held in, without observation weights: each row's own key weighs 1, so no row is too far from its keys for
  // float32 (a guarded row's textbook re-solve gives its fit and self weight: summarize_fit).
  return p.kernel.kind == KernelKind::Gaussian &&
         (f.estimator == Estimator::NadarayaWatson || f.estimator == Estimator::LocalLinear) && p.values.cols == 1 &&
         !f.query_scale && !f.query_keys && !out.mean_double && !out.effective_keys && !out.log_denominator &&
         (leave_one_out ? !out.sum_sq_weights && !out.self_weight : !f.observation_weights);
}

int64_t PlanarSample::blocks() const {
  int64_t count = 0;
  for (int64_t first = 0; first < n_; first += per_) count += (std::min(per_, n_ - first) + kKeyTile - 1) / kKeyTile;
  return count;
}

int64_t PlanarSample::block_rows(int64_t every, int64_t* rows, int64_t* ends) const {
  int64_t block = 0, taken = 0, m = 0;
  for (int64_t first = 0; first < n_; first += per_) {
    const int64_t strip_end = std::min(n_, first + per_);
    for (int64_t c0 = first; c0 < strip_end; c0 += kKeyTile)
      if (block++ % every == 0) {
        for (int64_t c = c0; c < std::min(c0 + kKeyTile, strip_end); ++c) rows[m++] = order_.get()[c];
        ends[taken++] = m;
      }
  }
  return taken;
}

Result PlanarSample::sweep_fit(const Fit& f, const FitOut& out, bool leave_one_out, int64_t every) const {
  const int64_t n = n_, strips = (n + per_ - 1) / per_, room = n + kChunk;
  const float* h = f.problem.kernel.bandwidth;
  const bool weighted = f.observation_weights != nullptr, linear = f.estimator == Estimator::LocalLinear;
  const bool squares = out.sum_sq_weights != nullptr || out.self_weight != nullptr;
  const double reach2 = float_reach2();
  if (!sweep_suits(f, out, leave_one_out)) return {Status::BadArgument};
  Scratch<float> sub_x(2 * n), sub_y(n), sub_w(weighted ? n : 0), columns(4 * room), boxes(4 * (room / kChunk + 1));
  Scratch<int64_t> own(kKeyTile);
  Scratch<double> solve(9 + 3 + 3 + 1);  // exact_local_row's a, t, z and its mean
  if (!sub_x.ok() || !sub_y.ok() || !sub_w.ok() || !columns.ok() || !boxes.ok() || !own.ok() || !solve.ok())
    return {Status::OutOfMemory};
  // ω divided by its largest value, so that float32 products of weights cannot overflow (as local_fit does).
  float omega_top = 0;
  for (int64_t c = 0; weighted && c < n; ++c) omega_top = std::max(omega_top, weights_.get()[c]);
  const float omega_scale = omega_top > 0 ? 1 / omega_top : 1.0f;
  Window w{sub_x.get(), sub_y.get(), sub_w.get(), own.get(), 1};
  const int64_t chunk_room = room / kChunk + 1;
  Columns k{};
  k.x1 = columns.get();
  k.x2 = k.x1 + room;
  k.y = k.x2 + room;
  k.omega = k.y + room;
  k.lo1 = boxes.get();
  k.hi1 = k.lo1 + chunk_room;
  k.lo2 = k.hi1 + chunk_room;
  k.hi2 = k.lo2 + chunk_room;
  using Moments = void (*)(const Columns&, float, float, float, float, float, double*, float*);
  const Moments kernel = linear ? (squares ? &row_moments<true, true> : &row_moments<true, false>)
                                : (squares ? &row_moments<false, true> : &row_moments<false, false>);
  const auto moments = simd::keep_out_of_line(kernel);
  const float* x = x_.get();
  const auto u2 = [&](int64_t a, int64_t b) {  // squared distance of cell rows a and b, in bandwidths (as gather's)
    const double u = (double(x[2 * a]) - double(x[2 * b])) / h[0],
                 v = (double(x[2 * a + 1]) - double(x[2 * b + 1])) / h[1];
    return u * u + v * v;
  };
  // A held-out row too far from its keys for float32 weights: exact_local_row over its window, as the textbook rows.
  Problem row = f.problem;
  row.masks = Masks{};
  const ExactRowScratch scratch{solve.get(), solve.get() + 9, solve.get() + 12};
  double* exact = solve.get() + 15;
  int64_t block = 0;
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t strip_end = std::min(n, (s + 1) * per_);
    for (int64_t c0 = s * per_; c0 < strip_end; c0 += kKeyTile) {
      if (block++ % every != 0) continue;
      const int64_t c1 = std::min(c0 + kKeyTile, strip_end);
      const int64_t m = gather(s, c0, c1, h, reach2, weighted, w);
      // The window as columns, padded to whole chunks with its last key at ω = 0; each chunk's box.
      const int64_t padded = (m + kChunk - 1) / kChunk * kChunk;
      for (int64_t j = 0; j < padded; ++j) {
        const int64_t from = std::min(j, m - 1);
        k.x1[j] = sub_x.get()[2 * from];
        k.x2[j] = sub_x.get()[2 * from + 1];
        k.y[j] = sub_y.get()[from];
        k.omega[j] = j >= m ? 0.0f : weighted ? sub_w.get()[j] * omega_scale : 1.0f;
      }
      k.chunks = padded / kChunk;
      for (int64_t t = 0; t < k.chunks; ++t) {
        const float* a1 = k.x1 + t * kChunk;
        const float* a2 = k.x2 + t * kChunk;
        k.lo1[t] = *std::min_element(a1, a1 + kChunk);
        k.hi1[t] = *std::max_element(a1, a1 + kChunk);
        k.lo2[t] = *std::min_element(a2, a2 + kChunk);
        k.hi2[t] = *std::max_element(a2, a2 + kChunk);
      }
      row.keys = {sub_x.get(), m, 2, 2};
      row.values = {sub_y.get(), m, 1, 1};
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t i = order_.get()[c], self = own.get()[c - c0];
        // The row's reach, as gather's for the block: its nearer strip neighbour bounds its nearest key.
        double f2 = c > s * per_ ? u2(c, c - 1) : HUGE_VAL;
        if (c + 1 < strip_end) f2 = std::min(f2, u2(c, c + 1));
        const float kept = leave_one_out ? std::exchange(k.omega[self], 0.0f) : 0.0f;
        double sums[15] = {};
        float top = 0;
        moments(k, x[2 * c], x[2 * c + 1], 1 / h[0], 1 / h[1], float(f2 + reach2), sums, &top);
        if (leave_one_out) k.omega[self] = kept;
        float* mean = out.mean.row(i);
        if (!(top >= kSmallestTop)) {  // its keys too far for float32 weights (held out only: see sweep_suits)
          if (linear) {                // the caller re-solves a guarded row in double (cv_score.cpp)
            mean[0] = std::numeric_limits<float>::quiet_NaN();
            if (out.guarded) out.guarded[i] = 1;
            continue;
          }
          row.queries = {x + 2 * c, 1, 2, 2};
          row.masks.band_first = row.masks.band_last = &self;
          const bool solved =
              exact_local_row(row, 0, weighted ? sub_w.get() : nullptr, 0, scratch, exact, nullptr, false);
          mean[0] = solved ? mean_to_float(exact[0]) : std::numeric_limits<float>::quiet_NaN();
          continue;
        }
        const double* b = sums + (linear ? 9 : 2);  // the squares' sums
        if (!linear) {
          mean[0] = mean_to_float(sums[1] / sums[0]);
          // ℓ_ii = K(0)/Σw and Σℓ² = Σw²/(Σw)², as local_fit's write_fit gives them for one design column.
          if (out.self_weight) out.self_weight[i] = 1 / sums[0];
          if (out.sum_sq_weights) out.sum_sq_weights[i] = b[0] / (sums[0] * sums[0]);
          continue;
        }
        // The upper triangle of the 3 × 3 design moments (1, u, v) and its solve with local_fit's guard.
        const double a[9] = {sums[0], sums[1], sums[2], 0, sums[3], sums[4], 0, 0, sums[5]};
        double l[9], g[3];
        const bool guarded = first_column_of_inverse(a, 3, l, g);
        if (out.guarded) out.guarded[i] = guarded;
        mean[0] = mean_to_float(g[0] * sums[6] + g[1] * sums[7] + g[2] * sums[8]);
        if (out.self_weight) out.self_weight[i] = g[0];  // ℓ_ii = K(0)·gᵀz_i, z_i = e₁ at the row itself
        if (out.sum_sq_weights) {  // gᵀ B g, B symmetric with its upper triangle in b (as write_fit)
          const double B[9] = {b[0], b[1], b[2], b[1], b[3], b[4], b[2], b[4], b[5]};
          double v = 0;
          for (int r = 0; r < 3; ++r)
            for (int q = 0; q < 3; ++q) v += g[r] * g[q] * B[r * 3 + q];
          out.sum_sq_weights[i] = v > 0 ? v : b[0] / (sums[0] * sums[0]);
        }
      }
    }
  }
  return {};
}

}  // namespace ka
