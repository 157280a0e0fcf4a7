// LOWESS as R's lowess() computes it (lowess.h has the formulas). The points are sorted once; the x values where a
// fit is made (the "anchors" that delta and ties leave) depend on x alone, so they are planned once and each pass
// fits them independently (in parallel where threads run) before filling in ties and interpolated points.
#include "stats/lowess.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "base/parallel.h"
#include "base/scratch.h"
#include "base/simd.h"
#include "engine/neighbours.h"

namespace ka {
namespace {

using DBatch = xsimd::batch<double>;
constexpr int64_t kDLanes = int64_t(DBatch::size);

// Weighted sums about the fit point x0, d = x_j − x0: Σw, Σw·d, Σw·d², Σw·y, Σw·d·y. Centring on x0 keeps the
// local-linear solve free of the cancellation that raw Σw·x² would bring when |x| is large against the window.
struct Sums {
  double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
};

// Σ over j in [begin, end) of w_j·{1, d, d², y, d·y} with w_j = (1 − (|d|/h)³)³·rw_j: the range where R's tricube
// applies (0.001 h < |d| <= 0.999 h), so the loop needs no cut-off tests. The one hot loop: out of line (called
// through keep_out_of_line) so that V8 tiers it up between calls, in double batches (2 lanes in WebAssembly) since
// the fit follows R's double arithmetic. 1/h is taken once: |d|·(1/h) differs from R's |d|/h by an ulp at most.
Sums tricube_sums(const double* x, const double* y, const double* rw, int64_t begin, int64_t end, double x0,
                  double inv_h) {
  const DBatch bx0(x0), binv(inv_h), one(1.0);
  DBatch s0(0.0), s1(0.0), s2(0.0), t0(0.0), t1(0.0);
  int64_t j = begin;
  for (; j + kDLanes <= end; j += kDLanes) {
    const DBatch d = DBatch::load_unaligned(x + j) - bx0;
    const DBatch u = xsimd::abs(d) * binv;
    const DBatch t = one - u * u * u;
    const DBatch w = t * t * t * DBatch::load_unaligned(rw + j);
    const DBatch yj = DBatch::load_unaligned(y + j);
    const DBatch wd = w * d;
    s0 += w;
    s1 += wd;
    s2 += wd * d;
    t0 += w * yj;
    t1 += wd * yj;
  }
  Sums s{xsimd::hadd(s0), xsimd::hadd(s1), xsimd::hadd(s2), xsimd::hadd(t0), xsimd::hadd(t1)};
  for (; j < end; ++j) {
    const double d = x[j] - x0;
    const double u = std::fabs(d) * inv_h;
    const double t = 1 - u * u * u;
    const double w = t * t * t * rw[j];
    s.s0 += w;
    s.s1 += w * d;
    s.s2 += w * d * d;
    s.t0 += w * y[j];
    s.t1 += w * d * y[j];
  }
  return s;
}

// The same sums with w_j = rw_j: the points within 0.001 h of x0, where R's weight is 1 (a handful).
void add_flat_sums(const double* x, const double* y, const double* rw, int64_t begin, int64_t end, double x0, Sums* s) {
  for (int64_t j = begin; j < end; ++j) {
    const double d = x[j] - x0, w = rw[j];
    s->s0 += w;
    s->s1 += w * d;
    s->s2 += w * d * d;
    s->t0 += w * y[j];
    s->t1 += w * d * y[j];
  }
}

using TricubeSums = Sums (*)(const double*, const double*, const double*, int64_t, int64_t, double, double);

// Sorted data and the plan of fits, shared by all passes. y is centred (its mean taken out, added back to the fits),
// so that sums of w·y carry errors relative to the spread of y, not to its offset.
struct Sorted {
  const double* x;
  const double* y;
  int64_t n, k;
  double range;
  int64_t block = 0;  // block size of the moments (0: every sum runs point by point)
};

// Moments of one block of `block` consecutive sorted points about its centre c (its middle point):
// a[l] = Σ rw (x − c)^l, l = 0 … 11, and b[l] = Σ rw y (x − c)^l, l = 0 … 10. On one side of x0 the tricube weight
// (1 − σ d³/h³)³, d = x − x0, σ the side's sign, is a polynomial in d of degree 9, so a whole block's share of the
// five sums follows from these after the binomial shift d = (x − c) + (c − x0). Inside a window both |x − c| and
// |c − x0| are at most h, so the shift loses at most about 2^11 ulps of h^m: the sums agree with the point-by-point
// ones to about 1e-12 of their scale.
struct BlockMoments {
  double c;
  double a[12];
  double b[11];
};

// The block size for k points per fit: about √(8k) (balancing the O(block) direct sums at the ends of a range
// against the O(k / block) shifts of about 300 flops each), a power of 2 from 64 to 512; 0 below k = 1024, where
// the direct sums are as fast.
int64_t block_size(int64_t k) {
  if (k < 1024) return 0;
  int64_t b = 64;
  while (b < 512 && 2 * b * 2 * b <= 32 * k) b *= 2;
  return b;
}

void block_moments(const Sorted& s, const double* rw, BlockMoments* out) {
  for (int64_t blk = 0; blk < s.n / s.block; ++blk) {
    BlockMoments& m = out[blk];
    const int64_t j0 = blk * s.block;
    m.c = s.x[j0 + s.block / 2];
    for (double& v : m.a) v = 0;
    for (double& v : m.b) v = 0;
    for (int64_t j = j0; j < j0 + s.block; ++j) {
      const double d = s.x[j] - m.c;
      double p = rw[j], q = rw[j] * s.y[j];
      for (int l = 0; l < 11; ++l) {
        m.a[l] += p;
        m.b[l] += q;
        p *= d;
        q *= d;
      }
      m.a[11] += p;
    }
  }
}

// The left end of the k-point window for the fit at x[i]: the first l with x[i] − x[l] <= x[l+k] − x[i], else
// n − k. R reaches it by walking right from the previous fit's window; since x[i] − x[l] − (x[l+k] − x[i]) falls
// as l grows, the walk stops at this same l, which a binary search finds from anywhere.
int64_t window_left(const Sorted& s, int64_t i) {
  int64_t lo = 0, hi = s.n - s.k;  // answer in [lo, hi]
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (s.x[i] - s.x[mid] > s.x[mid + s.k] - s.x[i])
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// R's walk from the window of an earlier fit (cheaper than the search for nearby anchors).
int64_t walk_left(const Sorted& s, int64_t i, int64_t left) {
  while (left + s.k < s.n && s.x[i] - s.x[left] > s.x[left + s.k] - s.x[i]) ++left;
  return left;
}

void add(Sums* m, const Sums& a) {
  m->s0 += a.s0;
  m->s1 += a.s1;
  m->s2 += a.s2;
  m->t0 += a.t0;
  m->t1 += a.t1;
}

// Adds the tricube sums over [a, b), a range on one side of x0 (sigma = 1: x > x0; −1: x < x0) within the
// tricube's range: whole blocks through their moments, the ends point by point.
void add_side_sums(const Sorted& s, const double* rw, const BlockMoments* blocks, int64_t a, int64_t b, double x0,
                   double h, double sigma, TricubeSums tricube, Sums* m) {
  const double inv_h = 1 / h;
  const int64_t first = s.block ? (a + s.block - 1) / s.block : 0, end = s.block ? b / s.block : 0;
  if (first >= end) {
    if (a < b) add(m, tricube(s.x, s.y, rw, a, b, x0, inv_h));
    return;
  }
  add(m, tricube(s.x, s.y, rw, a, first * s.block, x0, inv_h));
  add(m, tricube(s.x, s.y, rw, end * s.block, b, x0, inv_h));
  // D[l] = Σ rw d^l and E[l] = Σ rw y d^l over the whole blocks, d = x − x0, by the binomial shift.
  static constexpr double kBinomial[12][12] = {{1},
                                               {1, 1},
                                               {1, 2, 1},
                                               {1, 3, 3, 1},
                                               {1, 4, 6, 4, 1},
                                               {1, 5, 10, 10, 5, 1},
                                               {1, 6, 15, 20, 15, 6, 1},
                                               {1, 7, 21, 35, 35, 21, 7, 1},
                                               {1, 8, 28, 56, 70, 56, 28, 8, 1},
                                               {1, 9, 36, 84, 126, 126, 84, 36, 9, 1},
                                               {1, 10, 45, 120, 210, 252, 210, 120, 45, 10, 1},
                                               {1, 11, 55, 165, 330, 462, 462, 330, 165, 55, 11, 1}};
  double D[12] = {}, E[11] = {};
  for (int64_t blk = first; blk < end; ++blk) {
    const BlockMoments& bm = blocks[blk];
    double power[12];  // (c − x0)^e
    power[0] = 1;
    for (int e = 1; e < 12; ++e) power[e] = power[e - 1] * (bm.c - x0);
    for (int l = 0; l < 11; ++l) {
      double da = 0, db = 0;
      for (int q = 0; q <= l; ++q) {
        const double f = kBinomial[l][q] * power[l - q];
        da += f * bm.a[q];
        db += f * bm.b[q];
      }
      D[l] += da;
      E[l] += db;
    }
    double da = 0;
    for (int q = 0; q <= 11; ++q) da += kBinomial[11][q] * power[11 - q] * bm.a[q];
    D[11] += da;
  }
  // w = 1 − 3σ (d/h)³ + 3 (d/h)⁶ − σ (d/h)⁹ on this side.
  const double v3 = inv_h * inv_h * inv_h;
  const double q[4] = {1, -3 * sigma * v3, 3 * v3 * v3, -sigma * v3 * v3 * v3};
  Sums t;
  for (int p = 0; p < 4; ++p) {
    t.s0 += q[p] * D[3 * p];
    t.s1 += q[p] * D[3 * p + 1];
    t.s2 += q[p] * D[3 * p + 2];
    t.t0 += q[p] * E[3 * p];
    t.t1 += q[p] * E[3 * p + 1];
  }
  add(m, t);
}

// The local-linear fit at sorted point i with window [left, left + k), for the centred y.
double fit_at(const Sorted& s, const double* rw, const BlockMoments* blocks, int64_t i, int64_t left,
              TricubeSums tricube) {
  const double* x = s.x;
  const double x0 = x[i];
  const int64_t right = left + s.k - 1;
  const double h = std::max(x0 - x[left], x[right] - x0);
  const double h1 = 0.001 * h, h9 = 0.999 * h;
  const auto r = [&](int64_t j) { return std::fabs(x[j] - x0); };
  // R scans on past the window while points are within 0.999 h or tied with x0; only ties can be (when h = 0).
  int64_t hi = right + 1;
  while (hi < s.n && (x[hi] <= x0 || r(hi) <= h9)) ++hi;
  // x is sorted, so the points of weight 0 (beyond 0.999 h) sit at the two ends and those of weight 1 (within
  // 0.001 h, i among them) in one run around i: three ranges, found by short scans.
  int64_t lo = left;
  while (r(lo) > h9) ++lo;
  while (r(hi - 1) > h9) --hi;
  int64_t near_lo = i, near_hi = i + 1;
  while (near_lo > lo && r(near_lo - 1) <= h1) --near_lo;
  while (near_hi < hi && r(near_hi) <= h1) ++near_hi;
  Sums m;
  if (h > 0) {
    add_side_sums(s, rw, blocks, lo, near_lo, x0, h, -1, tricube, &m);
    add_side_sums(s, rw, blocks, near_hi, hi, x0, h, 1, tricube, &m);
  }
  add_flat_sums(x, s.y, rw, near_lo, near_hi, x0, &m);
  if (!(m.s0 > 0)) return s.y[i];     // all weights zero: R keeps the observation (centred like the fits)
  const double mean_d = m.s1 / m.s0;  // x̄ − x0
  double fit = m.t0 / m.s0;
  if (h > 0) {
    const double c = std::max(m.s2 / m.s0 - mean_d * mean_d, 0.0);
    if (std::sqrt(c) > 0.001 * s.range) fit += -mean_d / c * (m.t1 / m.s0 - mean_d * fit);
  }
  return fit;
}

// Anchors depend on x and delta alone (R's loop over i, without the window walk): anchor[a] is fitted, the points
// (anchor[a], tie_end[a]] are tied with it and copy its value, and those between tie_end[a] and anchor[a + 1] are
// interpolated. Returns the number of anchors.
int64_t plan(const double* x, int64_t n, double delta, int64_t* anchor, int64_t* tie_end) {
  int64_t count = 0;
  int64_t i = 0;
  for (;;) {
    anchor[count] = i;
    int64_t last = i;
    const double cut = x[last] + delta;
    int64_t j = last + 1;
    for (; j < n; ++j) {
      if (x[j] > cut) break;
      if (x[j] == x[last]) last = j;
    }
    tie_end[count++] = last;
    if (last >= n - 1) break;
    i = std::max(last + 1, j - 1);
  }
  return count;
}

// One pass: fits at the anchors (chunks in parallel), then ties and interpolation in R's order of operations.
void pass(const Sorted& s, const double* rw, BlockMoments* blocks, const int64_t* anchor, const int64_t* tie_end,
          int64_t anchors, int32_t threads, double* ys) {
  const TricubeSums tricube = simd::keep_out_of_line(&tricube_sums);
  if (s.block) block_moments(s, rw, blocks);
  constexpr int64_t kChunk = 256;
  parallel_for((anchors + kChunk - 1) / kChunk, threads, [&](int64_t c) {
    const int64_t a0 = c * kChunk, a1 = std::min(anchors, a0 + kChunk);
    int64_t left = window_left(s, anchor[a0]);
    for (int64_t a = a0; a < a1; ++a) {
      left = walk_left(s, anchor[a], left);
      ys[anchor[a]] = fit_at(s, rw, blocks, anchor[a], left, tricube);
    }
  });
  for (int64_t a = 0; a < anchors; ++a) {
    const int64_t i = anchor[a];
    if (a > 0) {
      const int64_t last = tie_end[a - 1];
      const double denom = s.x[i] - s.x[last];
      for (int64_t j = last + 1; j < i; ++j) {
        const double alpha = (s.x[j] - s.x[last]) / denom;
        ys[j] = alpha * ys[i] + (1 - alpha) * ys[last];
      }
    }
    for (int64_t j = i + 1; j <= tie_end[a]; ++j) ys[j] = ys[i];
  }
}

// R's robustness step. res holds |y − ŷ| on entry (reordered by the median search). Returns false when the fit is
// already exact (6·median < 1e-7·mean), leaving rw as it was.
bool robustness_weights(const double* y, const double* ys, int64_t n, double* res, double* rw) {
  double sc = 0;
  for (int64_t j = 0; j < n; ++j) sc += res[j] = std::fabs(y[j] - ys[j]);
  sc /= double(n);
  const int64_t m1 = n / 2;
  std::nth_element(res, res + m1, res + n);
  double cmad = 6 * res[m1];
  if (n % 2 == 0) {
    const double below = *std::max_element(res, res + m1);  // the (n/2 − 1)-th smallest
    cmad = 3 * (res[m1] + below);
  }
  if (cmad < 1e-7 * sc) return false;
  const double c1 = 0.001 * cmad, c9 = 0.999 * cmad;
  for (int64_t j = 0; j < n; ++j) {
    const double r = std::fabs(y[j] - ys[j]);
    if (r <= c1)
      rw[j] = 1;
    else if (r <= c9) {
      const double u = r / cmad;
      rw[j] = (1 - u * u) * (1 - u * u);
    } else
      rw[j] = 0;
  }
  return true;
}

}  // namespace

Status lowess(const double* x, const double* y, int64_t n, const LowessOptions& o, double* fitted,
              double* robustness_weights_out) {
  if (n < 1 || !x || !y || !fitted) return Status::BadShape;
  if (!(o.frac > 0 && o.frac <= 1) || o.iterations < 0 || !(o.delta >= 0 && std::isfinite(o.delta))) {
    return Status::BadArgument;
  }
  for (int64_t j = 0; j < n; ++j) {
    if (!std::isfinite(x[j]) || !std::isfinite(y[j])) return Status::BadArgument;
  }
  if (n == 1) {
    fitted[0] = y[0];
    if (robustness_weights_out) robustness_weights_out[0] = 1;
    return Status::Ok;
  }
  Scratch<int64_t> order(n), anchor(n), tie_end(n);
  Scratch<double> xs(n), ys(n), rw(n), fit(n), res(n);
  if (!order.ok() || !anchor.ok() || !tie_end.ok() || !xs.ok() || !ys.ok() || !rw.ok() || !fit.ok() || !res.ok()) {
    return Status::OutOfMemory;
  }
  int64_t* idx = order.get();
  if (std::is_sorted(x, x + n))
    std::iota(idx, idx + n, int64_t(0));
  else
    order_by(x, idx, n);
  const auto [ylo, yhi] = std::minmax_element(y, y + n);
  const double centre = *ylo / 2 + *yhi / 2;  // the fits are linear in y: fit(y − centre) + centre
  for (int64_t j = 0; j < n; ++j) {
    xs.get()[j] = x[idx[j]];
    ys.get()[j] = y[idx[j]] - centre;
    rw.get()[j] = 1;  // multiplying by exactly 1 leaves the first pass's weights as R's unweighted ones
  }
  // R's ns: ⌊f·n + 1e-7⌋, at least 2 and at most n.
  const int64_t k = std::max<int64_t>(2, std::min<int64_t>(n, int64_t(o.frac * double(n) + 1e-7)));
  Sorted s{xs.get(), ys.get(), n, k, xs.get()[n - 1] - xs.get()[0]};
  const int64_t anchors = plan(s.x, n, o.delta, anchor.get(), tie_end.get());
  // Block moments pay when the fits' points far outnumber the n points that each pass takes moments of (about 25
  // flops each, against about 10 SIMD operations per point of a direct sum).
  s.block = double(anchors) * double(k) >= 32.0 * double(n) ? block_size(k) : 0;
  Scratch<BlockMoments> blocks(s.block ? n / s.block : 0);
  if (!blocks.ok()) return Status::OutOfMemory;
  for (int32_t it = 0;; ++it) {
    pass(s, rw.get(), blocks.get(), anchor.get(), tie_end.get(), anchors, o.threads, fit.get());
    if (it >= o.iterations || !robustness_weights(s.y, fit.get(), n, res.get(), rw.get())) break;
  }
  for (int64_t j = 0; j < n; ++j) {
    fitted[idx[j]] = fit.get()[j] + centre;
    if (robustness_weights_out) robustness_weights_out[idx[j]] = rw.get()[j];
  }
  return Status::Ok;
}

}  // namespace ka
