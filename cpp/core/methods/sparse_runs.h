// The kept keys of one sparse row (sparse.cpp): the distance kernels as functions of a norm of u = (q − k)/h, and the
// loops over keys, in sparse_runs.cpp: runs of keys (contiguous in the cell grid's order) scored, exponentiated and
// summed in float32 SIMD, one instance per kernel and shape, and the nearest key of a run. The row code that calls
// them once per cell is compiled once for every kernel (issue 21, download size).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/simd.h"
#include "engine/online_softmax.h"
#include "kernel/kernels.h"
#include "methods/sparse.h"
#include "methods/sparse_grid.h"

namespace ka {
namespace sparse {

using simd::Batch;
using simd::kLanes;
constexpr int A = CellGrid::kAxes;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLn2 = 0.6931471805599453;
constexpr float kUnderflowFloor = -58.0f;  // log2: below it a row is redone in double (exact_narrow.h's floor)

// The kernel as a function of a "norm" ν of u = (q − k)/h: Σu² (gaussian, cauchy) or Σ|u| (laplacian). Compact
// kernels are handled by their support (|u_d| <= 1 on every axis) and do not use these. A run-time value: it is
// evaluated per cell, not per key, so the row code that uses it is compiled once for every kernel (issue 21).
struct Norm {
  KernelKind kind;
  bool squared;  // Σu² rather than Σ|u|

  explicit Norm(KernelKind k) : kind(k), squared(k != KernelKind::Laplacian) {}
  double of(double t) const { return squared ? t * t : std::fabs(t); }
  double log_w(double nu) const {
    if (kind == KernelKind::Gaussian) return -nu / 2;
    if (kind == KernelKind::Laplacian) return -nu;
    return -std::log1p(nu);
  }
  // ν at which the weight is tolerance × the weight at ν = best.
  double radius(double best, double tolerance) const {
    if (kind == KernelKind::Gaussian) return best - 2 * std::log(tolerance);
    if (kind == KernelKind::Laplacian) return best - std::log(tolerance);
    return (1 + best) / tolerance - 1;
  }
  double extent(double nu) const { return squared ? std::sqrt(std::max(nu, 0.0)) : nu; }  // distance along one axis
  // A radius at which the weights are `excess` (> 1) times smaller relative to those at `nu`, with some margin.
  double widen(double nu, double excess) const {
    if (kind == KernelKind::Gaussian) return nu + 2 * std::log(excess) + 2;
    if (kind == KernelKind::Laplacian) return nu + std::log(excess) + 1;
    return (1 + nu) * excess * 2 - 1;
  }
};

// Per-row sums of the float32 pass: the row's online-softmax state with Σw² under the fixed shift 0 (distance-kernel
// scores are <= 0), into which the float32 lane sums are flushed (its batch form).
struct RowSums {
  SoftmaxState<double> state;                           // max 0, with squares
  float top = -std::numeric_limits<float>::infinity();  // best log2 score seen (compact kernels)
  int64_t kept = 0;

  // Cleared sums over `block` (2 + width doubles).
  static RowSums at_zero(double* block, int64_t width) {
    RowSums r{SoftmaxState<double>(block, width, true)};
    r.state.reset();
    r.state.max = 0;
    return r;
  }
};

struct Query {
  const Head* hd;
  const CellGrid* g;
  int64_t i;
  const float* q;
  const float* factors;  // BatchScore<K>::dimension_factor per dimension
  bool masked;
  float* spill;  // width × kLanes
  int64_t width;
};

// The key runs of one kernel, by dimensions (1–3) and value width (1, or any): the one part of a row compiled per
// kernel and shape, since it is the loop over keys; the rest of the row reaches it through this table. A run adds
// keys [b, e) of the sorted order, scored, exponentiated (fixed shift 0: distance-kernel scores are <= 0) and summed.
using RunFn = void (*)(const Query&, int64_t, int64_t, RowSums&);
struct Runs {
  RunFn by_dims[kSparseMaxDims][2];  // [dims − 1][width == 1]
};
const Runs& key_runs(KernelKind kind);  // a distance kernel (not Softmax)

// The smallest ν (Σu² when `squared`, else Σ|u|) of the keys [b, e) (unmasked) from the query at u (u units, on the
// grid's axes), in float32 lanes; +inf when b == e.
float nearest_in_run(bool squared, const CellGrid& g, const double* u, int64_t b, int64_t e);

}  // namespace sparse
}  // namespace ka
