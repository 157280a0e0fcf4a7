// The 2-D exact leave-one-out pass of a CV score on the sample in cells: strips along x₁, each sorted along x₂, so
// that each block of held-out points (64 consecutive points of a strip, a small box) is fitted on the keys within the
// kernel's reach of its box only. On the sample sorted by x₁ alone each key tile spans the whole range of x₂, and a
// held-out point visits every key of a strip along x₁.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "engine/local_solve.h"

namespace ka {

// A 2-D sample (keys, queries and values the same rows, every coordinate finite), reordered: sorted by x₁, cut into
// strips of about √(64 n) consecutive points (x₁ quantiles, so that 64 points of a strip make an about square box
// where the density is even), each sorted by x₂. ok() is false where a coordinate is not finite or memory ran out:
// the caller fits on the sample as it is instead.
class PlanarSample {
 public:
  PlanarSample(const Problem& sample, const float* observation_weights);
  bool ok() const { return ok_; }
  // The float32 fit of `f` (the sample at bandwidths f.problem.kernel.bandwidth, at itself; no mask, or with
  // `leave_one_out` each row's own key left out), block by block: each block's rows against the keys of the strips in
  // reach whose x₂ lies within D bandwidths of the block's box, D² = F² + 2·ln 2·(25 + log₂ n), F (in bandwidths) the
  // largest distance from a block point to its neighbour along its strip, which bounds its nearest other key's. Every
  // key left out then weighs less than 2^−(25 + log₂ n) of that row's largest weight: the tiles the fit of the whole
  // sample skips (local_fit.cpp), so the outputs agree to float32 rounding. Written back in the sample's order into
  // `out` (mean, guarded, sum_sq_weights, self_weight, effective_keys, log_denominator; not mean_double).
  Result fit(const Fit& f, const FitOut& out, bool leave_one_out) const;
  // fit(f, out, leave_one_out) where sweep_suits: the Gaussian kernel, Nadaraya–Watson or local-linear, one column of
  // y; `out` asks for mean and guarded, and, held in without observation weights, sum_sq_weights and self_weight (a
  // fit's summary). Each row sweeps the chunks of its block's window (32 keys, a box each) that lie within its own D
  // (F its nearer strip neighbour's distance), at absolute weights 2^−c·r² (the window holds every key in reach: no
  // running shift), held out with its own key at ω = 0, the sums in float32 lanes moved to double every 64 terms;
  // where a held-out row's largest weight is below 2^−96 it is solved in double (exact_local_row; local-linear:
  // marked guarded with a NaN mean, for the caller's textbook re-solve). The same fits as fit() to float32 rounding,
  // with per chunk a loop of weights and one of sums (and one of squares' sums) where local_fit has three loops a tile
  // (scores, their maximum, the sums) and its bounds: one exact 2-D CV point 1.7x faster in WebAssembly
  // (cv_planar_rows.cpp).
  static bool sweep_suits(const Fit& f, const FitOut& out, bool leave_one_out);
  // `every` > 1: only every `every`-th block of kKeyTile rows (counted through the strips in order) is fitted, the
  // others' rows left as they are (a screen's subsample: cv_band_screen.h).
  Result sweep_fit(const Fit& f, const FitOut& out, bool leave_one_out, int64_t every = 1) const;
  // The blocks of kKeyTile rows sweep_fit runs (blocks()), and the sample rows of every `every`-th one, in the cells'
  // order, into `rows` (room for n), with where each block's rows end into `ends` (room for blocks()); returns how
  // many blocks.
  int64_t blocks() const;
  int64_t block_rows(int64_t every, int64_t* rows, int64_t* ends) const;
  // exact_local_row (local_solve.h) of the sample's row i under `loo`, over the keys of the cells within
  // D² = F² + 2·kDoubleUnderflow bandwidths of it: every key whose weight is not exactly 0 in double, the same terms
  // as over every key, summed in the cells' order. 1: written to `mean`; 0: the design is singular; −1: no memory.
  // `work`: a window's room, made once per pass (RowWork).
  struct RowWork {
    Scratch<float> x, y, weights;
    RowWork(int64_t n, int64_t width, bool weighted) : x(2 * n), y(n * width), weights(weighted ? n : 0) {}
    bool ok() const { return x.ok() && y.ok() && weights.ok(); }
  };
  int textbook_row(const Fit& loo, int64_t i, ExactRowScratch rows, double* mean, RowWork& work) const;
  // The float32 pass's reach beyond F, squared (fit, sweep_fit): 2·ln 2·(25 + log₂ n), where a key weighs 2^−(25 + log₂
  // n) of the nearest one's.
  double float_reach2() const;

  // The sample in cell order as a problem (keys, queries and values; `like`'s kernel, masks and empty policy), its
  // observation weights (null without), and the cell row of the sample's row i: a grid's fit of the sample in cells
  // reads the moments of each point near the last one's (the grid CV of a 2-D search, cv_score.cpp).
  Problem cells(const Problem& like) const {
    Problem q = like;
    q.keys = q.queries = ConstMatrix{x_.get(), n_, 2, 2};
    q.values = ConstMatrix{y_.get(), n_, like.values.cols, like.values.cols};
    return q;
  }
  const float* cell_weights() const { return weights_.get(); }
  int64_t cell_of(int64_t i) const { return cell_.get()[i]; }

 private:
  struct Window {  // where gather copies a window's keys, values and weights, and each row's own key's place
    float *x, *y, *weights;
    int64_t* own;
    int64_t width;
  };
  int64_t gather(int64_t s, int64_t c0, int64_t c1, const float* h, double reach2, bool weighted, Window& w) const;

  bool ok_ = false;
  int64_t n_ = 0, per_ = 0;
  Scratch<int64_t> order_, cell_;  // cell row → sample row, and back
  Scratch<float> x_, y_, weights_;
  Scratch<double> strip_lo_, strip_hi_;  // per strip: its x₁ range
};

}  // namespace ka
