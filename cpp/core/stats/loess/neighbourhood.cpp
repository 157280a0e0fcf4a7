// Neighbourhoods and tricube weights of loess fits (neighbourhood.h).
#include "stats/loess/neighbourhood.h"

#include <algorithm>
#include <cmath>

#include "base/rare.h"

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

// Once per fit or prediction: compiled for size (base/rare.h).
KA_COLD NeighbourFinder::NeighbourFinder(const Sample& sample, int64_t q, double span)
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

bool NeighbourFinder::run(double z, int64_t* begin, int64_t* end, double* rho) const {
  const double* x = sample_.x.data();
  int64_t l = window_start(z), r = l + q_ - 1;
  // (x − z)² as R squares it: the q-th smallest squared distance is that of the farther end of the window.
  const auto d2 = [x, z](int64_t i) { return (x[i] - z) * (x[i] - z); };
  *rho = std::max(d2(l), d2(r)) * enlarge_;
  if (!(*rho > 0)) return false;
  // The ends tied at the q-th distance have weight 0 (only with span <= 1: above, rho exceeds every distance).
  while (l <= r && !(d2(l) < *rho)) ++l;
  while (r >= l && !(d2(r) < *rho)) --r;
  *begin = l;
  *end = r + 1;
  return true;
}

bool NeighbourFinder::find(const double* z, const double* rw, Neighbourhood* out) {
  out->index.clear();
  out->weight.clear();
  out->index.reserve(size_t(q_));
  out->weight.reserve(size_t(q_));
  const Sample& s = sample_;
  if (s.dims == 1) {
    const double* x = s.x.data();
    int64_t begin, end;
    if (!run(z[0], &begin, &end, &out->rho)) return false;
    for (int64_t i = begin; i < end; ++i) {
      out->index.push_back(i);
      out->weight.push_back(tricube((x[i] - z[0]) * (x[i] - z[0]), out->rho) * rw[i]);
    }
    return true;
  }
  for (int64_t i = 0; i < s.n; ++i) dist2_[size_t(i)] = squared_distance(s, i, z);
  std::copy(dist2_.begin(), dist2_.end(), select_.begin());
  double* select = select_.data();  // by pointer: the module's one instance of nth_element
  std::nth_element(select, select + (q_ - 1), select + s.n);
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
