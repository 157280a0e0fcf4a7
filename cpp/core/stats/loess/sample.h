// The sample a loess fit works on: predictors scaled as R's simpleLoess scales them, and (in 1-D) the points in
// increasing x so that every neighbourhood is a run of consecutive points.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"

namespace ka::loess {

constexpr int kMaxDims = 4;  // R's loess takes 1-4 predictors

struct Sample {
  int64_t n = 0;
  int32_t dims = 1;
  std::vector<double> x;             // n × dims, row-major, in working order, each column divided by divisor[column]
  std::vector<double> divisor;       // dims entries: 1, or with normalize and dims > 1 the trimmed standard deviation
  std::vector<double> y;             // n, working order
  std::vector<double> prior;         // n prior weights, working order (all 1 when none were given)
  std::vector<int64_t> input;        // input[i]: the input row of working point i (1-D: sorted by x, ties by row)
  std::vector<double> lower, upper;  // dims entries: the smallest and largest scaled coordinate

  const double* point(int64_t i) const { return x.data() + i * dims; }
};

// x: n × dims row-major; y: n; weights: n finite values >= 0, not all 0, or null for all 1. With normalize and dims >
// 1, column j is divided by R's divisor: the standard deviation (n − 1 denominator) of its values after sorting, with
// ⌈0.1·n⌉ dropped at each end. Returns BadShape when n < 1, dims outside 1 … 4, or a normalised column whose
// trimmed values have no spread (fewer than 2 of them, or all equal); BadArgument for a value that is not finite,
// a negative weight or weights all 0.
Status make_sample(const double* x, const double* y, const double* weights, int64_t n, int32_t dims, bool normalize,
                   Sample* out);

// Squared Euclidean distance between the scaled point i and z (scaled coordinates), summed over the dimensions in
// order as R sums it.
inline double squared_distance(const Sample& s, int64_t i, const double* z) {
  const double* p = s.point(i);
  double d2 = 0;
  for (int32_t j = 0; j < s.dims; ++j) d2 += (p[j] - z[j]) * (p[j] - z[j]);
  return d2;
}

}  // namespace ka::loess
