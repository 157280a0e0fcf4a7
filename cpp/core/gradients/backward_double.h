// The backward pass in double (backward.h): each pair's weight recomputed from the saved log-sum-exp, for distance
// kernels and for the softmax rows the float32 path (backward_wide.h) does not take.
#pragma once
#include <cstdint>

#include "base/status.h"
#include "base/views.h"
#include "engine/head.h"

namespace ka {

// Per-query data of one head: the log-sum-exp in double (−inf: empty row) and D_i = dO_i·O_i.
struct RowData {
  double* lse;
  double* delta;
};

// Accumulators of one head, in double: dq I × m, dk J × m, dv J × width, dtheta m (or 1 for softmax).
struct HeadGrads {
  double* dq;
  double* dk;
  double* dv;
  double* dtheta;
};

// The double path for the rows of one head (kernel `kind`, bandwidths h in double, null for softmax) that `skip`
// does not mark (null: every row); marked rows are left to backward_wide() and contribute nothing here. `lse` holds
// the forward's log-sum-exp ([query][head], `heads` of them); rows receives each row's corrected one and D_i, g the
// head's gradients (added to); `chosen` is J bytes of scratch for EmptyPolicy::Nearest. EmptyRow for an empty row
// under EmptyPolicy::Error.
Result backward_double(KernelKind kind, const Head& hd, int32_t head, const double* h, const double* lse, int32_t heads,
                       ConstMatrix dout, const RowData& rows, const HeadGrads& g, uint8_t* chosen, const uint8_t* skip);

// The scale gradient of softmax row i in double, Σ_j P_ij (dP_ij − D_i) q_i·k_j, for rows of the float32 path whose
// float32 sum was not accurate enough (backward_wide.h).
double row_theta(const Head& hd, int64_t i, double L, ConstMatrix dout);

// Whether query i has at least two admissible keys. With one, dS_ij = 0 exactly (P = 1, D_i = dP_ij), which the
// double path reproduces and float32 would not (its dP and D round differently): rows of I×1 problems, the first
// row under a causal mask.
bool several_keys(const Head& hd, int64_t i);

}  // namespace ka
