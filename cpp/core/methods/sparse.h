// Certified sparse attention for low-dimensional keys (issue 5, item 4): a uniform cell grid over each head's keys
// lets every query visit only the keys that can matter. Compact kernels skip keys outside their support (exact);
// gaussian, laplacian and cauchy skip keys whose weight is provably below `tolerance` × the row's largest weight and
// report a rigorous bound on the mass they dropped.
#pragma once
#include <cstdint>

#include "engine/problem.h"

namespace ka {

// Dimensions per head the cell grid serves (a grid in more dimensions visits too many cells per query).
constexpr int64_t kSparseMaxDims = 3;

struct SparseOptions {
  // In (0, 1). Exponential kernels: a key is skipped only when its weight is provably below tolerance × the largest
  // weight of its query's admissible keys. Compact kernels ignore it (they skip only keys outside the support).
  double tolerance = 1e-3;
};

// Per-query outputs besides the attention itself; every pointer may be null (not computed).
struct SparseOut {
  Matrix out;                 // I × D, as attention()
  double* dropped = nullptr;  // I × H ([query][head]): upper bound on (skipped mass) / (kept mass); 0 when
                              // nothing was skipped or the kernel is compact; NaN for an empty row
  // heads == 1 only (regression): over the kept keys, as local_fit's FitOut for Nadaraya–Watson.
  double* sum_sq_weights = nullptr;   // Σ w² / (Σ w)²
  double* effective_keys = nullptr;   // (Σ w)² / Σ w²
  double* log_denominator = nullptr;  // ln Σ w (the kernel's own scale: w = 1 at distance 0)
};

struct SparseReport {
  // max over rows and heads of dropped / (1 + dropped): with the values' range r, every output is within
  // error_estimate × r of the exact result (beyond float32 rounding), since
  // |f − f_kept| = S/(K + S)·|f_skipped − f_kept| <= S/(K + S)·r for skipped mass S <= bound·K.
  double error_estimate = 0;
  double max_dropped = 0;    // max of SparseOut::dropped over non-empty rows
  int64_t kept_keys = 0;     // (query, key) pairs scored, summed over heads
  int64_t skipped_keys = 0;  // (query, key) pairs never looked at
};

// attention() over the keys that can matter, for a distance kernel (not Softmax) with at most kSparseMaxDims
// dimensions per head. Masks: causal, leave-one-out and key padding (the general mask and groups are BadArgument).
// Empty rows (no admissible key in the support of a compact kernel, or none at all) follow p.empty as in the exact
// engine; EmptyPolicy::Error returns EmptyRow with the first such row (lowest head, then row). Kept keys are scored,
// exponentiated and summed as the exact engine's narrow path does (float32 SIMD, flushed into double every 64 keys
// here, every 256 there; rows whose weights would underflow are redone in double), so compact kernels match it up to
// float32 summation order. Memory: O(J) per head for the index (keys sorted by cell, transposed), never I×J.
// p.threads splits the queries; outputs do not depend on it. `report` may be null.
Result sparse_attention(const Problem& p, const SparseOptions& o, const SparseOut& out, SparseReport* report);

}  // namespace ka
