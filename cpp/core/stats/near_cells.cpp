// The 2-D sample on cells (near_cells.h).
#include "stats/near_cells.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ka {

NearCells::NearCells(ConstMatrix x, const double* start) : x_(x), n_(x.rows), inverse_{1 / start[0], 1 / start[1]} {
  const int64_t n = n_;
  double range[2];
  for (int d = 0; d < 2; ++d) {
    double a = HUGE_VAL, b = -HUGE_VAL;
    for (int64_t k = 0; k < n; ++k) {
      a = std::min(a, double(x.row(k)[d]));
      b = std::max(b, double(x.row(k)[d]));
    }
    lo_[d] = a;
    range[d] = (b - a) * inverse_[d];
  }
  // The cells' side: about two points a cell over the box (a line of points where the box has no area).
  const double area = range[0] * range[1], longest = std::max(range[0], range[1]);
  side_ = area > 0 ? std::sqrt(2 * area / double(n)) : 2 * longest / double(n);
  if (!(side_ > 0) || !std::isfinite(side_)) side_ = 1;  // every point at one place: one cell
  for (int d = 0; d < 2; ++d) cells_[d] = index(range[d] / side_, n - 1) + 1;
  const int64_t count = cells_[0] * cells_[1];
  if (!cell_of_.reset_zeroed(n) || !first_.reset_zeroed(count + 1) || !member_.reset_zeroed(n)) return;
  Scratch<int64_t> fill(count);
  if (!fill.ok()) return;
  for (int64_t k = 0; k < n; ++k) {
    cell_of_.get()[k] = axis_cell(k, 0) + cells_[0] * axis_cell(k, 1);
    ++first_.get()[cell_of_.get()[k] + 1];
  }
  std::partial_sum(first_.get(), first_.get() + count + 1, first_.get());
  std::copy(first_.get(), first_.get() + count, fill.get());
  for (int64_t k = 0; k < n; ++k) member_.get()[fill.get()[cell_of_.get()[k]]++] = k;
  // Clustered points (a far outlier stretches the box) crowd a few cells: there the caller's sweep serves.
  double crowding = 0;
  for (int64_t c = 0; c < count; ++c) {
    const double in_cell = double(first_.get()[c + 1] - first_.get()[c]);
    crowding += in_cell * in_cell;
  }
  bucketed_ = crowding <= 16 * double(n);
  ok_ = true;
}

}  // namespace ka
