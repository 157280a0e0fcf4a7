// Attention by positive orthogonal random features (Performer's FAVOR+: Choromanski et al., "Rethinking Attention
// with Performers", ICLR 2021): exp(q̃·k̃) = E_w[φ_w(q̃) φ_w(k̃)] with φ_w(x) = exp(w·x − |x|²/2), w ~ N(0, I), so
//   f(q) ≈ Σ_r φ_r(q̃) Σ_k e^{b_k} φ_r(k̃) v_k / Σ_r φ_r(q̃) Σ_k e^{b_k} φ_r(k̃),
// costing O((I + J)·m·(d + D)) for m features instead of O(I·J·(d + D)). Softmax directly, the Gaussian kernel
// through the key bias b_k = −|k̃|²/2 (approx.h). The directions come in blocks of d orthonormal rows (Gram–Schmidt
// of a Gaussian block), each scaled by the norm of an independent Gaussian d-vector, which keeps every w ~ N(0, I)
// marginally and lowers the variance. Exponents are shifted by their maximum (over keys and features on the key side,
// over features per query), in double. The causal mask is served by prefix sums over the keys.
// The Laplacian and Cauchy kernels take random Fourier features instead (Rahimi & Recht, NIPS 2007): a
// shift-invariant kernel is E_w[cos(w·q̃ + b) cos(w·k̃ + b)]·2 for w drawn from its spectral density and b uniform
// on [0, 2π): for the Laplacian Π exp(−|u_c|), w_c standard Cauchy; for the Cauchy kernel 1/(1 + |u|²), w ~ N(0, 2t·I)
// with t ~ Exp(1). These features are signed, so an estimated denominator can come out ≤ 0: such rows are computed
// exactly (exact_rows), and where the kernel's mass near a query is small against the features' noise the error is
// large; the estimate and the held-out error below report it.
#pragma once
#include <vector>

#include "methods/approx.h"

namespace ka {

// out (I × D) as attention(p, out) would give, approximately. Supports the 'softmax', 'gaussian', 'laplacian' and
// 'cauchy' kernels, heads and the causal mask (any other mask, or another kernel, is BadArgument). With o.count = 0 the
// number of features m comes from o.tolerance: a pilot run with kPilotFeatures gives the error estimate e, and when e >
// tolerance the call reruns with m = kPilotFeatures·(e/tolerance)²·1.2, at most kMaxFeatures; then, when the error
// measured on the held-out queries (below) exceeds twice the tolerance, and while it exceeds the tolerance, m grows the
// same way from it (at least doubling, at most 4 more runs, up to kMaxFeatures, stopping once a run cuts that error by
// less than a tenth: heavy tails fall slower than 1/√m, or not at all), and the run with the smallest held-out error is
// the result. The error estimate is the delta method's: per query and column, se² = m/(m−1) Σ_r (n_r − f̂ z_r)² / (Σ_r
// z_r)², the sample variance of the per-feature numerator and denominator terms (features treated as independent, which
// orthogonal blocks are not: it overestimates), as √(mean se²) / value_range(p); the reported estimate is the larger of
// that and the RMS error measured on up to kHeldOutSample queries drawn by the seed and fitted exactly (the sample
// variance misses heavy tails). Rows whose denominator underflows are computed exactly. The same seed gives the same
// bytes for any thread count; p.threads is not used (one thread).
Result random_features_attention(const Problem& p, const ApproxOptions& o, Matrix out, ApproxReport* report);

constexpr int32_t kPilotFeatures = 64;
constexpr int32_t kMaxFeatures = 8192;
constexpr int64_t kHeldOutSample = 64;
constexpr uint64_t kHeldOutStream = 3000;  // sample_rows' stream for that sample (Nyström's is 2000)

// The m × d feature directions of head `head` under `seed` (exposed for tests: orthogonality within blocks).
std::vector<double> feature_directions(int64_t m, int64_t d, uint64_t seed, int32_t head);

// Frequencies w (m × d) and, for Fourier features, phases (m; empty for FAVOR+'s directions) of one head.
struct Features {
  std::vector<double> w, phase;
};
// The Fourier features of the Laplacian or Cauchy kernel for head `head` under `seed` (exposed for tests).
Features fourier_features(int64_t m, int64_t d, uint64_t seed, int32_t head, KernelKind kind);

}  // namespace ka
