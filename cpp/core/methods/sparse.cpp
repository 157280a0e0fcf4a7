// Certified sparse attention (sparse.h): per query, the nearest admissible key by a ring search over the cell grid,
// the cells within the radius where the weight falls to tolerance × the largest, a SIMD pass over their keys as
// contiguous runs, and a bound on the mass of every key left out from the cell geometry and the cell counts.
#include "methods/sparse.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "kernel/kernels_simd.h"
#include "kernel/traits.h"
#include "engine/online_softmax.h"
#include "base/parallel.h"
#include "engine/scalar_row.h"
#include "methods/sparse_grid.h"

namespace ka {
namespace {

using simd::Batch;
using simd::kLanes;
constexpr int A = CellGrid::kAxes;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.6931471805599453;
constexpr int64_t kFlushKeys = 64;         // float32 lane sums go to double every 64 keys
constexpr float kUnderflowFloor = -58.0f;  // log2: below it a row is redone in double (exact_narrow.h's floor)

// The kernel as a function of a "norm" ν of u = (q − k)/h: Σu² (gaussian, cauchy) or Σ|u| (laplacian). Compact
// kernels are handled by their support (|u_d| <= 1 on every axis) and do not use these.
template <KernelKind K>
struct Norm {
  static constexpr bool kSquared = K != KernelKind::Laplacian;
  static double of(double t) { return kSquared ? t * t : std::fabs(t); }
  static double log_w(double nu) {
    if constexpr (K == KernelKind::Gaussian) return -nu / 2;
    if constexpr (K == KernelKind::Laplacian) return -nu;
    return -std::log1p(nu);
  }
  // ν at which the weight is tolerance × the weight at ν = best.
  static double radius(double best, double tolerance) {
    if constexpr (K == KernelKind::Gaussian) return best - 2 * std::log(tolerance);
    if constexpr (K == KernelKind::Laplacian) return best - std::log(tolerance);
    return (1 + best) / tolerance - 1;
  }
  static double extent(double nu) { return kSquared ? std::sqrt(std::max(nu, 0.0)) : nu; }  // distance along one axis
  // A radius at which the weights are `excess` (> 1) times smaller relative to those at `nu`, with some margin.
  static double widen(double nu, double excess) {
    if constexpr (K == KernelKind::Gaussian) return nu + 2 * std::log(excess) + 2;
    if constexpr (K == KernelKind::Laplacian) return nu + std::log(excess) + 1;
    return (1 + nu) * excess * 2 - 1;
  }
};

// Per-row sums: float32 lanes, flushed into double.
struct RowSums {
  double sum = 0, sum_sq = 0;
  double* acc;                                          // width
  float top = -std::numeric_limits<float>::infinity();  // best log2 score seen (compact kernels)
  int64_t kept = 0;
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
    for (int64_t d = 0; d < dims; ++d) s = BatchScore<K>::step(s, qb[d], simd::load(keys + d * stride + c), fb[d]);
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
    rs.sum += simd::sum(sum + sum2);
    rs.sum_sq += simd::sum(sq + sq2);
    if constexpr (W > 0) {
      for (int d = 0; d < W; ++d) rs.acc[d] += simd::sum(acc[d] + acc2[d]);
    } else {
      for (int64_t d = 0; d < width; ++d) rs.acc[d] += simd::sum(simd::load(qr.spill + d * kLanes));
    }
  }
  if constexpr (is_compact(K)) rs.top = std::max(rs.top, simd::max(top));
}

// The same keys in double, one at a time (rows whose float32 weights would underflow).
void add_run_double(const Query& qr, int64_t b, int64_t e, SoftmaxState<double>& st, double& sum_sq) {
  const Head& hd = *qr.hd;
  for (int64_t s = b; s < e; ++s) {
    const int64_t j = qr.g->order[size_t(s)];
    if (qr.masked && !hd.allows(qr.i, j)) continue;
    const double score = log_score<double>(hd.kernel, qr.q, hd.keys.row(j), hd.keys.cols);
    if (score == -kInf) continue;
    if (score > st.max) sum_sq *= shift_factor(2 * st.max, 2 * score);  // squared weights: twice the shift
    st.add(score, hd.values.row(j));
    const double w = std::exp(score - st.max);
    sum_sq += w * w;
  }
}

// What one row needs from the grid: the query in u units on the three axes and its clamped cell.
struct Position {
  double u[A] = {0, 0, 0};
  int64_t cell[A] = {0, 0, 0};
};

Position locate(const CellGrid& g, const float* q) {
  Position p;
  for (int64_t d = 0; d < g.dims; ++d) {
    const int a = int(A - g.dims + d);
    p.u[a] = double(q[d]) * g.inv_h[a];
    p.cell[a] = g.cell_of(a, p.u[a]);
  }
  return p;
}

// The smallest distance (u units, along any one axis) from the query to a key outside the box lo..hi; +inf when
// the box holds every cell. Every norm used here is at least the largest per-axis distance, so it bounds them all.
double outside_gap(const CellGrid& g, const Position& p, const int64_t* lo, const int64_t* hi) {
  double gap = kInf;
  for (int a = 0; a < A; ++a) {
    if (lo[a] > 0) gap = std::min(gap, std::max(0.0, p.u[a] - (g.origin[a] + double(lo[a]) * g.width[a]) - g.slack));
    if (hi[a] < g.n[a] - 1)
      gap = std::min(gap, std::max(0.0, g.origin[a] + double(hi[a] + 1) * g.width[a] - p.u[a] - g.slack));
  }
  return gap;
}

// The smallest ν of the keys [b, e) (unmasked), in float32 lanes: +inf lanes pad the tail.
template <KernelKind K>
float nearest_in_run(const CellGrid& g, const Position& p, int64_t b, int64_t e) {
  Batch best(INFINITY);
  const float pad[16] = {0,        0,        0,        0,        0,        0,        0,        0,
                         INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
  for (int64_t c = b; c < e; c += kLanes) {
    Batch nu(0.0f);
    for (int64_t d = 0; d < g.dims; ++d) {
      const int a = int(A - g.dims + d);
      const Batch t =
          (Batch(float(p.u[a])) - simd::load(g.keys_t.data() + d * g.stride + c) * Batch(float(g.inv_h[a])));
      nu = Norm<K>::kSquared ? xsimd::fma(t, t, nu) : nu + xsimd::abs(t);
    }
    if (c + kLanes > e) nu += simd::load(pad + 8 - (e - c));  // lanes past e: +inf (kLanes <= 8)
    best = xsimd::min(best, nu);
  }
  alignas(64) float lanes[kLanes];
  best.store_aligned(lanes);
  return *std::min_element(lanes, lanes + kLanes);
}

// The smallest ν over admissible keys (exponential kernels), by rings of cells around the query's cell, stopping
// when no key outside the rings searched can be nearer. +inf when no key is admissible.
template <KernelKind K>
double nearest_norm(const Query& qr, const Position& p) {
  const CellGrid& g = *qr.g;
  const Head& hd = *qr.hd;
  double best = kInf;
  for (int64_t r = 0;; ++r) {
    int64_t lo[A], hi[A];
    for (int a = 0; a < A; ++a) {
      lo[a] = std::max<int64_t>(0, p.cell[a] - r);
      hi[a] = std::min(g.n[a] - 1, p.cell[a] + r);
    }
    for (int64_t c0 = lo[0]; c0 <= hi[0]; ++c0)
      for (int64_t c1 = lo[1]; c1 <= hi[1]; ++c1) {
        const bool inner = std::abs(c0 - p.cell[0]) < r && std::abs(c1 - p.cell[1]) < r;
        for (int64_t c2 = lo[2]; c2 <= hi[2]; ++c2) {
          if (inner && std::abs(c2 - p.cell[2]) < r) {  // inside the previous ring: jump to its far side
            c2 = p.cell[2] + r - 1;
            continue;
          }
          const int64_t id = g.id(c0, c1, c2);
          const int64_t b = g.start[size_t(id)], e = g.start[size_t(id + 1)];
          if (!qr.masked) {  // in float32 lanes; rounded up a little, which only widens the radius
            const float nu = nearest_in_run<K>(g, p, b, e);
            if (nu < INFINITY) best = std::min(best, double(nu) * (1 + 1e-5) + 1e-30);
            continue;
          }
          for (int64_t s = b; s < e; ++s) {
            if (!hd.allows(qr.i, g.order[size_t(s)])) continue;
            double nu = 0;
            for (int64_t d = 0; d < g.dims; ++d) {
              const int a = int(A - g.dims + d);
              nu += Norm<K>::of(p.u[a] - double(g.keys_t[size_t(d * g.stride + s)]) * g.inv_h[a]);
            }
            best = std::min(best, nu);
          }
        }
      }
    const double gap = outside_gap(g, p, lo, hi);
    if (gap == kInf || (best < kInf && Norm<K>::of(gap) >= best)) return best;
  }
}

struct RowResult {
  RowOutcome outcome = RowOutcome::Done;
  double dropped = 0;  // bound on skipped mass / kept mass; NaN for an empty row
};

// One query of one head: writes its output row and the extras, returns its outcome and dropped-mass bound.
template <KernelKind K, int W>
RowResult run_row(const Query& qr, const SparseOptions& o, const SparseOut& so, int32_t head, int64_t heads,
                  double* acc, std::vector<uint8_t>& chosen, int64_t& kept_keys) {
  const CellGrid& g = *qr.g;
  const Head& hd = *qr.hd;
  const Position p = locate(g, qr.q);
  constexpr bool kCompact = is_compact(K);
  using N = Norm<K>;
  double best = 0, radius_nu = 0, extent = 1;
  if constexpr (!kCompact) {
    best = nearest_norm<K>(qr, p);
    if (best < kInf) {
      radius_nu = N::radius(best, o.tolerance);
      extent = N::extent(radius_nu);
    }
  }
  RowSums rs{0, 0, acc, -std::numeric_limits<float>::infinity(), 0};
  int64_t lo[A] = {0, 0, 0}, hi[A] = {0, 0, 0};
  bool any = kCompact || best < kInf;
  // Runs along the last axis; exponential kernels narrow each run to the cells within the radius.
  const auto each_run = [&](auto&& fn) {
    if (!any) return;
    for (int64_t c0 = lo[0]; c0 <= hi[0]; ++c0) {
      const double n0 = kCompact ? 0 : N::of(g.gap(0, c0, p.u[0]));
      for (int64_t c1 = lo[1]; c1 <= hi[1]; ++c1) {
        int64_t a2 = lo[2], b2 = hi[2];
        if constexpr (!kCompact) {
          const double rest = radius_nu - n0 - N::of(g.gap(1, c1, p.u[1]));
          if (rest < 0) continue;
          const double e2 = N::extent(rest);
          a2 = std::max(a2, g.cell_of(2, p.u[2] - e2 - g.slack));
          b2 = std::min(b2, g.cell_of(2, p.u[2] + e2 + g.slack));
          if (a2 > b2) continue;
        }
        fn(g.start[size_t(g.id(c0, c1, a2))], g.start[size_t(g.id(c0, c1, b2) + 1)]);
      }
    }
  };
  const auto dims_add = [&](int64_t b, int64_t e) {
    if (b == e) return;
    switch (g.dims) {
      case 1: add_run<K, 1, W>(qr, b, e, rs); break;
      case 2: add_run<K, 2, W>(qr, b, e, rs); break;
      default: add_run<K, 3, W>(qr, b, e, rs); break;
    }
  };
  // Exponential kernels: the largest weight has log2 score smax_log2 (the nearest admissible key). Rows whose
  // weights sit near float32's underflow are redone in double over the same keys, as the exact engine does.
  const double smax = kCompact ? 0 : N::log_w(best);
  SoftmaxState<double> st{0.0, 0.0, acc, qr.width};
  double sum_sq = 0, dropped = 0;
  // The bound on the skipped mass relative to the kept mass, from the cells outside the visited ones.
  const auto dropped_bound = [&]() {
    // Skipped keys: those in the box's cells beyond the radius (weight ratio <= that at the radius), then shells
    // of cells outside the box, each bounded by its distance from the query; counts include masked keys.
    // Cells of the box beyond the radius, each at its own distance (the gaps bound every key's from below).
    double bound = 0;
    for (int64_t c0 = lo[0]; c0 <= hi[0]; ++c0) {
      const double n0 = N::of(g.gap(0, c0, p.u[0]));
      for (int64_t c1 = lo[1]; c1 <= hi[1]; ++c1) {
        const double n01 = n0 + N::of(g.gap(1, c1, p.u[1]));
        const double rest = radius_nu - n01;
        const double e2 = N::extent(rest);
        const int64_t a2 = rest < 0 ? hi[2] + 1 : std::max(lo[2], g.cell_of(2, p.u[2] - e2 - g.slack));
        const int64_t b2 = rest < 0 ? hi[2] : std::min(hi[2], g.cell_of(2, p.u[2] + e2 + g.slack));
        for (int64_t c2 = lo[2]; c2 <= hi[2]; ++c2) {
          if (c2 >= a2 && c2 <= b2) continue;
          const int64_t id = g.id(c0, c1, c2);
          const int64_t n = g.start[size_t(id + 1)] - g.start[size_t(id)];
          if (n) bound += double(n) * std::exp(N::log_w(n01 + N::of(g.gap(2, c2, p.u[2]))) - smax);
        }
      }
    }
    const int64_t in_box = g.count(lo, hi);
    int64_t inner_lo[A], inner_hi[A];
    std::copy(lo, lo + A, inner_lo);
    std::copy(hi, hi + A, inner_hi);
    int64_t inner = in_box;
    for (int64_t grow = 1;; grow = grow < 4 ? grow + 1 : grow * 2) {  // one cell at a time near the radius
      const double gap = outside_gap(g, p, inner_lo, inner_hi);
      if (gap == kInf) break;
      int64_t out_lo[A], out_hi[A];
      for (int a = 0; a < A; ++a) {
        out_lo[a] = std::max<int64_t>(0, lo[a] - grow);
        out_hi[a] = std::min(g.n[a] - 1, hi[a] + grow);
      }
      const int64_t outer = g.count(out_lo, out_hi);
      bound += double(outer - inner) * std::exp(N::log_w(N::of(gap)) - smax);
      inner = outer;
      std::copy(out_lo, out_lo + A, inner_lo);
      std::copy(out_hi, out_hi + A, inner_hi);
    }
    // kept mass in units of the largest weight: Σw / w_max = sum · e^(max − smax)
    return bound / (st.sum * std::exp(st.max - smax));
  };
  // The radius is widened (at most four times) until the bound is within the tolerance too: then every output is
  // within tolerance × range(v) of the exact one, not only each skipped key below tolerance × the largest weight.
  for (int round = 0;; ++round) {
    rs = RowSums{0, 0, acc, -std::numeric_limits<float>::infinity(), 0};
    std::fill(acc, acc + qr.width, 0.0);
    any = kCompact || best < kInf;
    for (int a = 0; a < A && any; ++a) {
      lo[a] = g.cell_of(a, p.u[a] - extent - g.slack);
      hi[a] = g.cell_of(a, p.u[a] + extent + g.slack);
      if (a >= A - g.dims) {  // a query beyond the grid by more than the reach sees no cell on this axis
        const double first = g.origin[a], last = g.origin[a] + double(g.n[a]) * g.width[a];
        if (p.u[a] + extent + g.slack < first || p.u[a] - extent - g.slack > last) any = false;
      }
    }
    each_run(dims_add);
    const bool underflow = kCompact ? (rs.top > -std::numeric_limits<float>::infinity() && rs.top < kUnderflowFloor)
                                    : (best < kInf && smax / kLn2 < double(kUnderflowFloor));
    st = SoftmaxState<double>{0.0, rs.sum, acc, qr.width};
    sum_sq = rs.sum_sq;
    if (underflow) {
      st.reset();
      sum_sq = 0;
      each_run([&](int64_t b, int64_t e) { add_run_double(qr, b, e, st, sum_sq); });
    }
    if (kCompact && !(rs.top > -std::numeric_limits<float>::infinity()) && !underflow) st.sum = 0;  // nothing in reach
    if (kCompact || st.empty()) break;
    dropped = dropped_bound();
    if (dropped <= o.tolerance || round == 4) break;
    radius_nu = N::widen(radius_nu, dropped / o.tolerance);
    extent = N::extent(radius_nu);
  }
  kept_keys += rs.kept;  // the final round's keys: kept + skipped = I·J per head
  float* out = so.out.row(qr.i) + head * qr.width;
  RowResult rr;
  rr.dropped = st.empty() ? std::numeric_limits<double>::quiet_NaN() : dropped;
  if (st.empty() && hd.empty == EmptyPolicy::Nearest) chosen.resize(size_t(hd.keys.rows));
  rr.outcome = finalize(st, out, hd.empty, NearestKeys{&hd, qr.i, chosen.data()});
  const int64_t at = qr.i;
  if (so.dropped) so.dropped[at * heads + head] = rr.dropped;
  if (so.sum_sq_weights || so.effective_keys || so.log_denominator) {
    const bool empty = st.empty();
    const double ratio = empty ? std::numeric_limits<double>::quiet_NaN() : sum_sq / (st.sum * st.sum);
    if (so.sum_sq_weights) so.sum_sq_weights[at] = ratio;
    if (so.effective_keys) so.effective_keys[at] = empty ? 0 : 1 / ratio;
    if (so.log_denominator) so.log_denominator[at] = empty ? -kInf : std::log(st.sum) + st.max;
  }
  return rr;
}

struct TaskResult {
  Result first;
  double max_dropped = 0;
  int64_t kept = 0;
};

constexpr int64_t kRowsPerTask = 256;

template <KernelKind K, int W>
void run_rows(const Head& hd, const CellGrid& g, int32_t head, int64_t heads, int64_t first, int64_t last,
              const SparseOptions& o, const SparseOut& so, TaskResult& tr) {
  const int64_t width = hd.values.cols;
  std::vector<double> acc(static_cast<size_t>(width));
  std::vector<float> spill(size_t(width * kLanes));
  std::vector<uint8_t> chosen;
  float factors[kSparseMaxDims];
  for (int64_t d = 0; d < hd.queries.cols; ++d) factors[d] = BatchScore<K>::dimension_factor(hd.kernel.bandwidth[d]);
  const bool masked = hd.masks->any();
  for (int64_t i = first; i < last; ++i) {
    const Query qr{&hd, &g, i, hd.queries.row(i), factors, masked, spill.data(), width};
    const RowResult rr = run_row<K, W>(qr, o, so, head, heads, acc.data(), chosen, tr.kept);
    if (rr.outcome == RowOutcome::Error) {
      if (tr.first.status == Status::Ok) tr.first = {Status::EmptyRow, i, head};
      return;
    }
    if (rr.dropped > tr.max_dropped) tr.max_dropped = rr.dropped;
  }
}

}  // namespace

Result sparse_attention(const Problem& p, const SparseOptions& o, const SparseOut& so, SparseReport* report) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  const int64_t I = p.queries.rows, J = p.keys.rows, H = p.heads;
  if (so.out.rows != I || so.out.cols != p.values.cols || (I > 0 && !so.out.data)) return {Status::BadShape};
  if (p.kernel.kind == KernelKind::Softmax || p.queries.cols / H > kSparseMaxDims) return {Status::BadArgument};
  if (p.masks.general || p.masks.query_groups) return {Status::BadArgument};
  if (!(o.tolerance > 0 && o.tolerance < 1)) return {Status::BadArgument};
  if (H != 1 && (so.sum_sq_weights || so.effective_keys || so.log_denominator)) return {Status::BadArgument};
  if (J > std::numeric_limits<int32_t>::max()) return {Status::BadShape};
  SparseReport rep;
  Result first;
  // The reach at best = 0 in u units (traits.h) sizes the cells: about four cells across it.
  const double cell = sparse_reach(p.kernel.kind, o.tolerance) / 4;
  CellGrid g;
  for (int32_t h = 0; h < H && first.status == Status::Ok; ++h) {
    const Head hd = head_of(p, h);
    build_grid(hd, cell, g);
    const int64_t tasks = (I + kRowsPerTask - 1) / kRowsPerTask;
    std::vector<TaskResult> results(size_t(std::max<int64_t>(tasks, 1)));
    parallel_for(tasks, p.threads, [&](int64_t t) {
      const int64_t a = t * kRowsPerTask, b = std::min(I, a + kRowsPerTask);
      with_kernel(p.kernel.kind, [&](auto kind) {
        constexpr KernelKind K = kind();
        if constexpr (K != KernelKind::Softmax) {
          if (hd.values.cols == 1)
            run_rows<K, 1>(hd, g, h, H, a, b, o, so, results[size_t(t)]);
          else
            run_rows<K, 0>(hd, g, h, H, a, b, o, so, results[size_t(t)]);
        }
        return 0;
      });
    });
    for (const TaskResult& tr : results) {  // in row order: the first error is the one one thread would meet
      if (tr.first.status != Status::Ok && first.status == Status::Ok) first = tr.first;
      rep.max_dropped = std::max(rep.max_dropped, tr.max_dropped);
      rep.kept_keys += tr.kept;
    }
  }
  rep.error_estimate = rep.max_dropped / (1 + rep.max_dropped);
  rep.skipped_keys = I * J * H - rep.kept_keys;
  if (report) *report = rep;
  return first;
}

}  // namespace ka
