// The grid's convolutions (grid.h): the sampled kernel's taps along an axis and the separable convolution of binned
// arrays by them, each pass directly or by FFT (fft.h) as the axis's plan says.
#pragma once
#include <algorithm>
#include <cstdint>

#include "base/scratch.h"
#include "methods/grid/fft.h"
#include "methods/grid/plan.h"

namespace ka {

// The 1-D profile of a product kernel of bandwidth h at an offset (rounded to float32, as the exact engine sees it).
double kernel_weight(KernelKind kind, float h, double offset);

// A monomial u₁^a · u₂^b of the offsets between a sample point and an output node.
struct Power {
  int a, b;
};
// Degree 0, then 1, then 2 (the 2-D list; a 1-D grid uses the entries with b = 0).
constexpr Power kPowers[] = {{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}, {0, 2}};

// What convolve needs for the passes it runs by FFT, kept from call to call of one fit or score: the twiddles
// (planned for the largest transform so far), a filter's spectrum and work buffers, and the reversed taps.
struct FftWork {
  Fft fft;
  RowConvolution rows;
  Scratch<double> reversed;
  int64_t reversed_room = 0;

  // Prepares rows for lines of `nodes` bins by each of `count` sets of 2L + 1 taps, for the outputs [first, end) alone
  // (all: end < 0). convolve correlates (out[e] reads in[e − L + m]·tap[L + m]); the FFT convolves, so it takes the
  // taps reversed (K(u)·uᵃ is odd for odd a).
  Status prepare(const double* const* taps, int count, int64_t L, int64_t nodes, int64_t first = 0, int64_t end = -1) {
    const int64_t length = 2 * L + 1;
    if (count < 1 || count > RowConvolution::kMaxFilters) return Status::BadArgument;
    if (count * length > reversed_room) {
      if (!reversed.reset_zeroed(count * length)) return Status::OutOfMemory;
      reversed_room = count * length;
    }
    const double* filters[RowConvolution::kMaxFilters];
    for (int k = 0; k < count; ++k) {
      std::reverse_copy(taps[k], taps[k] + length, reversed.get() + k * length);
      filters[k] = reversed.get() + k * length;
    }
    if (const Status st = fft.plan(convolution_size(nodes, length, first, end)); st != Status::Ok) return st;
    return rows.prepare(fft, filters, count, length, nodes, first, end);
  }
  Status prepare(const double* tap, int64_t L, int64_t nodes) { return prepare(&tap, 1, L, nodes); }
};

// out[held_node(x1, x2, e₁, e₂)·stride] = Σ_m₁ Σ_m₂ tap1[m₁] tap2[m₂] in[(e₁ − L₁ + m₁) + G₁·(e₂ − L₂ + m₂)]: the
// separable convolution of a binned array with a product kernel's taps, axis 1 then axis 2 (`across`, E₁ × G₂, holds
// the first pass), each pass directly or by FFT as its Axis says (FFT rows in pairs; axis 2's columns read `across`
// with stride E₁). A 1-D grid has an axis 2 of one node and no taps; there, a
// second array in_b (may be null) is convolved by the same taps into out_b, in the same transforms.
Status convolve(const double* in, const Axis& x1, const Axis& x2, const double* tap1, const double* tap2,
                double* across, double* out, int64_t stride, FftWork* work, const double* in_b = nullptr,
                double* out_b = nullptr);

// The moments grid_local_fit reads, at every output node of the grid of `axis` (dims of them), laid out as
// NodeMoments(linear, dims, width, squares) says (plan.h); from the bins Σω (count), Σω² (count_sq: read only with
// `squares`) and Σω·y (sums, width per node) of bin_sample. Only the output nodes the axes hold (Axis::held; 2-D), at
// held_node: the fit of the sample at itself (a CV score) holds and computes the box's alone, where the margins were up
// to two thirds of the outputs.
Status convolve_moments(KernelKind kind, const Axis* axis, int64_t dims, int64_t width, bool linear, bool squares,
                        const double* count, const double* count_sq, const double* sums, double* moments);

}  // namespace ka
