// The neighbourhood of one loess fit and its tricube weights, as R's ehg127 forms them (Cleveland & Grosse 1991,
// "Computational methods for local regression", Statistics and Computing 1, §2).
#pragma once
#include <cstdint>
#include <vector>

#include "stats/loess/sample.h"

namespace ka::loess {

struct Neighbourhood {
  // R's radius, in squared scaled units: the q-th smallest squared distance to the fit point, times the span when
  // the span exceeds 1 (so the distance grows by √span in any dimension).
  double rho = 0;
  std::vector<int64_t> index;  // the working-order points with squared distance below rho (1-D: increasing)
  std::vector<double> weight;  // their weights (1 − (d/√rho)³)³ · rw, d the distance
};

// Finds neighbourhoods in one sample for q = min(n, ⌊n·span⌋) points per fit (q >= 1). In 1-D the q nearest points
// are the best window of q consecutive sorted points, found by binary search (O(log n + q)); in more dimensions
// every squared distance is computed and the q-th smallest selected (O(n)). Points tied at the q-th distance have
// weight 0 in R, so the ones below it are the whole neighbourhood whichever R would have picked.
class NeighbourFinder {
 public:
  NeighbourFinder(const Sample& sample, int64_t q, double span);

  // The neighbourhood of z (scaled coordinates) with weights tricube · rw[i] (rw: n entries, working order).
  // Returns false when rho is 0 (at least q points at distance 0: R's "zero-width neighborhood").
  bool find(const double* z, const double* rw, Neighbourhood* out);

  // 1-D: rho and the run [begin, end) of sorted points whose squared distance to z is below it; false when rho
  // is 0.
  bool run(double z, int64_t* begin, int64_t* end, double* rho) const;

  int64_t q() const { return q_; }

 private:
  // 1-D: the first point of the window of q consecutive sorted points nearest z.
  int64_t window_start(double z) const;

  const Sample& sample_;
  int64_t q_;
  double enlarge_;             // max(1, span)
  std::vector<double> dist2_;  // dims >= 2: squared distances of all points
  std::vector<double> select_;
};

}  // namespace ka::loess
