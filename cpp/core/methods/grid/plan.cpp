// The grid's cost model (plan.h) and its node counts (grid_nodes, grid.h).
#include "methods/grid/plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "methods/grid/binning.h"
#include "methods/grid/fft.h"
#include "methods/grid/grid.h"

namespace ka {

double reach_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::Gaussian: return 7.8;
    case KernelKind::Laplacian: return 30.0;
    case KernelKind::Cauchy: return 0.0;
    default: return 1.0;  // compact kernels
  }
}

namespace {

// The cost of convolving `rows` rows of `nodes` bins by 2L + 1 taps, in multiply-adds (the unit of the direct
// sum's inner loop, about 1 ns natively): directly, nodes·(2L + 1) per row (each bin meets each tap once); by FFT,
// per pair of rows (one complex transform: rows a and b as its real and imaginary parts, fft.h) a forward and an
// inverse transform of N = the power of two ≥ nodes + 2L points, and once per call the filter's transform.
// Measured natively (g++ 12 -O3 -mavx2, fft.cpp against convolve's loop, a timing driver, 2026-12-03): a row pair
// costs 2.3–5.3 multiply-adds per N·log₂N (≈ 3.5 typical; the most at 16,384+ nodes with few taps, where the
// direct loop wins anyway) and the filter's transform about 1.5. The crossover is then near L ≈ 20 taps a side at
// 64–4,096 nodes (at 1,024 nodes: L = 32 gave 42.7 µs a row directly against 20.6 µs a row by FFT; L = 8, 7.1
// against 18.8): a Gaussian grid at tolerance 1e-3 (L ≈ 71) and any Laplacian one run by FFT, compact kernels
// (L ≈ 9) directly.
// Transforms of 2^19 points and more (8 MB of complex doubles) no longer fit the caches and cost about 3 times as
// much per N·log₂N: measured natively (a timing driver against Fft::transform, best of 7, on this 2-core machine
// shared with other jobs, 2026-12-06) 1.6–2.5 ns per N·log₂N up to 2^17, 2.4–6.8 at 2^18, 6–10 from 2^19. A 1-D
// CV search then scores on its finest grids (2^18 + 1 nodes) in 0.2–0.7 s per bandwidth at 10⁵ points, where its
// exact score took 0.1–0.2 s. Since the transform leaves out the bit-reversal permutation and runs blocks of 2^11
// values through their last stages in cache (fft.h), a row pair costs 1.3–1.5 times less up to 2^17 and 1.8–2.2
// times less from 2^18 (the same driver, best of 7, 2026-12-06: 1.4 ns per N·log₂N natively up to 2^16, 2.4–3.0 from
// 2^18; as WebAssembly 2.1–2.4 and 6–9): the costs below, from the earlier transform, now overstate the FFT a little.
constexpr double kFftPairCost = 3.5, kFftFilterCost = 1.5, kFftOutOfCache = 3;
constexpr int64_t kFftCachedSize = int64_t(1) << 18;
// A direct pass along contiguous lines (the first axis; convolution.cpp) runs kDoubleLanes outputs an instruction, in a
// function V8 optimises: about 0.3 of a scalar tap in WebAssembly (a 1-D CV score: five lines of 2^18 + 1 nodes by 143
// taps in 67 ms at 10⁶ points, its pass over the points included); the second axis's pass, down columns, is scalar.
constexpr double kLineTapCost = 0.3;
double direct_cost(double rows, double nodes, double L, bool lines = false) {
  return (lines ? kLineTapCost : 1.0) * rows * nodes * (2 * L + 1);
}
double fft_cost(double rows, double nodes, double L, bool box) {
  const int64_t taps = 2 * int64_t(L) + 1;
  // A box's outputs: within L − 1 … L + nodes + 1 (lay_axes' held window, which starts x₁'s on an even node).
  const int64_t size = box ? convolution_size(int64_t(nodes), taps, int64_t(L) - 1, int64_t(L + nodes) + 2)
                           : convolution_size(int64_t(nodes), taps);
  const double n = double(size), memory = size > kFftCachedSize ? kFftOutOfCache : 1.0;
  return memory * (kFftPairCost * std::ceil(rows / 2) + kFftFilterCost) * n * std::log(n) * 1.4426950408889634;
}

}  // namespace

