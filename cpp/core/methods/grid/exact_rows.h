// The rows a grid fit hands to the exact engine (grid_local_fit, GridCv): local_fit on a subset of the queries.
#pragma once
#include <algorithm>
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"

namespace ka {

// Runs local_fit on a subset of the queries (`rows`, `count` of them), writing row r's outputs into entry r of
// `into` (count rows; any pointer but mean.data may be null). With leave-one-out, each row runs alone with its own
// key masked by key padding.
Result fit_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& into);

// The outputs of `count` rows fitted together (packed, row r at entry r), then written each in its own place in a
// call's outputs: exact_rows and the model's rows over its sorted sample (sorted_keys.cpp, banded_rows.cpp).
class PackedRows {
 public:
  PackedRows(int64_t count, int64_t width)
      : width_(width), mean_(count * width), sum_sq_(count), eff_(count), logden_(count), guarded_(count) {}
  bool ok() const { return mean_.ok() && sum_sq_.ok() && eff_.ok() && logden_.ok() && guarded_.ok(); }
  // `count` packed rows, with the outputs `like` asks for (like null: all of them).
  FitOut view(int64_t count, const FitOut* like = nullptr) const {
    const auto want = [&](auto* p, auto* field) { return !like || field ? p : nullptr; };
    return {Matrix{mean_.get(), count, width_, width_},
            want(sum_sq_.get(), like ? like->sum_sq_weights : nullptr),
            nullptr,
            want(eff_.get(), like ? like->effective_keys : nullptr),
            want(logden_.get(), like ? like->log_denominator : nullptr),
            want(guarded_.get(), like ? like->guarded : nullptr)};
  }
  // Packed row k to row rows[k] of out, for k < count.
  void scatter(const int64_t* rows, int64_t count, const FitOut& out) const {
    for (int64_t k = 0; k < count; ++k) {
      const int64_t i = rows[k];
      std::copy(mean_.get() + k * width_, mean_.get() + (k + 1) * width_, out.mean.row(i));
      if (out.sum_sq_weights) out.sum_sq_weights[i] = sum_sq_.get()[k];
      if (out.effective_keys) out.effective_keys[i] = eff_.get()[k];
      if (out.log_denominator) out.log_denominator[i] = logden_.get()[k];
      if (out.guarded) out.guarded[i] = guarded_.get()[k];
    }
  }
  uint8_t* guarded() const { return guarded_.get(); }

 private:
  int64_t width_;
  Scratch<float> mean_;
  Scratch<double> sum_sq_, eff_, logden_;
  Scratch<uint8_t> guarded_;
};

// fit_rows, with each row's outputs written in its own place in `out`.
Result exact_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out);

}  // namespace ka
