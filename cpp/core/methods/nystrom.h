// Attention by the Nyström method (Williams & Seeger, NIPS 2000; for attention, Xiong et al., "Nyströmformer",
// AAAI 2021): with L landmarks l_a taken from the keys, K(q, k) ≈ K(q, L) W⁻¹ K(L, k), W = K(L, L) + λI, so
//   f(q) ≈ K(q, L) W⁻¹ Σ_k c_k K(L, k) v_k / K(q, L) W⁻¹ Σ_k c_k K(L, k),
// costing O((I + J)·L·(d + D) + L³). It works in approx.h's coordinates: the Gaussian, Laplacian and Cauchy kernels
// of u = q̃ − k̃ with c_k = 1, and softmax as the Gaussian kernel with key weights c_k = exp(|k̃|²/2 + b_k) (shifted by
// their maximum). Landmarks: k-means++ seeding (Arthur & Vassilvitskii 2007) over at most kCandidateKeys keys, or
// uniform without replacement, both seeded. W is factored by Cholesky in double with jitter λ = 1e-9·L, raised ×100
// until the factorisation succeeds.
#pragma once
#include <vector>

#include "methods/approx.h"

namespace ka {

// out (I × D) as attention(p, out) would give, approximately. Kernels 'softmax', 'gaussian', 'laplacian' and
// 'cauchy' (the compact ones are not positive definite: BadArgument), heads and the causal mask (prefix sums of the
// key terms; each query solves with W's factor). The error estimate is measured: up to kHeldOutRows queries drawn
// by the seed are computed exactly by the streaming engine and compared, RMS over them relative to value_range(p).
// With o.count = 0 the landmark count starts at 32 and doubles (at most min(J, kMaxLandmarks)) until that estimate
// is within o.tolerance, each try evaluated on those queries only. A Nyström denominator can be ≤ 0 (the
// approximation is not positive); such rows, and rows where it is mostly cancellation, are computed exactly and
// counted in report->exact_rows. p.threads is not used (one thread).
Result nystrom_attention(const Problem& p, const ApproxOptions& o, Matrix out, ApproxReport* report);

constexpr int32_t kMaxLandmarks = 1024;
constexpr int64_t kHeldOutRows = 64;
constexpr int64_t kCandidateKeys = 4096;

// Landmark key indices of one head (exposed for tests): `count` distinct keys, fewer when the keys have fewer
// distinct points (k-means++). x is J × d.
std::vector<int64_t> choose_landmarks(const std::vector<double>& x, int64_t J, int64_t d, int64_t count,
                                      LandmarkSampling sampling, uint64_t seed, int32_t head);

// In-place Cholesky factor (lower, row-major n × n) of a + λI; false when a pivot is not positive. Exposed for tests.
bool cholesky(std::vector<double>& a, int64_t n, double jitter);

}  // namespace ka