bool fft_pays(double rows, double nodes, double L, bool lines, bool box) {
  return fft_cost(rows, nodes, L, box) < direct_cost(rows, nodes, L, lines);
}

// Whether the convolutions on `nodes` nodes per axis (spacing `step`, bandwidth h along that axis) cost less than
// the exact fit of the sample at itself: per channel, the cheaper of the direct sum and the FFT for each pass (a
// 2-D grid's first pass has `nodes` rows, its second the first's nodes + 2L outputs), L the kernel's reach in
// nodes, against n² pairs, each of which costs an exp and the same sums per channel (kExactPairTaps taps' worth:
// the exact engine's float32 SIMD pair costs about what a double tap does, ~1 ns). A kernel wide against a fine
// grid on a few thousand points can cost more on the grid, even by FFT: a 2-D Laplacian grid of 193² nodes for
// 2,000 points took 16 ms (local-linear 134 ms) where the exact fit takes 4 (6.4) before the second pass was counted
// and this was 4.
constexpr double kExactPairTaps = 1;
double grid_cost(KernelKind kind, int64_t nodes, int64_t dims, double h, double step, bool box) {
  const double taps = std::min(double(nodes), std::ceil(reach_of(kind) * h / step));
  const auto pass = [&](double rows) {
    return std::min(direct_cost(rows, double(nodes), taps), fft_cost(rows, double(nodes), taps, box));
  };
  return dims == 2 ? pass(double(nodes)) + pass(double(nodes) + (box ? 2 : 2 * taps)) : pass(1);
}
bool convolutions_pay(KernelKind kind, int64_t nodes, int64_t dims, double h, double step, int64_t n) {
  return grid_cost(kind, nodes, dims, h, step) <= kExactPairTaps * double(n) * double(n);
}

// The exact engine skips the key tiles more than 25 + log₂ n (log2 units) below a row's best weight (local_fit.cpp)
// and, on keys sorted by their first coordinate, never looks at them (row_window): a held-out point of a search's
// sorted sample pays for the keys within that reach, |u| <= √(2·ln 2·(25 + log₂ n)) bandwidths for the Gaussian,
// ln 2·(25 + log₂ n) for the Laplacian, 1 for compact kernels, plus about a tile (64 keys) at each end. Counted at
// the sample's average density over its range, at kExactPairTaps a pair.
constexpr double kTileKeys = 64;
namespace {
double exact_reach(KernelKind kind, double n) {
  const double ln2 = 0.6931471805599453;  // log2 by log: libm's log2 is not linked (docs/package.md)
  const double skip = std::min(126.0, 25 + std::log(std::max(n, 1.0)) / ln2);
  return kind == KernelKind::Gaussian    ? std::sqrt(2 * ln2 * skip)
         : kind == KernelKind::Laplacian ? ln2 * skip
         : is_compact(kind)              ? 1.0
                                         : std::numeric_limits<double>::infinity();
}
}  // namespace

double exact_cv_cost(KernelKind kind, double h, double range, int64_t points) {
  const double n = double(points);
  return kExactPairTaps * n * std::min(n, n * 2 * exact_reach(kind, n) * h / range + 2 * kTileKeys);
}

// The exact 2-D score on the sample in cells (cv_planar.h): each held-out point visits the keys within the reach
// exact_cv_cost takes along both axes (a disc for the Gaussian, a box otherwise), at the sample's average density over
// its box, plus kPlanarRowKeys keys' worth (its window's gathering, its solve).
double exact_planar_cost(KernelKind kind, const float* h, const double* range, int64_t points) {
  const double n = double(points), reach = exact_reach(kind, n);
  const double area = (kind == KernelKind::Gaussian ? 3.141592653589793 : 4) * reach * reach * double(h[0]) *
                      double(h[1]) / std::max(range[0] * range[1], std::numeric_limits<double>::min());
  return kExactPairTaps * n * (kPlanarRowKeys + std::min(n, n * area));
}

