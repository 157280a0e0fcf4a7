// The plan's choices within a bandwidth search and for a grid's size (plan.h): how many nodes a grid fit takes, which
// CV evaluations bin on a grid, which run the windowed exact criterion, which run exactly.
#include <algorithm>
#include <cmath>

#include "base/text.h"
#include "kernel/traits.h"
#include "methods/grid/grid.h"
#include "methods/grid/plan.h"
#include "methods/plan.h"

namespace ka {

int64_t plan_grid_nodes(const SampleExtent& x, KernelKind kind, const float* h, double tolerance, char* why) {
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
                  (long long)(x.cols == 2 ? most_grid_nodes_2d(x.rows) : kMaxGridNodes), tolerance, (long long)x.rows);
    }
  }
  return nodes;
}

int64_t plan_grid_cv_nodes(const SampleExtent& x, KernelKind kind, Estimator estimator, const float* h,
                           double tolerance, char* why) {
  const int64_t nodes = plan_grid_nodes(x, kind, h, tolerance, why);
  if (nodes == 0 || x.cols != 2 || estimator != Estimator::LocalLinear) return nodes;
  if (grid_cv_pays_2d(x, kind, nodes, h)) return nodes;
  if (why)
    format_text(why, kReasonSize,
                "exact: the convolutions on %lld² nodes cost more than the exact CV of %lld points sorted along x1",
                (long long)nodes, (long long)x.rows);
  return 0;
}

double plan_scan_tolerance(const SampleExtent& x, KernelKind kind, Estimator estimator, const float* h,
                           double tolerance, int steps, double coarsest) {
  const double most = coarsest_scan_tolerance(tolerance, steps, coarsest);
  for (double t = tolerance; t <= most && tolerance > 0; t *= 2)
    if (plan_grid_cv_nodes(x, kind, estimator, h, t) > 0) return t;
  return 0;
}

double coarsest_scan_tolerance(double tolerance, int steps, double coarsest) {
  double t = tolerance;
  for (int k = 0; k < steps && 2 * t <= coarsest; ++k) t *= 2;
  return t;
}

int64_t plan_grid_cv_cells(double range, KernelKind kind, float h, int64_t points, double tolerance, char* why) {
  const int64_t most = int64_t(1) << cv_finest_level(points);
  const int64_t wanted = grid_nodes(range, double(h), tolerance, most);
  if (wanted == 0) {  // no grid reaches the tolerance: the caller runs exactly
    if (why)
      format_text(why, kReasonSize, "exact: at this bandwidth no grid of at most %lld nodes reaches %g",
                  (long long)most, tolerance);
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

// Measured in WebAssembly (node, one thread, 10⁶ uniform points, local-linear, on this 2-core machine, 2026-12-06):
// the band's criterion (cv_band_window.h, each pair of rows weighed once) costs about 1.3 ns a key in reach (both
// sides) and 60 ns a row (kBandRowKeys keys' worth): 759 ms at 35 spacings, 86 ms at 1.2; a grid's score about 0.4 ns
// per multiply-add of its direct convolutions (kGridTapKeys keys' worth: five lines of 2^19 + 1 nodes by 143 taps in
// 150 ms, 2^18 in 67–100 ms) and 20 ns a point for the pass over the sample (kGridPointKeys). The grid then wins above
// about ten spacings, at 10⁵ points as at 10⁶.
constexpr double kBandRowKeys = 47, kGridTapKeys = 0.32, kGridPointKeys = 16;
// A grid point is screened first where the screen costs at most this share of its score: one the screen does not skip
// then costs at most that much more.
constexpr double kScreenShare = 0.35;
double band_reach(double points) {
  const double ln2 = 0.6931471805599453;
  return std::sqrt(2 * ln2 * (25 + std::log(points) / ln2));  // cv_band_window.h's window, in bandwidths
}
namespace {

// A 1-D grid's score at h in keys' worth (its direct convolutions and its pass over the points); 0 where no grid
// scores h.
double grid_cv_keys(double range, KernelKind kind, Estimator estimator, float h, int64_t points, double tolerance) {
  const int64_t cells = plan_grid_cv_cells(range, kind, h, points, tolerance);
  if (cells == 0) return 0;
  const double taps =
      std::min(2 * std::ceil(reach_of(kind) * double(h) * double(cells) / range) + 1, double(2 * cells + 1));
  const double lines = estimator == Estimator::LocalLinear ? 5 : 2;  // S₀…S₂, T₀, T₁; or S₀, T₀
  // Counted as direct convolutions: where the grid runs an FFT instead, it costs less (fft_pays, grid/plan.h).
  return kGridTapKeys * lines * double(cells + 1) * taps + kGridPointKeys * double(points);
}

// The band's keys in reach of one row (both sides) on the uniform spread.
double band_row_keys(double range, float h, double n) { return std::min(n, 2 * band_reach(n) * double(h) * n / range); }

}  // namespace

bool plan_band_cv(double range, KernelKind kind, Estimator estimator, float h, int64_t points, double tolerance,
                  double keys_in_reach) {
  if (kind != KernelKind::Gaussian || !(range > 0) || !(h > 0) || points < 3) return false;
  const double n = double(points);
  const double band = n * kBandRowKeys + (keys_in_reach >= 0 ? keys_in_reach : n * band_row_keys(range, h, n));
  const double grid = grid_cv_keys(range, kind, estimator, h, points, tolerance);
  return grid == 0 || band < grid;
}

bool plan_band_screen(double range, KernelKind kind, Estimator estimator, float h, int64_t points, int64_t rows,
                      double tolerance) {
  if (kind != KernelKind::Gaussian || !(range > 0) || !(h > 0) || points < 3) return false;
  const double grid = grid_cv_keys(range, kind, estimator, h, points, tolerance);
  const double screen = double(rows) * (kBandRowKeys + band_row_keys(range, h, double(points)));
  return grid > 0 && screen < kScreenShare * grid;
}

}  // namespace ka
