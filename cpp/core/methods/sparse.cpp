// Certified sparse attention (sparse.h): per query, the nearest admissible key by a ring search over the cell grid,
// the cells within the radius where the weight falls to tolerance × the largest, a SIMD pass over their keys as
// contiguous runs, and a bound on the mass of every key left out from the cell geometry and the cell counts.
#include "methods/sparse.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>

#include "base/parallel.h"
#include "engine/online_softmax.h"
#include "engine/scalar_row.h"
#include "kernel/kernels_simd.h"
#include "kernel/traits.h"
#include "methods/sparse_grid.h"
#include "methods/sparse_runs.h"
#include "methods/sparse_search.h"

namespace ka {
namespace sparse {
namespace {

// The same keys in double, one at a time (rows whose float32 weights would underflow).
void add_run_double(const Query& qr, int64_t b, int64_t e, SoftmaxState<double>& st) {
  const Head& hd = *qr.hd;
  for (int64_t s = b; s < e; ++s) {
    const int64_t j = qr.g->order[size_t(s)];
    if (qr.masked && !hd.allows(qr.i, j)) continue;
    const double score = log_score<double>(hd.kernel, qr.q, hd.keys.row(j), hd.keys.cols);
    st.add(score, hd.values.row(j));
  }
}

struct RowResult {
  RowOutcome outcome = RowOutcome::Done;
  double dropped = 0;  // bound on skipped mass / kept mass; NaN for an empty row
};

// What a row needs of its kernel: whether it is compact, its norm (exponential kernels), and its key runs. Only the
// runs are compiled per kernel, dimension count and value width; the rest of the row, which runs once per query and
// per cell, is compiled once for every kernel and reads these at run time (issue 21, download size).
struct RowKernel {
  bool compact;
  Norm norm;
  const Runs* runs;
};

// One query of one head: writes its output row and the extras, returns its outcome and dropped-mass bound. `block`:
// the row's sums (2 + width doubles: Σw, the value sums, Σw²).
RowResult run_row(const Query& qr, const RowKernel& rk, const SparseOptions& o, const SparseOut& so, int32_t head,
                  int64_t heads, double* block, std::vector<uint8_t>& chosen, int64_t& kept_keys) {
  const CellGrid& g = *qr.g;
  const Head& hd = *qr.hd;
  const Position p = locate(g, qr.q);
  const bool compact = rk.compact;
  const Norm& norm = rk.norm;
  double best = 0, radius_nu = 0, extent = 1;
  if (!compact) {
    best = nearest_norm(qr, norm, p);
    if (best < kInf) {
      radius_nu = norm.radius(best, o.tolerance);
      extent = norm.extent(radius_nu);
    }
  }
  RowSums rs = RowSums::at_zero(block, qr.width);
  int64_t lo[A] = {0, 0, 0}, hi[A] = {0, 0, 0};
  bool any = compact || best < kInf;
  // Runs along the last axis; exponential kernels narrow each run to the cells within the radius.
  const auto each_run = [&](auto&& fn) {
    if (!any) return;
    for (int64_t c0 = lo[0]; c0 <= hi[0]; ++c0) {
      const double n0 = compact ? 0 : norm.of(g.gap(0, c0, p.u[0]));
      for (int64_t c1 = lo[1]; c1 <= hi[1]; ++c1) {
        int64_t a2 = lo[2], b2 = hi[2];
        if (!compact) {
          const double rest = radius_nu - n0 - norm.of(g.gap(1, c1, p.u[1]));
          if (rest < 0) continue;
          const double e2 = norm.extent(rest);
          a2 = std::max(a2, g.cell_of(2, p.u[2] - e2 - g.slack));
          b2 = std::min(b2, g.cell_of(2, p.u[2] + e2 + g.slack));
          if (a2 > b2) continue;
        }
        fn(g.start[size_t(g.id(c0, c1, a2))], g.start[size_t(g.id(c0, c1, b2) + 1)]);
      }
    }
  };
  const RunFn run = rk.runs->by_dims[g.dims - 1][qr.width == 1];
  const auto dims_add = [&](int64_t b, int64_t e) {
    if (b != e) run(qr, b, e, rs);
  };
  // Exponential kernels: the largest weight has log2 score smax_log2 (the nearest admissible key). Rows whose
  // weights sit near float32's underflow are redone in double over the same keys, as the exact engine does.
  const double smax = compact ? 0 : norm.log_w(best);
  SoftmaxState<double> st = rs.state;  // the row's state: the same block
  double dropped = 0;
  // The bound on the skipped mass relative to the kept mass, from the cells outside the visited ones.
  const auto dropped_bound = [&]() {
    // Skipped keys: those in the box's cells beyond the radius (weight ratio <= that at the radius), then shells
    // of cells outside the box, each bounded by its distance from the query; counts include masked keys.
    // Cells of the box beyond the radius, each at its own distance (the gaps bound every key's from below).
    double bound = 0;
    for (int64_t c0 = lo[0]; c0 <= hi[0]; ++c0) {
      const double n0 = norm.of(g.gap(0, c0, p.u[0]));
      for (int64_t c1 = lo[1]; c1 <= hi[1]; ++c1) {
        const double n01 = n0 + norm.of(g.gap(1, c1, p.u[1]));
        const double rest = radius_nu - n01;
        const double e2 = norm.extent(rest);
        const int64_t a2 = rest < 0 ? hi[2] + 1 : std::max(lo[2], g.cell_of(2, p.u[2] - e2 - g.slack));
        const int64_t b2 = rest < 0 ? hi[2] : std::min(hi[2], g.cell_of(2, p.u[2] + e2 + g.slack));
        for (int64_t c2 = lo[2]; c2 <= hi[2]; ++c2) {
          if (c2 >= a2 && c2 <= b2) continue;
          const int64_t id = g.id(c0, c1, c2);
          const int64_t n = g.start[size_t(id + 1)] - g.start[size_t(id)];
          if (n) bound += double(n) * std::exp(norm.log_w(n01 + norm.of(g.gap(2, c2, p.u[2]))) - smax);
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
      bound += double(outer - inner) * std::exp(norm.log_w(norm.of(gap)) - smax);
      inner = outer;
      std::copy(out_lo, out_lo + A, inner_lo);
      std::copy(out_hi, out_hi + A, inner_hi);
    }
    // kept mass in units of the largest weight: Σw / w_max = sum · e^(max − smax)
    return bound / (st.sum() * std::exp(st.max - smax));
  };
  // The radius is widened (at most four times) until the bound is within the tolerance too: then every output is
  // within tolerance × range(v) of the exact one, not only each skipped key below tolerance × the largest weight.
  for (int round = 0;; ++round) {
    rs = RowSums::at_zero(block, qr.width);
    any = compact || best < kInf;
    for (int a = 0; a < A && any; ++a) {
      lo[a] = g.cell_of(a, p.u[a] - extent - g.slack);
      hi[a] = g.cell_of(a, p.u[a] + extent + g.slack);
      if (a >= A - g.dims) {  // a query beyond the grid by more than the reach sees no cell on this axis
        const double first = g.origin[a], last = g.origin[a] + double(g.n[a]) * g.width[a];
        if (p.u[a] + extent + g.slack < first || p.u[a] - extent - g.slack > last) any = false;
      }
    }
    each_run(dims_add);
    const bool underflow = compact ? (rs.top > -std::numeric_limits<float>::infinity() && rs.top < kUnderflowFloor)
                                   : (best < kInf && smax / kLn2 < double(kUnderflowFloor));
    st = rs.state;
    if (underflow) {
      st.reset();
      each_run([&](int64_t b, int64_t e) { add_run_double(qr, b, e, st); });
    }
    if (compact && !(rs.top > -std::numeric_limits<float>::infinity()) && !underflow) st.sum() = 0;  // nothing in reach
    if (compact || st.empty()) break;
    dropped = dropped_bound();
    if (dropped <= o.tolerance || round == 4) break;
    radius_nu = norm.widen(radius_nu, dropped / o.tolerance);
    extent = norm.extent(radius_nu);
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
    const double ratio = empty ? std::numeric_limits<double>::quiet_NaN() : st.sum_sq() / (st.sum() * st.sum());
    if (so.sum_sq_weights) so.sum_sq_weights[at] = ratio;
    if (so.effective_keys) so.effective_keys[at] = empty ? 0 : 1 / ratio;
    if (so.log_denominator) so.log_denominator[at] = empty ? -kInf : std::log(st.sum()) + st.max;
  }
  return rr;
}

struct TaskResult {
  Result first;
  double max_dropped = 0;
  int64_t kept = 0;
};

constexpr int64_t kRowsPerTask = 256;

// Out of line: sparse_attention around it runs once per call and is compiled for size.
[[gnu::noinline]] void run_rows(const Head& hd, const CellGrid& g, const RowKernel& rk, const float* factors,
                                int32_t head, int64_t heads, int64_t first, int64_t last, const SparseOptions& o,
                                const SparseOut& so, TaskResult& tr) {
  const int64_t width = hd.values.cols;
  std::vector<double> block(size_t(2 + width));  // a row's sums: Σw, the value sums, Σw²
  std::vector<float> spill(size_t(width * kLanes));
  std::vector<uint8_t> chosen;
  const bool masked = hd.masks->any();
  for (int64_t i = first; i < last; ++i) {
    const Query qr{&hd, &g, i, hd.queries.row(i), factors, masked, spill.data(), width};
    const RowResult rr = run_row(qr, rk, o, so, head, heads, block.data(), chosen, tr.kept);
    if (rr.outcome == RowOutcome::Error) {
      if (tr.first.status == Status::Ok) tr.first = {Status::EmptyRow, i, head};
      return;
    }
    if (rr.dropped > tr.max_dropped) tr.max_dropped = rr.dropped;
  }
}

}  // namespace
}  // namespace sparse

KA_COLD Result sparse_attention(const Problem& p, const SparseOptions& o, const SparseOut& so, SparseReport* report) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  const int64_t I = p.queries.rows, J = p.keys.rows, H = p.heads;
  if (so.out.rows != I || so.out.cols != p.values.cols || (I > 0 && !so.out.data)) return {Status::BadShape};
  if (p.kernel.kind == KernelKind::Softmax || p.queries.cols / H > kSparseMaxDims) return {Status::BadArgument};
  if (p.masks.general || p.masks.query_groups || p.masks.band_first)
    return {Status::BadArgument};  // masks sparse runs cannot honour
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
    float factors[kSparseMaxDims];
    with_kernel(p.kernel.kind, [&](auto kind) {
      for (int64_t d = 0; d < hd.queries.cols; ++d)
        factors[d] = BatchScore<kind()>::dimension_factor(hd.kernel.bandwidth[d]);
      return 0;
    });
    const sparse::RowKernel rk{is_compact(p.kernel.kind), sparse::Norm(p.kernel.kind),
                               &sparse::key_runs(p.kernel.kind)};
    const int64_t tasks = (I + sparse::kRowsPerTask - 1) / sparse::kRowsPerTask;
    std::vector<sparse::TaskResult> results(size_t(std::max<int64_t>(tasks, 1)));
    parallel_for(tasks, p.threads, [&](int64_t t) {
      const int64_t a = t * sparse::kRowsPerTask, b = std::min(I, a + sparse::kRowsPerTask);
      sparse::run_rows(hd, g, rk, factors, h, H, a, b, o, so, results[size_t(t)]);
    });
    for (const sparse::TaskResult& tr : results) {  // in row order: the first error is the one one thread would meet
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
