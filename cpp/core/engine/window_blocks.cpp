// See window_blocks.h.
#include "engine/window_blocks.h"

#include <algorithm>
#include <cmath>

namespace ka::row_sums {
namespace {

// The first place in the sorted keys x where below(x[place]) is false (below is true then false along x).
template <class Below>
int64_t partition_point(const std::vector<double>& x, Below below) {
  return std::partition_point(x.begin(), x.end(), below) - x.begin();
}

// The keys [first, last) with |x − q| < h, on the exact differences, and mid, the first with x >= q.
struct Run {
  int64_t first, mid, last;
};
Run run_of(const std::vector<double>& x, double q, double h) {
  return {partition_point(x, [&](double v) { return !(v - q > -h); }),
          partition_point(x, [&](double v) { return v < q; }), partition_point(x, [&](double v) { return v - q < h; })};
}

}  // namespace

std::unique_ptr<WindowBlocks> window_blocks(const Context& c, bool with_b) {
  const Problem& p = c.p;
  const int64_t I = p.queries.rows, J = p.keys.rows;
  if (with_b || !c.query_scale || !c.sorted || p.queries.cols != 1 || p.values.cols != 1 ||
      p.kernel.kind != KernelKind::Tricube || p.masks.any() || I == 0)
    return nullptr;
  auto b = std::make_unique<WindowBlocks>();
  b->x.resize(size_t(J));
  for (int64_t j = 0; j < J; ++j) b->x[size_t(j)] = double(p.keys.row(j)[0]);
  int64_t window[3];
  for (int t = 0; t < 3; ++t) {
    const int64_t i = t * (I - 1) / 2;
    const double h = double(p.kernel.bandwidth[0]) * c.query_scale[i];
    const Run run = run_of(b->x, double(p.queries.row(i)[0]), std::isnan(h) ? 0.0 : h);
    window[t] = run.last - run.first;
  }
  std::sort(window, window + 3);
  const int64_t block = loess::moment_block_size(window[1]);
  if (block == 0) return nullptr;
  b->y.resize(size_t(J));
  b->omega.resize(size_t(J));
  for (int64_t j = 0; j < J; ++j) {
    b->y[size_t(j)] = double(p.values.row(j)[0]);
    b->omega[size_t(j)] = c.omega ? double(c.omega[j]) : 1.0;
  }
  b->moments.build(b->x.data(), b->y.data(), b->omega.data(), J, block);
  return b;
}

bool accumulate_blocks(const Context& c, const WindowBlocks& blocks, int64_t i, Row& r) {
  const double q = double(c.p.queries.row(i)[0]), h = r.h[0], inv = 1 / h;
  if (!std::isfinite(inv * inv * inv)) return false;
  r.sums.clear();
  const Run run = run_of(blocks.x, q, h);
  loess::PolynomialSums s;
  blocks.moments.add_side(run.first, run.mid, q, h, -1, &s);
  blocks.moments.add_side(run.mid, run.last, q, h, 1, &s);
  if (run.first == run.last || !(s.s[0] > 0)) return true;  // an empty row: r.sums as cleared
  r.sums.max = 0;
  // The sums are in powers of d = x − q; the design's column is d/h.
  r.a[0] = s.s[0];
  r.t[0] = s.t[0];
  if (r.p == 2) {
    r.a[1] = r.a[2] = s.s[1] * inv;
    r.a[3] = s.s[2] * inv * inv;
    r.t[1] = s.t[1] * inv;
  }
  return true;
}

}  // namespace ka::row_sums
