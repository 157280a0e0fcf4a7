// A 2-D sample sorted by x₁ (SortedKeys), indexed again in bands of x₂, each band's keys in x₁ order: the keys that
// can weigh in a row's exact fit then lie, band by band, in one run of x₁ each, found by bisection. Without it a row
// beyond the data along x₂ (or with a nearest key in x₁ order far away in x₂) reads a strip of every x₂ along x₁: at
// 10⁶ points and h = 0.02 of the range, 512 rows above the data took 9 s against 0.4 ms inside.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "base/status.h"
#include "kernel/kernels.h"

namespace ka {

class KeyBands {
 public:
  // Indexes n keys (n × 2, sorted by x₁) in about √(n/16) bands of equal height over [min x₂, max x₂]; false when the
  // sample cannot be banded (a non-finite x₂, or too many keys for 32-bit indices): the caller reads x₁ strips.
  bool prepare(const float* x, int64_t n);
  bool ready() const { return bands_ > 0; }

  // Whether rows of this kernel can be gathered: product kernels whose log-weight is a sum over the axes of a
  // function of |u_d| that grows with it (Gaussian, Laplacian, the compact kernels).
  static bool serves(KernelKind kind) { return kind != KernelKind::Softmax && kind != KernelKind::Cauchy; }

  // A run of band `band`'s keys: order()[from, to).
  struct Run {
    int64_t band, from, to;
  };
  // The keys of q's exact fit (q finite): every key whose log-weight can come within `skip` of ω/ω_max times the
  // weight of a key near q (found in the bands around q; `omega` the sorted sample's observation weights, null
  // without) — so the keys left out weigh together less than n·e^−skip of the row's largest weight, local_fit's own
  // skip — and a compact kernel's keys within h along both axes: at most one run per band, written to `runs` (room
  // for bands()), in band order. Returns how many, or −1 where no admissible key is near q (then every key).
  int64_t runs(const KernelSpec& kernel, const float* q, const float* omega, double omega_max, double skip,
               Run* runs) const;
  int64_t bands() const { return bands_; }
  // Indices into the sorted sample, band by band, x₁ ascending within a band.
  const int32_t* order() const { return order_.get(); }
  // The band of x₂ = v (clamped to the first and last).
  int64_t band_of(double v) const;
  // Band b's keys: order()[start(b), start(b + 1)).
  int64_t start(int64_t b) const { return start_.get()[b]; }

 private:
  // The first place in band b's run of order_ whose key has x₁ at or above v (`above`: above v).
  int64_t lower(int64_t b, double v, bool above) const;

  const float* x_ = nullptr;
  int64_t n_ = 0, bands_ = 0;
  double lo_ = 0, height_ = 1;
  Scratch<int64_t> start_;  // bands_ + 1: band b's keys are order_[start_[b], start_[b + 1])
  Scratch<int32_t> order_;  // n: indices into the sorted sample, band by band, x₁ ascending within a band
  Scratch<float> x1_;       // n: their x₁, for the bisections to read in order
};

}  // namespace ka
