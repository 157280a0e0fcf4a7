// A small radix-2 complex FFT in double, and linear convolution of real rows by one real filter on top of it: what
// the grid's convolutions (convolution.cpp) use when the kernel is wide against the grid, where the direct sum's
// nodes·(2L + 1) multiply-adds per row exceed a few N·log₂N (N the transform size). No dependency, no exception:
// buffers come from Scratch and a failed allocation is Status::OutOfMemory.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "base/status.h"

namespace ka {

// Transforms of power-of-two sizes up to size(), for convolution: the forward transform leaves its output in
// bit-reversed order and the inverse reads its input in that order, so that neither pays the permutation (a pass of
// scattered reads that cost more than a butterfly stage once a transform leaves the caches), and a pointwise product
// of two forward transforms is in the order the inverse reads. Each stage reads its own twiddles contiguously, and
// blocks of kBlock values run all their remaining stages while they are in cache.
class Fft {
 public:
  // Plans for transforms of up to `size` points (rounded up to a power of two); keeps the current twiddles when
  // they already serve that size. OutOfMemory (and no plan) when they cannot be had.
  Status plan(int64_t size);
  int64_t size() const { return size_; }
  // In place, on n complex values (re, im interleaved; n a power of two, 1 ≤ n ≤ size()): X_k = Σ_j x_j e^{−2πijk/n},
  // X_k left at position bitreverse(k) (log₂n bits).
  void forward(double* data, int64_t n) const;
  // The inverse of forward without its factor 1/n: x_j = Σ_k X_k e^{+2πijk/n}, X_k read at position bitreverse(k),
  // x_j written at position j.
  void inverse(double* data, int64_t n) const;

 private:
  int64_t size_ = 0;
  // The twiddles of the stage whose butterflies pair values `span` apart: e^{−iπk/span}, k < span, as (cos, sin) at
  // entries span + k (span = 1, 2, 4, …, size_/2), each from the largest span's table, which cos/sin computed once.
  Scratch<double> twiddles_;
};

// The transform size for a linear convolution of `length` entries by `taps` taps whose outputs [first, end) alone are
// read (all of them: end < 0): the smallest power of two ≥ end and ≥ length + taps − 1 − first, so that the circular
// convolution's wrap-around falls on outputs not read (all of them: none wraps). A 2-D CV score reads the box's nodes
// alone, L to L + nodes of nodes + 2L: nodes + L + 2 points, where the whole pass needs nodes + 2L (at 10⁵ points and
// h = 0.022, 475 against 546: a transform of 512 points instead of 1,024).
int64_t convolution_size(int64_t length, int64_t taps, int64_t first = 0, int64_t end = -1);

// Linear convolution of real rows of one length by up to kMaxFilters real filters of one length. Two rows go
// through one complex transform, as its real and imaginary parts: a filter is real, so the real part of the product's
// inverse is row a * filter and the imaginary part row b * filter, for the price of one row. A loaded pair is
// transformed once and multiplied by each filter's spectrum in turn (the grid's moments convolve one row pass by
// K·uᵇ for b = 0, 1, 2).
class RowConvolution {
 public:
  static constexpr int kMaxFilters = 6;
  // The filters (`count` of them, `taps` entries each, copied) for rows of `length` entries, with `fft` planned to at
  // least convolution_size(length, taps, first, end); `fft` must outlive the calls to load and emit. Reuses the
  // buffers of an earlier prepare when they are large enough. OutOfMemory when they cannot be had; BadArgument for
  // more than kMaxFilters or a transform larger than fft's. emit then gives the outputs [first, end) alone (all of
  // them: end < 0).
  Status prepare(const Fft& fft, const double* const* filters, int count, int64_t taps, int64_t length,
                 int64_t first = 0, int64_t end = -1);
  Status prepare(const Fft& fft, const double* filter, int64_t taps, int64_t length) {
    return prepare(fft, &filter, 1, taps, length);
  }
  // Transforms rows a and b (`length` entries, in_stride apart; b may be null: a alone, at the same cost).
  void load(const double* a, const double* b, int64_t in_stride);
  // out_a[k·out_stride] = Σ_j filter[j]·a[(k − j)·in_stride] for 0 ≤ k < length + taps − 1 (the full linear
  // convolution of the loaded rows by filter `filter`; a is 0 outside its `length` entries), and the same of b into
  // out_b (skipped when null). Rounding: about 1e-16·log₂N of the largest |a|·|filter| sums, at every k, including
  // those the exact sum leaves 0. `first`, `count` (−1: to the end): only those k, within prepare's outputs.
  void emit(int filter, double* out_a, double* out_b, int64_t out_stride, int64_t first = 0, int64_t count = -1);
  // load, then emit by the first filter.
  void apply(const double* a, const double* b, int64_t in_stride, double* out_a, double* out_b, int64_t out_stride) {
    load(a, b, in_stride);
    emit(0, out_a, out_b, out_stride);
  }

 private:
  const Fft* fft_ = nullptr;
  int64_t n_ = 0, length_ = 0, out_first_ = 0, out_end_ = 0, capacity_ = 0;
  Scratch<double> spectra_;  // each filter's transform, divided by n_ (the inverse's missing factor), 2·n_ apart
  Scratch<double> loaded_;   // the transform of the loaded pair
  Scratch<double> work_;     // its product with one spectrum, then that product's inverse
};

}  // namespace ka
