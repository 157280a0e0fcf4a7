// Shared by the approximate attention methods (random_features.h, nystrom.h): their options and report, the
// transformed coordinates that both work in, and exact recomputation of chosen rows by the streaming engine.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/problem.h"

namespace ka {

enum class LandmarkSampling : int32_t { KMeansPlusPlus, Uniform };

struct ApproxOptions {
  // Target root-mean-square error relative to the range of the values, in (0, 1); sizes `count` when it is 0.
  double tolerance = 1e-2;
  uint64_t seed = 0;
  int32_t count = 0;  // features (random features) or landmarks (Nyström); 0: chosen from the tolerance
  LandmarkSampling sampling = LandmarkSampling::KMeansPlusPlus;
};

struct ApproxReport {
  int32_t count = 0;          // features or landmarks used
  double error_estimate = 0;  // root-mean-square error estimate over the outputs, relative to the range of the values
  int64_t exact_rows = 0;     // query rows (summed over heads) the approximation could not serve, computed exactly
};

// One head of a problem in double, in transformed coordinates q̃ (I×d) and k̃ (J×d) in which the weight is
//   softmax  exp(s q·k)             ∝ exp(q̃·k̃ + b_k),  q̃ = √|s|(q − c_q), k̃ = sign(s)√|s|(k − c_k), b_k = s c_q·(k −
//   c_k) gaussian exp(−|(q − k)/h|²/2)   ∝ exp(q̃·k̃ + b_k),  q̃ = (q − c)/h,     k̃ = (k − c)/h,            b_k = −|k̃|²/2
// where ∝ drops factors of the query alone, which cancel in the normalised weights. The centres (column means of
// the queries c_q and keys c_k = c) change nothing exactly but keep |q̃ + k̃| small, which is what both methods'
// errors grow with. For the distance kernels (gaussian, laplacian, cauchy) q̃ and k̃ are (x − c)/h, and for
// softmax the same weight reads exp(|k̃|²/2 + b_k) · exp(−|q̃ − k̃|²/2): a key weight times a Gaussian kernel.
struct HeadData {
  int64_t I = 0, J = 0, d = 0;
  std::vector<double> q, k;  // I×d, J×d
  std::vector<double> bias;  // J: b_k (softmax and gaussian; 0 otherwise)
  ConstMatrix values;        // J × D, this head's value columns
};

HeadData head_data(const Problem& p, int32_t head);

// Checks shared by both methods: check(p, true), only the causal mask, a tolerance in (0, 1), count >= 0.
Status check_approx(const Problem& p, const ApproxOptions& o);

// max − min over every value (1 when they are all equal: errors are then absolute).
double value_range(const Problem& p);

// Rows i of head `head` computed exactly by the streaming engine (causal: over keys 0..min(i, J−1)); out is
// rows.size() × D/H doubles.
Result exact_attention_rows(const Problem& p, int32_t head, const std::vector<int64_t>& rows, double* out);

// Up to `count` distinct query rows in increasing order, drawn uniformly from I by a seeded stream.
std::vector<int64_t> sample_rows(int64_t I, int64_t count, uint64_t seed, uint64_t stream);

}  // namespace ka
