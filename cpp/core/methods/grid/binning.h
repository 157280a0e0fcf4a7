// Linear binning of a sample onto the grid's nodes (grid.h): a fit's bins in sample order, and the sorted, binned
// sample a bandwidth search (GridCv) keeps, from which coarser grids' bins follow exactly (halve_bins).
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "methods/grid/grid.h"
#include "methods/grid/plan.h"

namespace ka {

// The binning, sorting and per-point passes run over blocks of this many points or cells, each a call of its own:
// under WebAssembly, V8 optimises a function only between calls (simd::keep_out_of_line).
constexpr int64_t kBlock = int64_t(1) << 16;

// The smallest and largest entries of column d of keys [first, end) into *lo and *hi (which hold those of the
// entries before), and *finite false if any is NaN or infinite.
void column_range(ConstMatrix keys, int64_t d, int64_t first, int64_t end, float* lo, float* hi, bool* finite);

// Linear binning of the sample f (keys, values, observation weights) on the grid of `axis` (dims of them): each
// point spreads its ω, ω² (only when `squares`) and ω·y over the 2 (1-D) or 4 (2-D) nodes around it. `count` and
// `count_sq` hold a node each (axis 1 fastest), `sums` width entries per node; all three are added to.
void bin_sample(const Fit& f, const Axis* axis, int64_t dims, bool squares, double* count, double* count_sq,
                double* sums);

// Linear binning on step 2s from linear binning on step s (`cells` coarse cells, 2·cells fine ones), exactly: a
// point φ ∈ [0, 1) of a fine step past node 2j gives f[2j] 1 − φ and f[2j+1] φ, and on the coarse grid, at j + φ/2,
// c[j] 1 − φ/2 and c[j+1] φ/2; past node 2j + 1 likewise. So c[j] = f[2j] + ½(f[2j−1] + f[2j+1]). `c` may be `f`
// (c[j] is written after the last read of f[j]).
void halve_bins(const double* f, int64_t cells, double* c);

// log2 of the fewest cells of the grid GridCv sorts and bins on (cv_finest_level, grid.h): kMaxGridNodes cells, so
// every grid_nodes count fits in a grid of 2^k + 1 nodes derived from it (k ≤ the finest level).
constexpr int kFinestLevel = 18;
static_assert(int64_t(1) << kFinestLevel == kMaxGridNodes);

// The 1-D sample f's points with ω > 0 sorted by their cell on the finest grid (2^level cells from lo over `range`) and
// binned there: `counted` points (those with ω > 0) into x, y (width per point) and w (only with observation weights),
// cell g holding start[g] … start[g + 1] − 1, and bins, channel-major, Σω then Σω·y per column, on the finest grid's
// nodes. A radix sort in two cache-friendly steps (binning.cpp).
Status sort_and_bin_cells(const Fit& f, double lo, double range, int64_t counted, int level, Scratch<int64_t>* start,
                          Scratch<float>* x, Scratch<float>* y, Scratch<float>* w, Scratch<double>* bins);

}  // namespace ka
