// The direct plug-in bandwidth for local-linear regression with a Gaussian kernel, computed as KernSmooth's dpill()
// computes it:
//   Ruppert, D., Sheather, S. J. and Wand, M. P. (1995). An effective bandwidth selector for local least squares
//   regression. Journal of the American Statistical Association 90(432), 1257–1270.
//   Wand, M. P. and Jones, M. C. (1995). Kernel Smoothing. Chapman & Hall, §5.8 (the binned estimates, KernSmooth).
// Its parts: plugin_blocks.h (blocked quartic fits and Mallows' Cp), plugin_binned.h (linear binning and the binned
// local polynomial fits); the formulas are in docs/regression.md, "The plug-in bandwidth".
#pragma once
#include <cstdint>
#include <limits>

#include "base/status.h"
#include "kernel/kernels.h"

namespace ka {

// The most blocks the quartic pilot may use (dpill's blockmax; R's default 5).
constexpr int32_t kMaxPluginBlocks = 32;

// dpill()'s arguments, with its defaults.
struct PluginOptions {
  int32_t max_blocks = 5;  // blockmax, 1 … kMaxPluginBlocks
  double divisor = 20;     // at most ⌊n/divisor⌋ blocks; > 0
  double trim = 0.01;      // ⌊trim·n⌋ points dropped at each end of the sorted x; in [0, 0.5)
  double proptrun = 0.05;  // ⌊proptrun·M⌋ grid nodes left out at each end of θ̂22's sum; in [0, 0.5)
  int32_t gridsize = 401;  // M grid nodes, >= 2
  // range.x: the grid runs from range_lo to range_hi; NaN (both) for the range of the trimmed x.
  double range_lo = std::numeric_limits<double>::quiet_NaN(), range_hi = std::numeric_limits<double>::quiet_NaN();
  bool truncate = true;  // points outside the range: dropped from the bins (true) or added to the end nodes (false)
};

// Why the rule could not be computed from the data (plugin_bandwidth returns BadArgument with one of these).
enum class PluginIssue : int32_t {
  None = 0,
  TooFewPoints,    // after trimming, n <= 5: σ̂² = RSS/(n − 5·blocks) needs n > 5
  TooFewDistinct,  // after trimming, fewer than 5 distinct x: no quartic is determined
  ExactQuartic,    // the blocked quartics fit the data exactly: σ̂²_Q = 0 (residuals within 64 ulps of y's spread)
  FlatQuartic,     // θ̂24 = 0: the pilot bandwidth for θ̂22 is infinite
  SparsePilot,     // a pilot's local fit at a grid node holding data sees fewer grid nodes with data than its degree
                   // + 1 (R: "Binning grid too coarse", or NaN): the pilot bandwidth is too small for the grid
  NoCurvature,     // θ̂22 = 0 (the estimated m'' vanishes on the data): h would be infinite
  NoVariance,      // the kernel estimate of σ² is not positive
};

// What the rule computed on the way (units of x and y; NaN where it stopped before).
struct PluginDetail {
  PluginIssue issue = PluginIssue::None;
  int64_t n = 0;                // points after trimming
  int32_t blocks_limit = 0;     // dpill's Nmax = max(min(⌊n/divisor⌋, blockmax), 1)
  int32_t blocks_max = 0;       // the partitions compared by Cp: Nmax, or fewer where blocks lack 5 distinct x
  int32_t blocks = 0;           // the number of blocks Cp chose (N̂)
  double cp[kMaxPluginBlocks];  // Cp(N) for N = 1 … blocks_max
  double sigma2_quartic = 0;    // σ̂²_Q = RSS(N̂)/(n − 5N̂)
  double theta22_quartic = 0;   // θ̂22_Q = Σ m̂''(x_i)²/n over the blocked quartics (dpill does not use it)
  double theta24_quartic = 0;   // θ̂24_Q = Σ m̂''(x_i) m̂''''(x_i)/n
  double gamma = 0;             // the pilot bandwidth of θ̂22's local cubic
  double theta22 = 0;           // θ̂22, the binned kernel estimate
  double lambda = 0;            // the pilot bandwidth of σ̂²'s local-linear fit
  double sigma2 = 0;            // σ̂², the kernel estimate of the residual variance
  double lo = 0, hi = 0;        // the grid's range
};

// *h = [σ̂² (b − a) / (2√π θ̂22 n)]^(1/5): dpill(x, y) with `options` as its arguments, the standard deviation of the
// Gaussian kernel of the local-linear fit the bandwidth is for. Steps, as dpill takes them: sort (x, y) by x (ties
// in input order), drop ⌊trim·n⌋ points at each end; bin (linear binning, R's rlbin) on M nodes over [a, b]; choose
// the number of blocks N̂ ∈ 1 … Nmax by Mallows' Cp over blocked quartic least-squares fits (blocks of ⌊n/N⌋
// consecutive points, the last taking the rest); from N̂'s fits, σ̂²_Q and θ̂24_Q; the pilot
// γ = [C σ̂²_Q (b − a)/(|θ̂24_Q| n)]^(1/7), C = 3/(8√π) when θ̂24_Q < 0, 15/(16√π) when > 0; θ̂22 = Σ m̂''(g)² c_g/n
// over the nodes g inside proptrun, m̂'' from binned local cubic fits at bandwidth γ; the pilot
// λ = C₃ [σ̂²_Q² (b − a)/(θ̂22 n)²]^(1/9); σ̂² from binned local-linear fits at λ (residuals over the binned degrees
// of freedom n − 2 Σ S_gg c_g + Σ (SSᵀ)_gg c_g). Kernel weights are exp(−u²/2), cut beyond 4 bandwidths.
// Where R's quartic fits lose digits to raw powers of x, these fit each block in its own centred, scaled basis by
// Householder QR: they agree with R's dpill on x − mean(x) to about 1e-10 (docs/regression.md).
// Fallback beyond R: a partition with a block of fewer than 5 distinct x (where R's quartic fit is rank-deficient
// and its output rounding noise) ends the Cp comparison: blocks_max is then the last N before it, as R's dpill with
// blockmax = blocks_max. Grid nodes without data add nothing to θ̂22 or σ̂² (R's 0 · NaN there makes dpill fail).
// x, y: n finite values each, any order, not modified. detail may be null.
// Returns BadShape (n < 1, null x, y or h), BadArgument for options out of range, a non-finite x or y, or data the
// rule cannot use (detail->issue says which; *h untouched), OutOfMemory (scratch: about 6n doubles).
Status plugin_bandwidth(const double* x, const double* y, int64_t n, const PluginOptions& options, double* h,
                        PluginDetail* detail = nullptr);

// What dpill's h (a Gaussian kernel's standard deviation) becomes for a local-linear fit with kernel `kind`: the
// same asymptotically optimal bandwidth, h_K = [R(K) σ² (b − a)/(μ₂(K)² θ22 n)]^(1/5) (Ruppert, Sheather & Wand 1995,
// §2; Fan & Gijbels 1996, §3.2), whose estimates σ̂² and θ̂22 do not depend on K, so h_K = h·[2√π R(K)/μ₂(K)²]^(1/5)
// with R(K) = ∫K² and μ₂(K) = ∫u²K for K normalised to ∫K = 1 in kernels.h's units u = (q − k)/h (Gaussian
// exp(−u²/2): 1). Epanechnikov 2.2138, tricube 2.6098, uniform 1.7401, Laplacian 0.7398; NaN for the Cauchy kernel
// (no finite μ₂) and softmax.
double plugin_kernel_factor(KernelKind kind);

}  // namespace ka
