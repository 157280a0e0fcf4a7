// loess's direct surface (R's lowesf, surface = "direct"): an exact local fit at every point asked for, with the
// parts of its operator the statistics and standard errors need.
#pragma once
#include <cstdint>

#include "base/status.h"
#include "stats/loess/sample.h"
#include "stats/loess/surface.h"

namespace ka::loess {

// What to compute at each point besides the fit; null pointers are skipped.
struct DirectOutputs {
  double* fit = nullptr;          // m values
  double* diagonal = nullptr;     // m values, the points being the data in working order: L_ii (R's ihat = 1)
  double* rows = nullptr;         // m × n, row-major: the operator rows, L_ij (R's ihat = 2)
  double* variance = nullptr;     // m values: Σ_j L_ij² / prior_j (the standard error is s times its square root)
  const double* prior = nullptr;  // n prior weights (for variance)
  bool pseudo_inverse = false;    // set when some fit dropped a singular value
};

// Fits at m points z (scaled coordinates, row-major m × dims) with weights rw (n, working order). Returns
// BadArgument when a point has a zero-width neighbourhood.
Status direct_fit(const Sample& sample, const FitSpec& spec, const double* y, const double* rw, const double* z,
                  int64_t m, DirectOutputs* out);

}  // namespace ka::loess
