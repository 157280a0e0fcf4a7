// The plan's choices within a bandwidth search and for a grid's size (plan.h): how many nodes a grid fit takes, which
// CV evaluations bin on a grid, which run the windowed exact criterion, which run exactly.
#include <algorithm>
#include <cmath>

#include "base/text.h"
#include "kernel/traits.h"
#include "methods/grid/fft.h"
#include "methods/grid/grid.h"
#include "methods/grid/plan.h"
#include "methods/plan.h"

namespace ka {

int64_t plan_grid_nodes(ConstMatrix x, KernelKind kind, const float* h, double tolerance, char* why) {
  const int64_t nodes = grid_nodes(x, kind, h, tolerance);
  if (why) {
    if (nodes > 0) {
      format_text(why, kReasonSize, "grid: %lld-D %s, %lld points on %lld nodes per axis, within %g", (long long)x.cols,
                  kernel_traits(kind).name, (long long)x.rows, (long long)nodes, tolerance);
    } else if (!(tolerance > 0)) {
      format_text(why, kReasonSize, "exact: no grid asked for");
    } else {
      format_text(why, kReasonSize,
                  "exact: at this bandwidth no grid of at most %lld nodes reaches %g, or its "
                  "convolutions cost more than the exact fit of %lld points",
                  (long long)kMaxGridNodes, tolerance, (long long)x.rows);
    }
  }
  return nodes;
}

int64_t plan_grid_cv_nodes(ConstMatrix x, KernelKind kind, Estimator estimator, const float* h, double tolerance,
                           char* why) {
  const int64_t nodes = plan_grid_nodes(x, kind, h, tolerance, why);
  if (nodes == 0 || x.cols != 2 || estimator != Estimator::LocalLinear) return nodes;
  if (grid_cv_pays_2d(x, kind, nodes, h)) return nodes;
  if (why)
    format_text(why, kReasonSize,
                "exact: the convolutions on %lld² nodes cost more than the exact CV of %lld points sorted along x1",
                (long long)nodes, (long long)x.rows);
  return 0;
}

int64_t plan_grid_cv_cells(double range, KernelKind kind, float h, int64_t points, double tolerance, char* why) {
  const int64_t wanted = grid_nodes(range, double(h), tolerance);
  if (wanted == 0) {  // no grid reaches the tolerance: the caller runs exactly
    if (why)
      format_text(why, kReasonSize, "exact: at this bandwidth no grid of at most %lld nodes reaches %g",
                  (long long)kMaxGridNodes, tolerance);
    return 0;
  }
  int level = 6;  // at least grid_nodes' 64 nodes; more only make the grid more accurate
  while ((int64_t(1) << level) + 1 < wanted) ++level;
  const int64_t cells = int64_t(1) << level;
  if (!(grid_cost(kind, cells + 1, 1, double(h), range / double(cells)) <=
        exact_cv_cost(kind, double(h), range, points))) {
    if (why)
      format_text(why, kReasonSize, "exact: the convolutions on %lld nodes cost more than the exact CV of %lld points",
                  (long long)(cells + 1), (long long)points);
    return 0;
  }
  if (why)
    format_text(why, kReasonSize, "grid: 1-D %s, %lld points on %lld nodes, within %g", kernel_traits(kind).name,
                (long long)points, (long long)(cells + 1), tolerance);
  return cells;
}

// Measured in WebAssembly (a timing driver built with the module's flags, run by node, on this 2-core machine shared
// with other jobs, 2026-12-06; 10⁵ uniform points, local-linear): the windowed criterion costs about 5 ns a key in
// reach and 100 ns a row (kBandRowKeys keys' worth); the grid's score about 30–40 ns per N·log₂N of its transforms'
// size N (kGridTransformKeys keys' worth; 2^16: 45 ms, 2^17: 60–71, 2^18: 200), the pass over the points little beside
// it. The windowed criterion then wins below about 12 spacings at 10⁵ points (10: 91 ms against the grid's 200; 15: 128
// against 60), where the grid needs 2^18 cells. (Natively the grid costs 4 times as many keys: 2 ns a key, 40 ns per
// N·log₂N.)
constexpr double kBandRowKeys = 20, kGridTransformKeys = 7;
bool plan_band_cv(double range, KernelKind kind, float h, int64_t points, double tolerance) {
  if (kind != KernelKind::Gaussian || !(range > 0) || !(h > 0) || points < 3) return false;
  const double ln2 = 0.6931471805599453, n = double(points);
  const double reach = std::sqrt(2 * ln2 * (25 + std::log(n) / ln2));  // cv_band_window.h's window, in bandwidths
  const double band = n * (kBandRowKeys + std::min(n, 2 * reach * double(h) * n / range));
  const int64_t cells = plan_grid_cv_cells(range, kind, h, points, tolerance);
  if (cells == 0) return true;
  const double taps = 2 * std::ceil(reach_of(kind) * double(h) * double(cells) / range) + 1;
  const double size = double(convolution_size(cells + 1, int64_t(std::min(taps, double(2 * cells + 1)))));
  return band < kGridTransformKeys * size * std::log(size) / ln2;
}

}  // namespace ka
