// Internals shared by the bandwidth files (rules, CV score, scan-and-refine search): not part of the public API.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>

#include "methods/grid/grid.h"
#include "stats/bandwidth.h"

namespace ka {
class PlanarSample;  // cv_planar.h
namespace bandwidth_detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The q-quantile of values[0, n) with linear interpolation between order statistics (numpy's default, R's
// type 7), by selection; reorders `values`.
double quantile(double* values, int64_t n, double q);

// median_spacing (bandwidth.h) of values already sorted ascending (NaN nowhere among them): the same number without
// the sort.
Status median_spacing_sorted(const float* sorted, int64_t n, double* spacing);

// Criterion::exclude is finite and >= 0, and > 0 only with the leave-one-out score (bandwidth.h).
inline bool exclude_ok(const Criterion& c) {
  return c.exclude >= 0 && c.exclude < kInf && (c.exclude == 0 || c.score == Score::LeaveOneOut);
}

// Up to this many points, an exact (not grid) CV or AICc evaluation fits in double (FitOut::mean_double): the
// criterion is then the float64 textbook value, whose curve can be flatter near its minimum than the float32 pass's
// rounding (docs/regression.md). The double path makes a search 5–9 times slower (docs/benchmarks.md): above this
// size, where a search costs more, the float32 pass.
constexpr int64_t kDoubleCriterionRows = 500;

// h as the float32 bandwidth the engine reads; false where float32 cannot hold it (such a bandwidth is never the
// minimiser; checked before converting: beyond FLT_MAX the conversion is undefined).
bool float_bandwidth(double h, float* hf);

// The sample of p as GridCv takes it; a tolerance of 0 (no grid asked for, or a criterion the grid does not
// compute) makes the GridCv decline every bandwidth at no cost.
GridCv search_grid(const Problem& p, const Criterion& criterion);

struct SortedSample;  // cv_score.cpp

// What the exact evaluations of one search share: the sample sorted by its first coordinate (with blocked CV's
// band), made by the first evaluation that needs it and kept for the search's others. A search then sorts and copies
// its sample once instead of once per evaluation; the scores are the same bytes.
class SearchSample {
 public:
  SearchSample();
  ~SearchSample();
  // The sorted sample of p and c (the same for every call on one object); nullptr when it cannot be allocated.
  const SortedSample* sorted(const Problem& p, const Criterion& c);
  // Its problem (keys, queries and values sorted by the first coordinate; p's kernel and masks), or nullptr.
  const Problem* sorted_problem(const Problem& p, const Criterion& c);
  // The first coordinate of the sorted keys, where none is NaN (the rows' order then sorts it), else nullptr.
  const float* ordered_first(const Problem& p, const Criterion& c);
  // The 2-D sorted sample in cells (cv_planar.h), made from sorted(p, c); nullptr when it cannot be allocated.
  const PlanarSample* planar(const Problem& p, const Criterion& c);
  // The extent of p's keys that the plan reads at every bandwidth (grid.h), made once.
  const SampleExtent& extent(const Problem& p);

 private:
  std::unique_ptr<SortedSample> sorted_;
  std::unique_ptr<PlanarSample> planar_;
  SampleExtent extent_;
  bool extent_made_ = false;
};

// How many held-out points spread_singular solves by the textbook, spread evenly through the sample.
constexpr int64_t kSpreadProbes = 8;

// Whether one of kSpreadProbes held-out points of `loo` (leave-one-out, local-linear or local-quadratic), spread
// evenly through its rows, has ω > 0 and a design singular even in float64 (exact_local_row false; `sorted` as its
// keys_in_reach takes it): such a point's float32 solve is guarded (its slope pivot lies far below kPivotFloor of its
// diagonal) and its textbook re-solve refuses it, so CV is +inf, as the full pass would find. Below the sample's
// spacing every point's design rests on its nearest key alone, and one row proves it. The 1-D and 2-D scans'
// SingularProbe picks its points by their neighbours' distances; this serves any dimension, for a textbook row each.
// 0 where an observation weight is negative or not finite (the pass refuses them); −1: no memory.
int spread_singular(const Fit& loo, bool sorted);

// CV(h) on the search's grid where it serves h, else by the exact (or grid_local_fit) evaluation; `sample`, when
// given, holds the search's sorted sample for the exact evaluations (cv_score alone sorts for itself).
Result cv_score_with(GridCv& grid, const Problem& p, const double* h, double* score, const Criterion& criterion,
                     SearchSample* sample = nullptr);

}  // namespace bandwidth_detail
}  // namespace ka
