// The plug-in rule's pilot (plugin.h): quartic least-squares fits over blocks of consecutive points, for
// N = 1, 2, … blocks, and Mallows' Cp to choose N (Ruppert, Sheather & Wand 1995, §4.1; KernSmooth's cp.f and
// blkest.f compute the same quantities).
#pragma once
#include <cstdint>

#include "base/status.h"
#include "stats/plugin.h"

namespace ka {

// Partition N of n sorted points: blocks j = 0 … N − 1 of ⌊n/N⌋ consecutive points, [j·⌊n/N⌋, (j + 1)·⌊n/N⌋),
// the last running to n.
struct QuarticBlocks {
  int32_t partitions = 0;               // N = 1 … partitions were fitted
  double rss[kMaxPluginBlocks];         // [N − 1]: Σ over N's blocks of the quartic fit's residual sum of squares
  double curvature[kMaxPluginBlocks];   // [N − 1]: Σ_i m̂''(x_i)², m̂ the quartic of x_i's block
  double curvature4[kMaxPluginBlocks];  // [N − 1]: Σ_i m̂''(x_i) m̂''''(x_i)
};

// Fits partitions N = 1 … max_partitions of the n points (x ascending, y beside it), stopping before the first
// partition with a block of fewer than 5 distinct x (whose quartic is not determined): out->partitions is then
// the last N before it, 0 when the whole sample has fewer than 5. Each block's quartic is fitted in its own basis,
// t = (x − centre)/half-width ∈ [−1, 1], by Householder QR of [1 t t² t³ t⁴ y]: one pass over the points folds the
// rows of each stretch between partition boundaries into a triangle, and each block's triangle follows from its
// stretches' by the change of basis (exact polynomial identities), so the cost is one QR pass for all N.
// The residual sum of squares is the triangle's last diagonal entry squared, and the sums of m̂''² and m̂''m̂''''
// follow from the triangle (‖X v‖ = ‖R v‖), without a second pass.
// OutOfMemory only; n >= 1, max_partitions in 1 … kMaxPluginBlocks.
Status fit_quartic_blocks(const double* x, const double* y, int64_t n, int32_t max_partitions, QuarticBlocks* out);

// Mallows' Cp of partition N (1-based) of n points, partitions 1 … N_max fitted:
//   Cp(N) = (n − 5·N_max) RSS(N)/RSS(N_max) + 10·N − n,
// written into cp[N − 1]; returns the first N with the smallest Cp, NaNs last (R's order(Cp)[1]), 1 if all are NaN.
int32_t choose_blocks(const QuarticBlocks& fits, int64_t n, double* cp);

}  // namespace ka
