#include "stats/cv_band_screen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "stats/cv_band_window.h"
#include "stats/cv_planar.h"

namespace ka {

BandScreen::BandScreen(const Problem& sorted, const Criterion& c, const PlanarSample* cells)
    : problem_(sorted), estimator_(c.estimator), cells_(sorted.keys.cols == 2 ? cells : nullptr) {
  const int64_t n = sorted.keys.rows, dims = sorted.keys.cols;
  if (c.observation_weights || c.exclude > 0 || c.score != Score::LeaveOneOut || sorted.masks.any()) return;
  problem_.masks.leave_one_out = true;
  problem_.empty = EmptyPolicy::NaN;
  const float one[2] = {1, 1};
  if (dims == 1 && n >= kBandScreenMinPoints) {
    m_ = band_screen_rows(n);
    if (!rows_.reset_zeroed(m_)) return;
    // The ⌊(k + ½)·n/m⌋-th rows, those of k ≡ 0 (mod 4) first (lower_difference's first look).
    for (int64_t k = 0; k < m_; ++k) {
      const int64_t j = k < m_ / 4 ? 4 * k : (k - m_ / 4) / 3 * 4 + (k - m_ / 4) % 3 + 1;
      rows_.get()[k] = int64_t((double(j) + 0.5) * double(n) / double(m_));
    }
    problem_.kernel.bandwidth = one;
    active_ = bandwidth_detail::band_window_residuals(problem_, estimator_, rows_.get(), 0, nullptr);  // applies?
  } else if (dims == 2 && n >= kPlanarScreenMinPoints && cells_) {
    problem_.kernel.bandwidth = one;
    float mean = 0;
    uint8_t guarded = 0;
    FitOut out{Matrix{&mean, 1, 1, 1}};
    out.guarded = &guarded;
    if (!PlanarSample::sweep_suits(Fit{problem_, estimator_, nullptr}, out, true)) return;
    every_ = std::max<int64_t>(1, cells_->blocks() / kPlanarScreenBlocks);
    if (!rows_.reset_zeroed(n) || !ends_.reset_zeroed(cells_->blocks())) return;
    blocks_ = cells_->block_rows(every_, rows_.get(), ends_.get());
    m_ = blocks_ > 0 ? ends_.get()[blocks_ - 1] : 0;
    active_ = blocks_ >= 2;
  }
  problem_.kernel.bandwidth = nullptr;
  if (!reference_.reset_zeroed(m_) || !trial_.reset_zeroed(m_)) active_ = false;
  for (int64_t i = 0; active_ && i < n; ++i)
    for (int64_t col = 0; col < sorted.values.cols; ++col)
      rounding_ = std::max(rounding_, std::fabs(double(sorted.values.row(i)[col])));
  rounding_ *= std::ldexp(1.0, -16);
}

bool BandScreen::residuals(const float* h, double* out, int64_t from, int64_t to) {
  if (cells_) return planar_residuals(h, out);
  problem_.kernel.bandwidth = h;
  const bool done =
      bandwidth_detail::band_window_residuals(problem_, estimator_, rows_.get() + from, to - from, out + from, true);
  problem_.kernel.bandwidth = nullptr;
  return done;
}

// The rows' squared residuals, each fit held out as the criterion takes it (+inf where it is not a number, or the
// textbook re-solve of a guarded row finds its design singular).
bool BandScreen::planar_residuals(const float* h, double* out) {
  const int64_t n = problem_.keys.rows, np = design_columns(estimator_, 2);
  Problem q = problem_;
  q.kernel.bandwidth = h;
  const Fit loo{q, estimator_, nullptr};
  Scratch<float> fit(n);
  Scratch<uint8_t> guarded(n);
  Scratch<double> solve(np * np + np + np + 1);
  if (!fit.ok() || !guarded.ok() || !solve.ok()) return false;
  std::fill(guarded.get(), guarded.get() + n, uint8_t(0));
  FitOut into{Matrix{fit.get(), n, 1, 1}};
  into.guarded = guarded.get();
  if (cells_->sweep_fit(loo, into, true, every_).status != Status::Ok) return false;
  const ExactRowScratch rows{solve.get(), solve.get() + np * np, solve.get() + np * np + np};
  double* exact = solve.get() + np * np + 2 * np;
  std::unique_ptr<PlanarSample::RowWork> work;  // made at the first guarded row
  for (int64_t k = 0; k < m_; ++k) {
    const int64_t i = rows_.get()[k];
    double held = double(fit.get()[i]);
    if (guarded.get()[i]) {
      if (!work) {
        work.reset(new (std::nothrow) PlanarSample::RowWork(n, 1, false));
        if (!work || !work->ok()) return false;
      }
      const int solved = cells_->textbook_row(loo, i, rows, exact, *work);
      if (solved < 0) return false;
      held = solved ? exact[0] : std::numeric_limits<double>::quiet_NaN();
    }
    const double e = double(q.values.row(i)[0]) - held;
    out[k] = std::isnan(e) ? std::numeric_limits<double>::infinity() : e * e;
  }
  return true;
}

bool BandScreen::move_reference(const float* h) {
  if (!referenced_) return false;
  const int64_t dims = problem_.keys.cols;
  if (!(trial_dims_ == dims && std::equal(h, h + dims, trial_h_))) {
    trial_dims_ = 0;
    if (!residuals(h, trial_.get())) return false;
  }
  trial_dims_ = 0;
  const double* t = trial_.get();
  if (!std::all_of(t, t + m_, [](double v) { return std::isfinite(v); })) return false;
  reference_.swap(trial_);
  return true;
}

bool BandScreen::set_reference(const float* h) {
  if (!active_) return false;
  double* r = reference_.get();
  referenced_ = residuals(h, r);
  for (int64_t k = 0; referenced_ && k < m_; ++k) referenced_ = std::isfinite(r[k]);
  active_ = referenced_;
  return referenced_;
}

double BandScreen::bound(int64_t m) const {
  const double* d = trial_.get();
  const double* r = reference_.get();
  double mean = 0;
  for (int64_t k = 0; k < m; ++k) {
    if (d[k] == std::numeric_limits<double>::infinity()) return d[k];  // a singular design: CV(h) is +inf
    mean += d[k] - r[k];
  }
  mean /= double(m);
  // The standard error of the mean: from the rows (independent), or from the blocks' sums (rows of a block share keys).
  double squares = 0, variance = 0;
  if (blocks_ > 0) {
    for (int64_t b = 0, k = 0; b < blocks_; ++b) {
      double sum = 0;
      for (; k < ends_.get()[b]; ++k) sum += d[k] - r[k] - mean;
      squares += sum * sum;
    }
    variance = squares * double(blocks_) / double(blocks_ - 1) / (double(m) * double(m));
  } else {
    for (int64_t k = 0; k < m; ++k) squares += (d[k] - r[k] - mean) * (d[k] - r[k] - mean);
    variance = squares / double(m - 1) / double(m);
  }
  const double lower = mean - kBandScreenDeviations * std::sqrt(variance);
  return std::isnan(lower) ? std::numeric_limits<double>::quiet_NaN() : lower;
}

double BandScreen::lower_difference(const float* h, double enough) {
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  trial_dims_ = 0;
  if (!referenced_) return unknown;
  // 1-D: the first quarter of the rows (every fourth of the sorted sample's) first, the rest only where their bound
  // does not reach `enough`.
  const int64_t first = blocks_ == 0 && enough < std::numeric_limits<double>::infinity() ? m_ / 4 : 0;
  if (first > 1) {
    if (!residuals(h, trial_.get(), 0, first)) return unknown;
    const double lower = bound(first);
    if (lower >= enough) return lower;
  }
  if (!residuals(h, trial_.get(), first, m_)) return unknown;
  trial_dims_ = problem_.keys.cols;
  std::copy(h, h + trial_dims_, trial_h_);
  return bound(m_);
}

}  // namespace ka
