// The backward pass of the exact engine, FlashAttention-2 style (Dao 2023, Algorithm 2): the forward saves each
// query's log-sum-exp L_i = log Σ_j w_ij (natural log), and the backward recomputes the normalised weights
// P_ij = exp(s_ij − L_i) key tile by key tile from it, never holding the I×J matrix. With O = P·V and a loss L
// whose gradient with respect to O is dO:
//   dV_j = Σ_i P_ij dO_i,   dP_ij = dO_i·v_j,   dS_ij = P_ij (dP_ij − D_i)  with  D_i = dO_i·O_i,
//   dQ_i = Σ_j dS_ij ∂s_ij/∂q_i,   dK_j = Σ_i dS_ij ∂s_ij/∂k_j,   dθ = Σ_ij dS_ij ∂s_ij/∂θ,
// where s is the kernel's log-score (kernels.h) and θ is the softmax scale, or the log-bandwidth b_d = log h_d of
// each dimension of a distance kernel (u_d = (q_d − k_d)/h_d, so ∂u_d/∂b_d = −u_d).
#pragma once
#include "engine/problem.h"

namespace ka {

// The gradients, as caller-provided outputs. queries: I × M, keys: J × M, values: J × D (row strides as given).
// kernel: for softmax 1 entry, dL/d scale (summed over heads, which share the scale); for a distance kernel M
// entries, dL/d log h_d (head h owns entries [h·M/H, (h+1)·M/H)). Any of the four may be null/empty to skip it
// (its arithmetic is still done).
struct Gradients {
  Matrix queries;
  Matrix keys;
  Matrix values;
  float* kernel = nullptr;
};

// The forward pass that also saves what the backward needs: out (I × D, as attention() computes it, up to float32
// rounding) and lse (I × H doubles, [query][head]): the natural log of the row's sum of unnormalised weights, −inf for
// a query with no admissible key (such a row follows p.empty as in attention(); EmptyPolicy::Error returns EmptyRow).
// Runs on p.threads threads (results do not depend on the count).
Result attention_forward(const Problem& p, Matrix out, double* lse);

// Given lse from attention_forward() on the same problem, and dout (I × D, dL/dOut), writes the gradients.
// Kernels: softmax, gaussian, laplacian (subgradient 0 where q_d = k_d, the symmetric choice), cauchy,
// epanechnikov and tricube (the derivative is taken inside the support; at its edge it does not exist, a set of
// measure zero); uniform returns BadArgument (its output is piecewise constant in q, k and h: the derivative is
// zero almost everywhere and does not exist at the jumps). Every mask and head count of the forward is supported.
// Rows with no admissible key: under EmptyPolicy::NaN and Zero the output is a constant and contributes nothing;
// under Nearest it is the mean of the nearest keys' values, so only dV receives dO_i / n; Error returns EmptyRow.
// Accuracy: softmax rows run in float32 SIMD (backward_wide.h; D_i from the output, which this entry recomputes
// with one forward pass since it is not given it), every other row and kernel in double from the float32 inputs,
// with D_i = Σ_j P_ij dO_i·v_j from a first pass that also corrects the saved lse (row_statistics() in
// backward_double.cpp). Either way the gradients match a float64 backward to 1e-5 of each tensor's largest entry
// (docs/design.md, "The backward pass", says which rows take which path and why). Memory: O((I + J)·(M + D)) doubles of
// accumulators, never I×J. Single-threaded (p.threads is not used).
Result attention_backward(const Problem& p, const double* lse, ConstMatrix dout, Gradients grads);

// Both passes in one call; out (I × D) receives the forward's output, or may be empty (then scratch is used). The
// float32 softmax path takes D_i from that output, so this costs one forward pass less than the two entries above.
Result attention_gradients(const Problem& p, ConstMatrix dout, Gradients grads, Matrix out);

}  // namespace ka
