// A grid fit that keeps its work between calls (fast-kde's estimator pattern): a model's sample is binned once per
// bin layout and convolved once per bandwidth, so a prediction after a bandwidth change re-convolves the kept bins
// instead of re-binning the sample, and a prediction at an unchanged bandwidth only serves its queries.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "engine/local_rows.h"
#include "methods/grid/plan.h"
#include "methods/grid/far2d.h"
#include "methods/grid/sorted_keys.h"

namespace ka {

// Kept bins serve a bandwidth whose plan asks for up to this many times fewer nodes per axis: finer bins only make
// the fit more accurate (the binning and interpolation errors are O((spacing/h)²)), at up to this many times the
// convolutions' cost per axis. A bandwidth that needs finer bins, or much coarser ones, re-bins the sample.
constexpr int64_t kKeptBinsFactor = 2;

class GridModel {
 public:
  // `sample`: the keys, values and observation weights every fit() reads (its queries, kernel, bandwidth and
  // estimator are ignored); its views must outlive this object, unchanged.
  explicit GridModel(const Fit& sample);

  // grid_local_fit(f, nodes, out, error_estimate) where f's keys, values and observation weights are the sample's
  // (else BadArgument); `nodes` is the plan's node count for f's bandwidths (plan_grid_nodes). The fit runs on the
  // kept bins when they hold between `nodes` and kKeptBinsFactor·nodes nodes per axis (then it equals grid_local_fit
  // at their node count), else on bins of `nodes` nodes made now (then it equals grid_local_fit's bytes); the moments
  // are convolved again only when the bandwidths, kernel, estimator or bins changed. Two layers are kept: calls with
  // standard errors or effective keys (whose binning also sums ω²) and calls without. `nodes` 0 (no grid serves f's
  // bandwidths): local_fit over sorted_sample(f), *error_estimate 0.
  Result fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate = nullptr);

  // *sorted = f with the model's keys, values and weights in the order of the first coordinate (sorted by the first
  // call that needs it, then kept), so that an exact pass reads only the key tiles in each query's reach, as for a
  // model planned exact; f itself where that order cannot serve: a NaN first coordinate, masks, per-query bandwidths.
  // f's keys, values and weights must be the model's (else BadArgument).
  Status sorted_sample(const Fit& f, Fit* sorted);

  // local_gradient(f, out) (local_rows.h): from the moments of the fit's grid of `nodes` nodes per axis (the plan's
  // node count for f's bandwidths, as fit() takes it; 0: none) where the grid serves the row (grid_gradient,
  // gradient.h: f's kernel and estimator as grid_serves_gradient says, a query inside the sample's box with weight
  // enough), kept between calls as fit()'s are; every other row exactly, over the model's sample sorted by its first
  // coordinate, each query reading only the keys within the kernel's reach (O(log n + k) a row). f's keys, values and
  // weights must be the model's.
  Result gradient(const Fit& f, int64_t nodes, const GradientOut& out);

  // How many times the sample was binned and the moments convolved (for tests and benchmarks); how many times it was
  // sorted (at most once: by the first call with a row the grid does not serve) and how many keys such rows read.
  int64_t binnings() const { return binnings_; }
  int64_t convolutions() const { return convolutions_; }
  int64_t sorts() const { return sorted_.sorts; }
  int64_t keys_read() const { return sorted_.keys_read; }

 private:
  struct Layer {
    int64_t nodes = 0;  // of the bins; 0: none yet
    Scratch<double> count, count_sq, sums, moments;
    int64_t moment_room = 0;
    bool convolved = false;  // moments hold the convolution of these bins for the key below
    float h[2] = {0, 0};
    KernelKind kind = KernelKind::Gaussian;
    Estimator estimator = Estimator::NadarayaWatson;
  };

  bool same_sample(const Fit& f) const;
  // Checks f's sample and, once, finds its key ranges, totals and whether its observation weights are valid.
  Status ready(const Fit& f);
  // The moments of f's estimator (with the Σ K²·ω² moments when `squares`) on the grid for `nodes`: the layer's bins
  // kept or made again, convolved again only when something changed; `axis` receives the grid's axes.
  Status moments(const Fit& f, int64_t nodes, bool squares, Axis* axis, const double** moments);
  Result exact_gradient(const Fit& f, const GradientOut& out);

  ConstMatrix keys_, values_;
  const float* weights_;
  bool ranged_ = false, finite_ = true;
  Status weights_status_ = Status::Ok;  // check_observation_weights, once
  float lo_[2] = {0, 0}, hi_[2] = {0, 0};
  double total_ = 0, total_sq_ = 0;
  Layer layers_[2];  // without, with the Σ K²·ω² moments
  int64_t binnings_ = 0, convolutions_ = 0;
  // The sample in the order of its first coordinate, for the rows the grid does not serve (beyond the data, too
  // little weight): their keys in O(log n + k) instead of a pass over the sample per call.
  SortedKeys sorted_;
  // The rows beyond the grid's reach: the keys near each end (1-D), side and corner (2-D) and the fits there as a
  // function of the distance (far_table.h, far2d.h), kept while the bandwidth and tolerance stay.
  FarTables far_;
};

}  // namespace ka
