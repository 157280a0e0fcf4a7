// Neighbourhoods and tricube weights of loess fits (neighbourhood.h).
#include "stats/loess/neighbourhood.h"

#include <algorithm>
#include <cmath>

namespace ka::loess {
namespace {

// R's weight: u = √(d²/rho), (1 − u³)³, times the fit weight. R multiplies the design rows by the square root of
// this product; the local fit uses the product itself.
inline double tricube(double d2, double rho) {
  const double u = std::sqrt(d2 / rho);
  const double t = 1 - u * u * u;
  return t * t * t;
}

}  // namespace

NeighbourFinder::NeighbourFinder(const Sample& sample, int64_t q, double span)
    : sample_(sample), q_(q), enlarge_(std::max(1.0, span)) {
  if (sample.dims > 1) {
    dist2_.resize(size_t(sample.n));
    select_.resize(size_t(sample.n));
  }
}

int64_t NeighbourFinder::window_start(double z) const {
  // The window [l, l + q) is improved by moving right while the point entering it, x[l + q], is nearer z than the
  // one leaving it, x[l]: the first l where it is not, which a binary search finds (the test is monotone in l).
  const double* x = sample_.x.data();
  int64_t lo = 0, hi = sample_.n - q_;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (z - x[mid] > x[mid + q_] - z)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

bool NeighbourFinder::find(const double* z, const double* rw, Neighbourhood* out) {
  out->index.clear();
  out->weight.clear();
  const Sample& s = sample_;
  if (s.dims == 1) {
    const double* x = s.x.data();
    const int64_t l = window_start(z[0]), r = l + q_ - 1;
    // (x − z)² as R squares it: the q-th smallest squared distance is that of the farther end of the window.
    const double far = std::max((x[l] - z[0]) * (x[l] - z[0]), (x[r] - z[0]) * (x[r] - z[0]));
    out->rho = far * enlarge_;
    if (!(out->rho > 0)) return false;
    for (int64_t i = l; i <= r; ++i) {
      const double d2 = (x[i] - z[0]) * (x[i] - z[0]);
      if (d2 < out->rho) {
        out->index.push_back(i);
        out->weight.push_back(tricube(d2, out->rho) * rw[i]);
      }
    }
    return true;
  }
  for (int64_t i = 0; i < s.n; ++i) dist2_[size_t(i)] = squared_distance(s, i, z);
  std::copy(dist2_.begin(), dist2_.end(), select_.begin());
  std::nth_element(select_.begin(), select_.begin() + (q_ - 1), select_.end());
  out->rho = select_[size_t(q_ - 1)] * enlarge_;
  if (!(out->rho > 0)) return false;
  for (int64_t i = 0; i < s.n; ++i) {
    const double d2 = dist2_[size_t(i)];
    if (d2 < out->rho) {
      out->index.push_back(i);
      out->weight.push_back(tricube(d2, out->rho) * rw[i]);
    }
  }
  return true;
}

}  // namespace ka::loess
