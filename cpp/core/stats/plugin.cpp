// The direct plug-in bandwidth of Ruppert, Sheather & Wand (1995), as KernSmooth's dpill() computes it (plugin.h).
#include "stats/plugin.h"

#include <algorithm>
#include <cmath>

#include "base/scratch.h"
#include "base/simd.h"
#include "engine/neighbours.h"
#include "stats/plugin_binned.h"
#include "stats/plugin_blocks.h"

namespace ka {
namespace {

constexpr double kPi = 3.14159265358979323846;
// σ̂²_Q (of y', whose largest |y'| is in [1/2, 1)) at or below this is rounding: residuals within 64 ulps of y's
// spread, so the quartics fit exactly.
constexpr double kRoundingVariance = (64 * 2.220446049250313e-16) * (64 * 2.220446049250313e-16);

// v^(1/k) for v > 0 (std::pow links 4 kB into the WebAssembly module; this differs from it by about 1e-16·|log v|).
double root(double v, double k) { return std::exp(std::log(v) / k); }

bool options_valid(const PluginOptions& o) {
  const bool default_range = std::isnan(o.range_lo) && std::isnan(o.range_hi);
  const bool given_range = std::isfinite(o.range_lo) && std::isfinite(o.range_hi) && o.range_lo < o.range_hi;
  return o.max_blocks >= 1 && o.max_blocks <= kMaxPluginBlocks && o.divisor > 0 && std::isfinite(o.divisor) &&
         o.trim >= 0 && o.trim < 0.5 && o.proptrun >= 0 && o.proptrun < 0.5 && o.gridsize >= 2 &&
         (default_range || given_range);
}

// The loops over the sample run over blocks of this many points, each a call of its own: under WebAssembly, V8
// optimises a function only between calls (simd::keep_out_of_line).
constexpr int64_t kBlock = int64_t(1) << 16;

// Whether x and y are finite on [first, end), and x ascending there (from x[first − 1]).
void scan_block(const double* x, const double* y, int64_t first, int64_t end, bool* finite, bool* sorted) {
  double check = 0;  // NaN once any x or y is NaN or infinite
  bool ascending = true;
  for (int64_t j = first; j < end; ++j) {
    check += (x[j] - x[j]) + (y[j] - y[j]);
    ascending = ascending && !(j > 0 && x[j] < x[j - 1]);
  }
  *finite = *finite && check == 0;
  *sorted = *sorted && ascending;
}

// Points [first, end) of the trimmed sample: point i is input point idx[i] (i + offset without idx); y's smallest
// and largest values so far in *lo, *hi.
void gather_block(const double* x, const double* y, const int64_t* idx, int64_t offset, int64_t first, int64_t end,
                  double* xs, double* ys, double* lo, double* hi) {
  double l = *lo, h = *hi;
  for (int64_t i = first; i < end; ++i) {
    const int64_t j = idx ? idx[i + offset] : i + offset;
    xs[i] = x[j];
    ys[i] = y[j];
    l = std::min(l, ys[i]);
    h = std::max(h, ys[i]);
  }
  *lo = l;
  *hi = h;
}

// y' = (y − shift)·scale on [first, end), in place; returns Σ y'² there.
double standardise_block(double* ys, int64_t first, int64_t end, double shift, double scale) {
  double squares = 0;
  for (int64_t i = first; i < end; ++i) {
    ys[i] = (ys[i] - shift) * scale;
    squares += ys[i] * ys[i];
  }
  return squares;
}

// The trimmed sample, sorted by x (ties in input order), with y' = (y − shift)·scale: the shift centres y and the
// scale, a power of two, brings it near 1, so that squares neither overflow nor lose the residuals to y's size.
// The rule's h does not change under either (every step is invariant to a shift of y, and σ̂² and the θ's scale
// alike); σ̂² and the θ's are divided by scale² on the way out.
struct Sample {
  Scratch<double> x, y;
  int64_t n = 0;
  double shift = 0, scale = 1;
  double squares = 0;  // Σ y'²
};

Status prepare(const double* x, const double* y, int64_t n, double trim, bool sorted, Sample* s) {
  Scratch<int64_t> order(sorted ? 0 : n);
  if (!order.ok()) return Status::OutOfMemory;
  if (!sorted) order_by(x, order.get(), n);
  const int64_t cut = int64_t(std::floor(trim * double(n)));
  s->n = n - 2 * cut;
  if (!s->x.reset_zeroed(s->n) || !s->y.reset_zeroed(s->n)) return Status::OutOfMemory;
  double lo = INFINITY, hi = -INFINITY;
  const auto gather = simd::keep_out_of_line(&gather_block);
  for (int64_t i = 0; i < s->n; i += kBlock)
    gather(x, y, order.get(), cut, i, std::min(s->n, i + kBlock), s->x.get(), s->y.get(), &lo, &hi);
  s->shift = lo / 2 + hi / 2;
  const double spread = std::max(hi - s->shift, s->shift - lo);
  int exponent = 0;
  if (spread > 0 && std::isfinite(spread)) std::frexp(spread, &exponent);
  s->scale = std::ldexp(1.0, -exponent);
  const auto standardise = simd::keep_out_of_line(&standardise_block);
  for (int64_t i = 0; i < s->n; i += kBlock)
    s->squares += standardise(s->y.get(), i, std::min(s->n, i + kBlock), s->shift, s->scale);
  return Status::Ok;
}

Status fail(PluginIssue issue, PluginDetail* d) {
  d->issue = issue;
  return Status::BadArgument;
}

// The blocked quartic pilot: N̂ by Cp, then σ̂²_Q and the θ's of N̂'s fits (in y' units) into d.
Status quartic_pilot(const Sample& s, const PluginOptions& o, PluginDetail* d) {
  const double limit = std::floor(double(s.n) / o.divisor);
  d->blocks_limit = std::max(1, int32_t(std::min(limit, double(o.max_blocks))));
  QuarticBlocks fits;
  if (fit_quartic_blocks(s.x.get(), s.y.get(), s.n, d->blocks_limit, &fits) != Status::Ok) return Status::OutOfMemory;
  if (fits.partitions == 0) return fail(PluginIssue::TooFewDistinct, d);
  d->blocks_max = fits.partitions;
  const int32_t blocks = d->blocks = choose_blocks(fits, s.n, d->cp);
  d->sigma2_quartic = fits.rss[blocks - 1] / (double(s.n) - 5.0 * blocks);
  d->theta22_quartic = fits.curvature[blocks - 1] / double(s.n);
  d->theta24_quartic = fits.curvature4[blocks - 1] / double(s.n);
  if (!(d->sigma2_quartic > kRoundingVariance)) return fail(PluginIssue::ExactQuartic, d);
  if (d->theta24_quartic == 0) return fail(PluginIssue::FlatQuartic, d);
  return Status::Ok;
}

// The kernel steps on the bins: γ, θ̂22, λ and σ̂² (y' units) into d.
Status kernel_steps(const Sample& s, const PluginOptions& o, const RegressionBins& bins, PluginDetail* d) {
  const double n = double(s.n), width = bins.hi - bins.lo, sigma2 = d->sigma2_quartic;
  const double theta24 = d->theta24_quartic;
  const double c = theta24 < 0 ? 3 / (8 * std::sqrt(kPi)) : 15 / (16 * std::sqrt(kPi));
  d->gamma = root(c * (sigma2 * width / (std::fabs(theta24) * n)), 7);
  const int64_t margin = int64_t(std::floor(o.proptrun * double(bins.nodes)));
  double curvature = 0;
  const BinnedFit cubic = binned_curvature(bins, d->gamma, margin, bins.nodes - 1 - margin, &curvature);
  if (cubic == BinnedFit::OutOfMemory) return Status::OutOfMemory;
  if (cubic == BinnedFit::Singular) return fail(PluginIssue::SparsePilot, d);
  d->theta22 = curvature / n;
  if (!(d->theta22 > 0)) return fail(PluginIssue::NoCurvature, d);
  const double c3 = root(4 * (0.5 + 2 * std::sqrt(2.0) - 4.0 / 3.0 * std::sqrt(3.0)) / std::sqrt(2 * kPi), 9);
  d->lambda = c3 * root(sigma2 * sigma2 * width / ((d->theta22 * n) * (d->theta22 * n)), 9);
  LinearParts parts;
  const BinnedFit linear = binned_linear_parts(bins, d->lambda, &parts);
  if (linear == BinnedFit::OutOfMemory) return Status::OutOfMemory;
  if (linear == BinnedFit::Singular) return fail(PluginIssue::SparsePilot, d);
  // Σ y'² over the sample, and R's Σ y² − 2 Σ m̂ Y + Σ m̂² c in the unshifted y'' = y' + k: the same but for the
  // points the bins dropped, 2k Σ_dropped y' + k² dropped (zero when none was).
  const double k = s.shift * s.scale;
  const double residual = s.squares + parts.residual + 2 * k * bins.dropped_sum + k * k * double(bins.dropped);
  d->sigma2 = residual / (n - 2 * parts.self + parts.self_squared);
  if (!(d->sigma2 > 0)) return fail(PluginIssue::NoVariance, d);
  return Status::Ok;
}

// The y' quantities of d in y's units.
void unscale(const Sample& s, PluginDetail* d) {
  const double to_y = 1 / (s.scale * s.scale);
  d->sigma2_quartic *= to_y;
  d->theta22_quartic *= to_y;
  d->theta24_quartic *= to_y;
  d->theta22 *= to_y;
  d->sigma2 *= to_y;
}

}  // namespace

Status plugin_bandwidth(const double* x, const double* y, int64_t n, const PluginOptions& o, double* h,
                        PluginDetail* detail) {
  PluginDetail own;
  PluginDetail* d = detail ? detail : &own;
  *d = PluginDetail{};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::fill(d->cp, d->cp + kMaxPluginBlocks, nan);
  d->sigma2_quartic = d->theta22_quartic = d->theta24_quartic = d->gamma = d->theta22 = d->lambda = d->sigma2 = nan;
  if (n < 1 || !x || !y || !h) return Status::BadShape;
  if (!options_valid(o)) return Status::BadArgument;
  bool finite = true, sorted = true;
  const auto scan = simd::keep_out_of_line(&scan_block);
  for (int64_t i = 0; i < n; i += kBlock) scan(x, y, i, std::min(n, i + kBlock), &finite, &sorted);
  if (!finite) return Status::BadArgument;
  Sample s;
  if (prepare(x, y, n, o.trim, sorted, &s) != Status::Ok) return Status::OutOfMemory;
  d->n = s.n;
  if (s.n <= 5) return fail(PluginIssue::TooFewPoints, d);
  const bool given = !std::isnan(o.range_lo);
  d->lo = given ? o.range_lo : s.x.get()[0];
  d->hi = given ? o.range_hi : s.x.get()[s.n - 1];
  Status status = quartic_pilot(s, o, d);
  if (status == Status::Ok) {
    Scratch<double> counts, sums;
    if (!counts.reset_zeroed(o.gridsize) || !sums.reset_zeroed(o.gridsize)) return Status::OutOfMemory;
    RegressionBins bins;
    bins.counts = counts.get();
    bins.sums = sums.get();
    bins.nodes = o.gridsize;
    bins.lo = d->lo;
    bins.hi = d->hi;
    const auto bin = simd::keep_out_of_line(&bin_regression);
    for (int64_t i = 0; i < s.n; i += kBlock)
      bin(s.x.get(), s.y.get(), i, std::min(s.n, i + kBlock), o.truncate, &bins);
    status = kernel_steps(s, o, bins, d);
    if (status == Status::Ok)
      *h = root(d->sigma2 * (bins.hi - bins.lo) / (2 * std::sqrt(kPi) * d->theta22 * double(s.n)), 5);
  }
  unscale(s, d);
  return status;
}

double plugin_kernel_factor(KernelKind kind) {
  // R(K)/μ₂(K)² of the normalised kernels: Laplacian e^(−|u|)/2: (1/4)/2²; Epanechnikov ¾(1 − u²): (3/5)/(1/5)²;
  // tricube (70/81)(1 − |u|³)³: (175/247)/(35/243)²; uniform ½ on [−1, 1]: (1/2)/(1/3)²; Gaussian: 1/(2√π).
  double ratio;
  switch (kind) {
    case KernelKind::Gaussian: return 1;
    case KernelKind::Laplacian: ratio = 1.0 / 16; break;
    case KernelKind::Epanechnikov: ratio = 15; break;
    case KernelKind::Tricube: ratio = (175.0 / 247) / ((35.0 / 243) * (35.0 / 243)); break;
    case KernelKind::Uniform: ratio = 4.5; break;
    default: return std::numeric_limits<double>::quiet_NaN();
  }
  return root(2 * std::sqrt(kPi) * ratio, 5);
}

}  // namespace ka