// kLinearGridTap and kPlanarRowKeys (plan.h): 2-D local-linear CV of uniform points, y = sin 6x₁ + cos 4x₂ + noise,
// one native thread (g++ -O2 -mavx2, a timing driver, 2026-12-07, best of two), n = 2·10⁴ … 10⁶ and h = 0.002 … 0.08
// on grids of 116² … 1,010² nodes at tolerances 1e-3 … 3.2e-2: on the grid about 0.4 µs a point plus 5.7 ns per tap
// of grid_cost (the larger axis's); exactly, on the sample in cells, about 0.7 µs a point plus 0.4–0.9 ns (rising
// with n) per key in reach: in pairs of 0.7 ns, 570 a point plus 8 a tap against 1,000 plus the keys a point. So the
// grid pays where 8 taps cost less than the exact score's points times (430 + their keys in reach): at 10⁵ points from
// h ≈ 0.008, at 10⁶ below 0.002 (exactly 8.4 s at h = 0.0067, on a 965² grid 0.86 s). Measured when grid_cost counted
// the whole passes' transforms; it now counts the box's (`box`: the score computes no margin), which are shorter
// where the whole pass's had just passed a power of two, as the scores' time is.
bool grid_cv_pays_2d(const SampleExtent& x, KernelKind kind, int64_t nodes, const float* h) {
  double grid = 0;
  for (int64_t d = 0; d < 2; ++d) {
    const double step = x.range[d] > 0 ? x.range[d] / double(nodes - 1) : double(h[d]);  // as grid_nodes lays it out
    grid = std::max(grid, grid_cost(kind, nodes, 2, double(h[d]), step, true));
  }
  return kLinearGridTap * grid <= exact_planar_cost(kind, h, x.range, x.rows);
}

int64_t grid_nodes(double range, double h, double tolerance, int64_t most) {
  if (!(h > 0) || !(tolerance > 0)) return 0;
  const double spacing = h * std::sqrt(12 * tolerance);
  const double nodes = std::ceil(range / spacing) + 1;
  if (!(nodes <= double(most))) return 0;
  return std::max<int64_t>(64, int64_t(nodes));
}

int cv_finest_level(int64_t points) {
  int level = kFinestLevel;
  while (level < kMaxCvLevel && (int64_t(1) << level) < points) ++level;
  return level;
}

int64_t most_grid_nodes_2d(int64_t points) {
  int64_t nodes = kMaxGridNodes;
  while (nodes < (int64_t(1) << kMaxCvLevel) && nodes < 4 * points) nodes *= 2;
  return nodes;
}

SampleExtent::SampleExtent(ConstMatrix x) : rows(x.rows), cols(x.cols) {
  for (int64_t d = 0; d < std::min<int64_t>(x.cols, kMaxGridDims) && x.rows > 0; ++d) {
    float lo = x.row(0)[d], hi = lo;
    for (int64_t i = 1; i < x.rows; ++i) {
      lo = std::min(lo, x.row(i)[d]);
      hi = std::max(hi, x.row(i)[d]);
    }
    range[d] = double(hi) - double(lo);
  }
}

int64_t grid_nodes(const SampleExtent& x, KernelKind kind, const float* h, double tolerance) {
  const int64_t dims = x.cols;
  if (!(tolerance > 0) || dims < 1 || dims > kMaxGridDims || x.rows < 2 || kind == KernelKind::Cauchy ||
      kind == KernelKind::Softmax || !h)
    return 0;
  int64_t nodes = 0;
  for (int64_t d = 0; d < dims; ++d) {
    const int64_t axis = grid_nodes(x.range[d], double(h[d]), tolerance);
    if (axis == 0) return 0;
    nodes = std::max(nodes, axis);
  }
  if (dims == 2 && nodes * nodes > most_grid_nodes_2d(x.rows)) return 0;
  // Every axis, a flat one too: grid_local_fit spaces its nodes by h (and convolves them) when all points share
  // that coordinate, which a 64² grid of 30 taps a side did for 6 points, thousands of times in a search.
  for (int64_t d = 0; d < dims; ++d) {
    const double step = x.range[d] > 0 ? x.range[d] / double(nodes - 1) : double(h[d]);
    if (!convolutions_pay(kind, nodes, dims, double(h[d]), step, x.rows)) return 0;
  }
  return nodes;
}

}  // namespace ka
