#include "methods/grid/grid.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "methods/grid/fft.h"
#include "engine/local_solve.h"
#include "engine/online_softmax.h"
#include "base/scratch.h"
#include "base/simd.h"

namespace ka {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// How many bandwidths away a kernel's weight falls below 1e-13 of its peak (the taps stop there); 0 for Cauchy,
// whose tail never does (its taps span the whole grid).
double reach_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::Gaussian: return 7.8;
    case KernelKind::Laplacian: return 30.0;
    case KernelKind::Cauchy: return 0.0;
    default: return 1.0;  // compact kernels
  }
}

// The cost of convolving `rows` rows of `nodes` bins by 2L + 1 taps, in multiply-adds (the unit of the direct
// sum's inner loop, about 1 ns natively): directly, nodes·(2L + 1) per row (each bin meets each tap once); by FFT,
// per pair of rows (one complex transform: rows a and b as its real and imaginary parts, fft.h) a forward and an
// inverse transform of N = the power of two ≥ nodes + 2L points, and once per call the filter's transform.
// Measured natively (g++ 12 -O3 -mavx2, fft.cpp against convolve's loop, a timing driver, 2026-12-03): a row pair
// costs 2.3–5.3 multiply-adds per N·log₂N (≈ 3.5 typical; the most at 16,384+ nodes with few taps, where the
// direct loop wins anyway) and the filter's transform about 1.5. The crossover is then near L ≈ 20 taps a side at
// 64–4,096 nodes (at 1,024 nodes: L = 32 gave 42.7 µs a row directly against 20.6 µs a row by FFT; L = 8, 7.1
// against 18.8): a Gaussian grid at tolerance 1e-3 (L ≈ 71) and any Laplacian one run by FFT, compact kernels
// (L ≈ 9) directly.
constexpr double kFftPairCost = 3.5, kFftFilterCost = 1.5;
double direct_cost(double rows, double nodes, double L) { return rows * nodes * (2 * L + 1); }
double fft_cost(double rows, double nodes, double L) {
  const double n = double(convolution_size(int64_t(nodes), 2 * int64_t(L) + 1));
  return (kFftPairCost * std::ceil(rows / 2) + kFftFilterCost) * n * std::log2(n);
}
bool fft_pays(double rows, double nodes, double L) { return fft_cost(rows, nodes, L) < direct_cost(rows, nodes, L); }

// Whether the convolutions on `nodes` nodes per axis (spacing `step`, bandwidth h along that axis) cost less than
// the exact fit of the sample at itself: per channel, the cheaper of the direct sum and the FFT for each pass (a
// 2-D grid's first pass has `nodes` rows, its second the first's nodes + 2L outputs), L the kernel's reach in
// nodes, against n² pairs, each of which costs an exp and the same sums per channel (kExactPairTaps taps' worth:
// the exact engine's float32 SIMD pair costs about what a double tap does, ~1 ns). A kernel wide against a fine
// grid on a few thousand points can cost more on the grid, even by FFT: a 2-D Laplacian grid of 193² nodes for
// 2,000 points took 16 ms (local-linear 134 ms) where the exact fit takes 4 (6.4) before the second pass was counted
// and this was 4.
constexpr double kExactPairTaps = 1;
bool grid_pays(KernelKind kind, int64_t nodes, int64_t dims, double h, double step, int64_t n) {
  const double taps = std::min(double(nodes), std::ceil(reach_of(kind) * h / step));
  const auto pass = [&](double rows) {
    return std::min(direct_cost(rows, double(nodes), taps), fft_cost(rows, double(nodes), taps));
  };
  const double cost = dims == 2 ? pass(double(nodes)) + pass(double(nodes) + 2 * taps) : pass(1);
  return cost <= kExactPairTaps * double(n) * double(n);
}

// The weights the grid serves a row with must carry at least this share of the sample's total weight; below it
// (a query beyond the data, an isolated point in leave-one-out) the row is computed exactly. The direct sums round
// relative to a row's own terms. An FFT rounds relative to the largest output of the whole line it transforms,
// at every node, empty ones too: about 1e-16·log₂N of it (measured up to 2e-15 of Σ|bins|·max|tap| at N = 8,192),
// and the moments' largest outputs are at most the total weight (the taps peak at K(0) = 1). A served row's S₀ then
// rounds by at most ~2e-5 of itself (typically far less: the errors of a transform add like a random walk), as do
// its T's relative to max |y| (hence Nadaraya–Watson's fit). A negative or NaN S₀ (FFT noise where there is no
// weight) fails the same test. Local-linear amplifies its moments' errors up to 1/kPivotFloor = 100 times
// (local_fit.h): by FFT it asks 100 times the share for the same bound. Rows below 1e-8 of the total are those with
// hardly a neighbour within a few bandwidths, so few of them run exactly (at 10⁷ points: S₀ < 0.1).
constexpr double kServedShare = 1e-10;
double served_share(bool by_fft, bool linear) { return by_fft && linear ? kServedShare / kPivotFloor : kServedShare; }

// Beyond the data, local-linear extrapolates: its slope, read from moments the binning and the interpolation
// between nodes perturb by O((spacing/h)²), is multiplied by the distance to the keys' centre of weight. Per axis,
// (1 + |ū|)/var(u) over the row's weights measures that amplification (u in bandwidths; ū = S₁/S₀, var(u) =
// S₂/S₀ − ū²): about 1 in the middle of the data, about 5 at its edge (a Gaussian's half window), and growing fast
// beyond it. Rows outside the box above kEdgeAmplification, a little above the edge's, run exactly: outside, the grid
// serves no row worse conditioned than those it serves inside. Measured (Gaussian, tolerance 1e-3; grid_test.cpp,
// grid.test.mjs): served at 0.14 h and 0.49 h out (amplification 5.7 and 7.9), rows erred 1e-3 and 1.9e-3 of range(y)
// on 6,000 points, against 4e-4 for rows inside at the edge. The Laplacian's rows too (their moments shifted from the
// box: the slope's error times the distance, 1.5e-3 of range(y) 6.7 h out on those points).
constexpr double kEdgeAmplification = 5.5;
double edge_amplification(const double* S, int64_t dims, double s0) {
  double worst = 0;
  for (int64_t d = 0; d < dims; ++d) {
    const double mean = S[1 + d] / s0, second = S[dims == 2 ? 3 + 2 * d : 2] / s0;  // kPowers: u_d, then u_d²
    const double var = second - mean * mean;
    worst = std::max(worst, var > 0 ? (1 + std::fabs(mean)) / var : std::numeric_limits<double>::infinity());
  }
  return worst;
}

// The binning, sorting and per-point passes run over blocks of this many points or cells, each a call of its own:
// under WebAssembly, V8 optimises a function only between calls (simd::keep_out_of_line).
constexpr int64_t kBlock = int64_t(1) << 16;

// The smallest and largest entries of column d of keys [first, end) into *lo and *hi (which hold those of the
// entries before), and *finite false if any is NaN or infinite.
void column_range(ConstMatrix keys, int64_t d, int64_t first, int64_t end, float* lo, float* hi, bool* finite) {
  float l = *lo, h = *hi, check = 0;
  for (int64_t j = first; j < end; ++j) {
    const float x = keys.row(j)[d];
    l = std::min(l, x);
    h = std::max(h, x);
    check += x - x;  // NaN for a NaN or infinite x, and then for the sum
  }
  *lo = l;
  *hi = h;
  *finite = *finite && check == 0;
}

// Linear binning of points [first, end) of a 1-D sample on the axis from lo, step apart (nodes of them), without
// Σω² (a fit or a CV score needs none): each point's weight and ω·y go to the two nodes around it, in proportion to
// its distance to them. Width 0: any number of value columns, else exactly that many (a constant).
template <int64_t Width>
void bin_line(double lo, double step, int64_t nodes, ConstMatrix keys, ConstMatrix values, const float* omega,
              int64_t first, int64_t end, double* count, double* sums) {
  const int64_t width = Width ? Width : values.cols, last = nodes - 2;
  const double scale = 1.0 / step;
  for (int64_t j = first; j < end; ++j) {
    const double t = (double(keys.row(j)[0]) - lo) * scale;  // ≥ 0: lo is the smallest key
    const int64_t g = std::min(last, int64_t(t));
    const double right = t - double(g), w = omega ? double(omega[j]) : 1.0;
    count[g] += w * (1 - right);
    count[g + 1] += w * right;
    const float* y = values.row(j);
    for (int64_t c = 0; c < width; ++c) {
      const double wy = w * double(y[c]);
      sums[g * width + c] += wy * (1 - right);
      sums[(g + 1) * width + c] += wy * right;
    }
  }
}

// Runs local_fit on a subset of the queries (`rows`, `count` of them), writing row r's outputs into entry r of
// `into` (count rows; any pointer but mean.data may be null). With leave-one-out, each row runs alone with its own
// key masked by key padding.
Result fit_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& into) {
  const Problem& p = f.problem;
  const int64_t dims = p.queries.cols, width = p.values.cols;
  const bool loo = p.masks.leave_one_out;
  Scratch<float> q(count * dims);
  Scratch<uint8_t> padding(loo ? p.keys.rows : 0);
  if (!q.ok() || !padding.ok()) return {Status::OutOfMemory};
  for (int64_t r = 0; r < count; ++r)
    std::copy(p.queries.row(rows[r]), p.queries.row(rows[r]) + dims, q.get() + r * dims);
  Fit sub = f;
  sub.problem.masks.leave_one_out = false;
  const auto at = [](auto* v, int64_t first) { return v ? v + first : nullptr; };
  const auto run = [&](int64_t first, int64_t n) {
    sub.problem.queries = {q.get() + first * dims, n, dims, dims};
    return local_fit(
        sub, FitOut{Matrix{into.mean.row(first), n, width, into.mean.stride}, at(into.sum_sq_weights, first), nullptr,
                    at(into.effective_keys, first), at(into.log_denominator, first), at(into.guarded, first)});
  };
  if (loo) {
    std::fill(padding.get(), padding.get() + p.keys.rows, uint8_t(0));
    sub.problem.masks.key_padding = padding.get();
    for (int64_t r = 0; r < count; ++r) {
      padding.get()[rows[r]] = 1;
      Result res = run(r, 1);
      padding.get()[rows[r]] = 0;
      if (res.status != Status::Ok) return {res.status, res.status == Status::EmptyRow ? rows[r] : -1, 0};
    }
    return {};
  }
  const Result res = run(0, count);
  if (res.status != Status::Ok) return {res.status, res.row >= 0 ? rows[res.row] : -1, 0};
  return {};
}

// fit_rows, with each row's outputs written in its own place in `out`.
Result exact_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out) {
  const int64_t width = f.problem.values.cols;
  Scratch<float> mean(count * width);
  Scratch<double> sum_sq(count), eff(count), logden(count);
  Scratch<uint8_t> guarded(count);
  if (!mean.ok() || !sum_sq.ok() || !eff.ok() || !logden.ok() || !guarded.ok()) return {Status::OutOfMemory};
  std::fill(guarded.get(), guarded.get() + count, uint8_t(0));
  const Result r = fit_rows(
      f, rows, count,
      {Matrix{mean.get(), count, width, width}, sum_sq.get(), nullptr, eff.get(), logden.get(), guarded.get()});
  if (r.status != Status::Ok) return r;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = rows[k];
    std::copy(mean.get() + k * width, mean.get() + (k + 1) * width, out.mean.row(i));
    if (out.sum_sq_weights) out.sum_sq_weights[i] = sum_sq.get()[k];
    if (out.effective_keys) out.effective_keys[i] = eff.get()[k];
    if (out.log_denominator) out.log_denominator[i] = logden.get()[k];
    if (out.guarded) out.guarded[i] = guarded.get()[k];
  }
  return {};
}

// The keys at the two ends of a 1-D sample (those equal to its smallest and its largest key), what a row beyond
// every key's reach reads: count and Σy (the Nearest policy's mean), Σω, Σω², Σω·y (the far limit of an infinite
// kernel), per end. One comparison pass over the keys, run only when such a row exists.
struct EdgeKeys {
  double count = 0, weight = 0, weight_sq = 0;
  Scratch<double> sum, weighted;  // width entries each: Σy, Σω·y
};
Status gather_edges(const Fit& f, float lo, float hi, EdgeKeys* low, EdgeKeys* high) {
  const Problem& p = f.problem;
  const int64_t width = p.values.cols;
  for (EdgeKeys* e : {low, high}) {
    if (!e->sum.reset_zeroed(width) || !e->weighted.reset_zeroed(width)) return Status::OutOfMemory;
  }
  for (int64_t j = 0; j < p.keys.rows; ++j) {
    const float x = p.keys.row(j)[0];
    if (x != lo && x != hi) continue;
    const double w = f.observation_weights ? double(f.observation_weights[j]) : 1.0;
    for (EdgeKeys* e : {low, high}) {
      if (x != (e == low ? lo : hi)) continue;
      e->count += 1;
      e->weight += w;
      e->weight_sq += w * w;
      for (int64_t c = 0; c < width; ++c) {
        e->sum.get()[c] += double(p.values.row(j)[c]);
        e->weighted.get()[c] += w * double(p.values.row(j)[c]);
      }
    }
  }
  return Status::Ok;
}

// The keys within `reach` of one end of a 1-D sample, sorted by their distance t behind it (ties at the end first):
// what the exact fit of a Gaussian row beyond that end reads (grid_local_fit's far rows). One pass over the keys,
// then a sort of those found.
struct EndKeys {
  int64_t count = 0;
  Scratch<double> behind;  // t_j ascending
  Scratch<float> x, y, w;  // keys, their values (width each) and ω, in that order
};
Status gather_end(const Fit& f, double end, bool low, double reach, EndKeys* e) {
  const Problem& p = f.problem;
  const int64_t n = p.keys.rows, width = p.values.cols;
  const auto behind = [&](int64_t j) { return low ? double(p.keys.row(j)[0]) - end : end - double(p.keys.row(j)[0]); };
  int64_t k = 0;
  for (int64_t j = 0; j < n; ++j) k += behind(j) <= reach;
  struct Found {
    double t;
    int64_t j;
  };
  Scratch<Found> found(k);
  if (!found.ok() || !e->behind.reset_zeroed(k) || !e->x.reset_zeroed(k) || !e->y.reset_zeroed(k * width) ||
      !e->w.reset_zeroed(k))
    return Status::OutOfMemory;
  for (int64_t j = 0, r = 0; j < n; ++j)
    if (behind(j) <= reach) found.get()[r++] = {behind(j), j};
  std::sort(found.get(), found.get() + k,
            [](const Found& a, const Found& b) { return a.t < b.t || (a.t == b.t && a.j < b.j); });
  for (int64_t r = 0; r < k; ++r) {
    const int64_t j = found.get()[r].j;
    e->behind.get()[r] = found.get()[r].t;
    e->x.get()[r] = p.keys.row(j)[0];
    std::copy(p.values.row(j), p.values.row(j) + width, e->y.get() + r * width);
    e->w.get()[r] = f.observation_weights ? f.observation_weights[j] : 1.0f;
  }
  e->count = k;
  return Status::Ok;
}

}  // namespace

int64_t grid_nodes(double range, double h, double tolerance) {
  if (!(h > 0) || !(tolerance > 0)) return 0;
  const double spacing = h * std::sqrt(12 * tolerance);
  const double nodes = std::ceil(range / spacing) + 1;
  if (!(nodes <= double(kMaxGridNodes))) return 0;
  return std::max<int64_t>(64, int64_t(nodes));
}

int64_t grid_nodes(ConstMatrix x, KernelKind kind, const float* h, double tolerance) {
  const int64_t dims = x.cols;
  if (!(tolerance > 0) || dims < 1 || dims > kMaxGridDims || x.rows < 2 || kind == KernelKind::Cauchy ||
      kind == KernelKind::Softmax || !h)
    return 0;
  int64_t nodes = 0;
  double range[kMaxGridDims] = {0, 0};
  for (int64_t d = 0; d < dims; ++d) {
    float lo = x.row(0)[d], hi = lo;
    for (int64_t i = 1; i < x.rows; ++i) {
      lo = std::min(lo, x.row(i)[d]);
      hi = std::max(hi, x.row(i)[d]);
    }
    range[d] = double(hi) - double(lo);
    const int64_t axis = grid_nodes(range[d], double(h[d]), tolerance);
    if (axis == 0) return 0;
    nodes = std::max(nodes, axis);
  }
  if (dims == 2 && nodes * nodes > kMaxGridNodes) return 0;
  // Every axis, a flat one too: grid_local_fit spaces its nodes by h (and convolves them) when all points share
  // that coordinate, which a 64² grid of 30 taps a side did for 6 points, thousands of times in a search.
  for (int64_t d = 0; d < dims; ++d) {
    const double step = range[d] > 0 ? range[d] / double(nodes - 1) : double(h[d]);
    if (!grid_pays(kind, nodes, dims, double(h[d]), step, x.rows)) return 0;
  }
  return nodes;
}

namespace {

// One axis of the grid: input nodes at lo + g·step (g < nodes), output nodes extended by the kernel's reach of L
// taps on each side (E = nodes + 2L), offsets measured in bandwidths, u = m·step/h; `fft`: convolve runs this
// axis's pass by FFT (fft_pays for the rows it has).
struct Axis {
  double lo = 0, hi = 0, step = 1, h = 1;
  int64_t nodes = 1, L = 0, E = 1;
  bool fft = false;
  bool capped = false;  // L was cut to `nodes`: the taps span the box, not the kernel's reach
};

// The 1-D profile of a product kernel of bandwidth h at an offset (rounded to float32, as the exact engine sees it).
double kernel_weight(KernelKind kind, float h, double offset) {
  const float zero = 0.0f, at = float(offset);
  const KernelSpec unit{kind, 1.0, &h};
  return std::exp(log_score<double>(unit, &at, &zero, 1));
}

// A monomial u₁^a · u₂^b of the offsets between a sample point and an output node.
struct Power {
  int a, b;
};
// Degree 0, then 1, then 2 (the 2-D list; a 1-D grid uses the entries with b = 0).
constexpr Power kPowers[] = {{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}, {0, 2}};

// Moments Σ w·u₁ᵃ·u₂ᵇ (`count` of them, in kPowers order; 1-D: b = 0) about a point c, turned into those about
// q = c − δ·h: the offsets become u + δ, so each is Σ over i ≤ a, j ≤ b of C(a, i)·C(b, j)·δ₁^(a−i)·δ₂^(b−j) times the
// moment of power (i, j). Powers are at most 2, so the binomial coefficients are 1 or 2.
void shift_moments(double* v, int64_t count, int64_t dims, const double* delta) {
  const auto power = [&](int64_t k) { return dims == 2 ? kPowers[k] : Power{int(k), 0}; };
  const auto index = [&](int a, int b) {
    for (int64_t k = 0; k < count; ++k)
      if (power(k).a == a && power(k).b == b) return k;
    return int64_t(-1);
  };
  double old[6];
  std::copy(v, v + count, old);
  for (int64_t k = 0; k < count; ++k) {
    const Power pw = power(k);
    double acc = 0;
    for (int i = 0; i <= pw.a; ++i)
      for (int j = 0; j <= pw.b; ++j) {
        const double c = (pw.a == 2 && i == 1 ? 2 : 1) * (pw.b == 2 && j == 1 ? 2 : 1);
        acc += c * std::pow(delta[0], pw.a - i) * std::pow(delta[1], pw.b - j) * old[index(i, j)];
      }
    v[k] = acc;
  }
}

// What convolve needs for the passes it runs by FFT, kept from call to call of one fit or score: the twiddles
// (planned for the largest transform so far), a filter's spectrum and work buffers, and the reversed taps.
struct FftWork {
  Fft fft;
  RowConvolution rows;
  Scratch<double> reversed;
  int64_t reversed_room = 0;

  // Prepares rows for lines of `nodes` bins by these 2L + 1 taps. convolve correlates (out[e] reads
  // in[e − L + m]·tap[L + m]); the FFT convolves, so it takes the taps reversed (K(u)·uᵃ is odd for odd a).
  Status prepare(const double* tap, int64_t L, int64_t nodes) {
    const int64_t taps = 2 * L + 1;
    if (taps > reversed_room) {
      if (!reversed.reset_zeroed(taps)) return Status::OutOfMemory;
      reversed_room = taps;
    }
    std::reverse_copy(tap, tap + taps, reversed.get());
    if (const Status st = fft.plan(convolution_size(nodes, taps)); st != Status::Ok) return st;
    return rows.prepare(fft, reversed.get(), taps, nodes);
  }
};

// out[(e₁ + E₁·e₂)·stride] = Σ_m₁ Σ_m₂ tap1[m₁] tap2[m₂] in[(e₁ − L₁ + m₁) + G₁·(e₂ − L₂ + m₂)]: the separable
// convolution of a binned array with a product kernel's taps, axis 1 then axis 2 (`across`, E₁ × G₂, holds the
// first pass), each pass directly or by FFT as its Axis says (FFT rows in pairs; axis 2's columns read `across` with
// stride E₁ and write `out` with stride E₁·stride). A 1-D grid has an axis 2 of one node and no taps; there, a
// second array in_b (may be null) is convolved by the same taps into out_b, in the same transforms.
Status convolve(const double* in, const Axis& x1, const Axis& x2, const double* tap1, const double* tap2,
                double* across, double* out, int64_t stride, FftWork* work, const double* in_b = nullptr,
                double* out_b = nullptr) {
  const bool flat = x2.nodes == 1 && x2.L == 0;
  if (flat && x1.fft) {  // 1-D: straight into out, in and in_b as one complex line (tap2 is the single 1)
    if (const Status st = work->prepare(tap1, x1.L, x1.nodes); st != Status::Ok) return st;
    work->rows.apply(in, in_b, 1, out, out_b, stride);
    return Status::Ok;
  }
  if (in_b) {
    if (const Status st = convolve(in_b, x1, x2, tap1, tap2, across, out_b, stride, work); st != Status::Ok) return st;
  }
  if (x1.fft) {
    if (const Status st = work->prepare(tap1, x1.L, x1.nodes); st != Status::Ok) return st;
    for (int64_t g2 = 0; g2 < x2.nodes; g2 += 2) {
      const bool pair = g2 + 1 < x2.nodes;
      work->rows.apply(in + x1.nodes * g2, pair ? in + x1.nodes * (g2 + 1) : nullptr, 1, across + x1.E * g2,
                       pair ? across + x1.E * (g2 + 1) : nullptr, 1);
    }
  } else {
    for (int64_t g2 = 0; g2 < x2.nodes; ++g2)
      for (int64_t e = 0; e < x1.E; ++e) {
        const int64_t m_lo = std::max(-x1.L, x1.L - e), m_hi = std::min(x1.L, x1.nodes - 1 - e + x1.L);
        double acc = 0;
        for (int64_t m = m_lo; m <= m_hi; ++m) acc += tap1[m + x1.L] * in[e - x1.L + m + x1.nodes * g2];
        across[e + x1.E * g2] = acc;
      }
  }
  if (x2.fft) {
    if (const Status st = work->prepare(tap2, x2.L, x2.nodes); st != Status::Ok) return st;
    for (int64_t e1 = 0; e1 < x1.E; e1 += 2) {
      const bool pair = e1 + 1 < x1.E;
      work->rows.apply(across + e1, pair ? across + e1 + 1 : nullptr, x1.E, out + e1 * stride,
                       pair ? out + (e1 + 1) * stride : nullptr, x1.E * stride);
    }
    return Status::Ok;
  }
  for (int64_t e2 = 0; e2 < x2.E; ++e2) {
    const int64_t m_lo = std::max(-x2.L, x2.L - e2), m_hi = std::min(x2.L, x2.nodes - 1 - e2 + x2.L);
    for (int64_t e1 = 0; e1 < x1.E; ++e1) {
      double acc = 0;
      for (int64_t m = m_lo; m <= m_hi; ++m) acc += tap2[m + x2.L] * across[e1 + x1.E * (e2 - x2.L + m)];
      out[(e1 + x1.E * e2) * stride] = acc;
    }
  }
  return Status::Ok;
}

}  // namespace

Result grid_local_fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate, int64_t* exact_rows_out,
                      int64_t* range_rows_out) {
  if (range_rows_out) *range_rows_out = 0;
  const Problem& p = f.problem;
  if (const Status st = check(p, true); st != Status::Ok) return {st};
  const int64_t n = p.keys.rows, I = p.queries.rows, width = p.values.cols, dims = p.queries.cols;
  const Masks& m = p.masks;
  if (out.self_weight && I != n) return {Status::BadShape};
  if (dims > kMaxGridDims || p.heads != 1 || p.kernel.kind == KernelKind::Softmax ||
      p.kernel.kind == KernelKind::Cauchy || m.causal || m.key_padding || m.general || m.query_groups || nodes < 2 ||
      nodes > kMaxGridNodes || (dims == 2 && nodes * nodes > kMaxGridNodes))
    return {Status::BadArgument};
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return {Status::BadShape};
  const bool linear = f.estimator == Estimator::LocalLinear;
  const int64_t p_cols = linear ? 1 + dims : 1;
  const float* omega = f.observation_weights;
  const auto weight_of = [&](int64_t j) { return omega ? double(omega[j]) : 1.0; };
  for (int64_t j = 0; j < n; ++j)
    if (!(weight_of(j) >= 0) || !std::isfinite(weight_of(j))) return {Status::BadArgument};

  // The axes over the sample's bounding box.
  Axis axis[kMaxGridDims];
  double total = 0;
  for (int64_t d = 0; d < dims; ++d) {
    Axis& a = axis[d];
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    bool finite = true;
    const auto range = simd::keep_out_of_line(&column_range);
    for (int64_t j = 0; j < n; j += kBlock) range(p.keys, d, j, std::min(n, j + kBlock), &lo, &hi, &finite);
    if (!finite) {  // NaN or infinite keys: the exact engine knows what they give
      if (error_estimate) *error_estimate = 0;
      return local_fit(f, out);
    }
    a.lo = lo;
    a.hi = hi;
    a.h = p.kernel.bandwidth[d];
    a.nodes = nodes;
    a.step = a.hi > a.lo ? (a.hi - a.lo) / double(nodes - 1) : a.h;
    const double reach = reach_of(p.kernel.kind);
    // Taps per side, compared in double before converting (h/step can exceed any integer).
    const double span = std::ceil(reach * a.h / a.step);
    a.L = reach > 0 && span < double(nodes) ? int64_t(span) : nodes;
    a.capped = double(a.L) != span;  // in double: span may exceed any integer
    a.E = nodes + 2 * a.L;
  }
  // Which passes run by FFT: axis 1 has G₂ rows (in 1-D, two lines that share taps share a transform), axis 2 E₁.
  if (dims == 2) {
    axis[0].fft = fft_pays(double(axis[1].nodes), double(axis[0].nodes), double(axis[0].L));
    axis[1].fft = fft_pays(double(axis[0].E), double(axis[1].nodes), double(axis[1].L));
  } else {
    axis[0].fft = fft_pays(2, double(axis[0].nodes), double(axis[0].L));
  }
  double total_sq = 0;  // Σω²: the scale of the Σ K²·ω² moments' FFT rounding
  if (omega)
    for (int64_t j = 0; j < n; ++j) {
      total += double(omega[j]);
      total_sq += double(omega[j]) * double(omega[j]);
    }
  else
    total = total_sq = double(n);
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};

  // The moments, node-major: Σ K·ω·uᵏ (S), Σ K²·ω²·uᵏ (B) for the powers up to degree 2 (local-linear) or 0, and
  // Σ K·ω·y·uᵏ (T) for each column up to degree 1 or 0.
  const int64_t powers_2 = linear ? (dims == 2 ? 6 : 3) : 1;
  const int64_t powers_1 = linear ? 1 + dims : 1;
  const auto power_at = [&](int64_t k) { return dims == 2 ? kPowers[k] : Power{int(k), 0}; };
  const int64_t stride = 2 * powers_2 + width * powers_1;
  const int64_t cells = x1.nodes * x2.nodes, out_cells = x1.E * x2.E;
  Scratch<double> count(cells), count_sq(cells), sums(cells * width), columns(cells * width), across(x1.E * x2.nodes);
  Scratch<double> taps(kMaxGridDims * 6 * (std::max(x1.L, x2.L) * 2 + 1));
  Scratch<double> moments(out_cells * stride);
  if (!count.ok() || !count_sq.ok() || !sums.ok() || !columns.ok() || !across.ok() || !taps.ok() || !moments.ok())
    return {Status::OutOfMemory};
  std::fill(count.get(), count.get() + cells, 0.0);
  std::fill(count_sq.get(), count_sq.get() + cells, 0.0);
  // The Σ K²·ω² moments serve only the standard errors and effective keys (not a CV score): skipped otherwise.
  const bool squares = out.sum_sq_weights || out.effective_keys;
  if (!squares) std::fill(moments.get(), moments.get() + out_cells * stride, 0.0);
  std::fill(sums.get(), sums.get() + cells * width, 0.0);

  // Linear binning of ω, ω² and ω·y: each point spreads over the 2 (1-D) or 4 (2-D) nodes around it; in 1-D without
  // ω² by bin_line, in blocks.
  if (dims == 1 && !squares) {
    const auto bin = simd::keep_out_of_line(width == 1 ? &bin_line<1> : &bin_line<0>);
    for (int64_t j = 0; j < n; j += kBlock)
      bin(x1.lo, x1.step, x1.nodes, p.keys, p.values, omega, j, std::min(n, j + kBlock), count.get(), sums.get());
  } else {
    for (int64_t j = 0; j < n; ++j) {
      int64_t g[kMaxGridDims] = {0, 0};
      double frac[kMaxGridDims] = {0, 0};
      for (int64_t d = 0; d < dims; ++d) {
        const double t = (double(p.keys.row(j)[d]) - axis[d].lo) / axis[d].step;
        g[d] = std::min<int64_t>(axis[d].nodes - 2, int64_t(std::floor(t)));
        frac[d] = t - double(g[d]);
      }
      const double w = weight_of(j);
      for (int c2 = 0; c2 < (dims == 2 ? 2 : 1); ++c2)
        for (int c1 = 0; c1 < 2; ++c1) {
          const double share = (c1 ? frac[0] : 1 - frac[0]) * (dims == 2 ? (c2 ? frac[1] : 1 - frac[1]) : 1.0);
          const int64_t cell = (g[0] + c1) + x1.nodes * (g[1] + c2);
          count.get()[cell] += w * share;
          if (squares) count_sq.get()[cell] += w * w * share;
          for (int64_t col = 0; col < width; ++col)
            sums.get()[cell * width + col] += w * double(p.values.row(j)[col]) * share;
        }
    }
  }

  // Taps per axis: K(u)·uᵃ and K(u)²·uᵃ (a = 0, 1, 2) at u = m·step/h, m = −L … L, for the 1-D profile K of
  // the product kernel.
  const int64_t tap_len = std::max(x1.L, x2.L) * 2 + 1;
  const auto tap = [&](int64_t d, bool squared, int a) { return taps.get() + ((d * 2 + squared) * 3 + a) * tap_len; };
  for (int64_t d = 0; d < dims; ++d) {
    for (int64_t m2 = -axis[d].L; m2 <= axis[d].L; ++m2) {
      const double u = double(m2) * axis[d].step / axis[d].h;
      const double k = kernel_weight(p.kernel.kind, float(axis[d].h), double(m2) * axis[d].step);
      for (int a = 0; a < 3; ++a) {
        tap(d, false, a)[m2 + axis[d].L] = k * std::pow(u, a);
        tap(d, true, a)[m2 + axis[d].L] = k * k * std::pow(u, a);
      }
    }
  }
  const double one = 1.0;
  const auto tap2 = [&](bool squared, int b) { return dims == 2 ? tap(1, squared, b) : &one; };
  double* mom = moments.get();
  for (int64_t col = 0; col < width; ++col)
    for (int64_t c = 0; c < cells; ++c) columns.get()[col * cells + c] = sums.get()[c * width + col];
  const auto column = [&](int64_t col) { return columns.get() + col * cells; };
  const auto t_moment = [&](int64_t col, int64_t k) { return mom + 2 * powers_2 + col * powers_1 + k; };
  // Σ K·ω·uᵏ with Σ K·ω·y·uᵏ of column 0 (the same taps: one transform in 1-D), then the other columns in pairs.
  FftWork work;
  for (int64_t k = 0; k < powers_2; ++k) {
    const Power pw = power_at(k);
    const bool pair = k < powers_1 && width > 0;
    if (const Status st = convolve(count.get(), x1, x2, tap(0, false, pw.a), tap2(false, pw.b), across.get(), mom + k,
                                   stride, &work, pair ? column(0) : nullptr, pair ? t_moment(0, k) : nullptr);
        st != Status::Ok)
      return {st};
    if (squares)
      if (const Status st = convolve(count_sq.get(), x1, x2, tap(0, true, pw.a), tap2(true, pw.b), across.get(),
                                     mom + powers_2 + k, stride, &work);
          st != Status::Ok)
        return {st};
  }
  for (int64_t col = 1; col < width; col += 2)
    for (int64_t k = 0; k < powers_1; ++k) {
      const Power pw = power_at(k);
      const bool pair = col + 1 < width;
      if (const Status st =
              convolve(column(col), x1, x2, tap(0, false, pw.a), tap2(false, pw.b), across.get(), t_moment(col, k),
                       stride, &work, pair ? column(col + 1) : nullptr, pair ? t_moment(col + 1, k) : nullptr);
          st != Status::Ok)
        return {st};
    }

  // Each query: interpolated moments, leave-one-out correction, the same solve as the exact fit.
  // The moment of the sum of two powers (for A and B): powers of degree 1 are entries 1 … dims of kPowers.
  const auto product_power = [&](int64_t r, int64_t c) -> int64_t {
    if (r == 0 || c == 0) return r + c;
    if (dims == 1) return 2;
    return r == c ? (r == 1 ? 3 : 5) : 4;
  };
  Scratch<int64_t> exact(I);
  Scratch<double> a(p_cols * p_cols), l(p_cols * p_cols), g(p_cols), interp(stride);
  if (!exact.ok() || !a.ok() || !l.ok() || !g.ok() || !interp.ok()) return {Status::OutOfMemory};
  int64_t exact_count = 0;
  // By FFT, the Σ K²·ω² moments round relative to Σω² (their taps peak at 1), as S's do relative to the total.
  const bool by_fft = x1.fft || x2.fft;
  const double share = served_share(by_fft, linear);
  // Rows outside the sample's box that the grid cannot serve: the far rules after the loop, not an exact pass.
  Scratch<int64_t> far(I);
  if (!far.ok()) return {Status::OutOfMemory};
  int64_t far_count = 0;
  const bool laplacian = p.kernel.kind == KernelKind::Laplacian, compact = is_compact(p.kernel.kind);
  for (int64_t i = 0; i < I; ++i) {
    // The output nodes reach L taps (the kernel's reach) beyond the box on each side, so a query within reach of the
    // data reads its moments there, inside or outside the box alike. The Laplacian reads them at the nearest point c
    // of the box instead: beyond the data, every key's weight along that axis carries the same factor e^{−|q − c|/h},
    // which cancels from the fit, so the moments about q are those about c with the offsets shifted by δ = (c − q)/h
    // (exact at any distance).
    int64_t e[kMaxGridDims] = {0, 0};
    double frac[kMaxGridDims] = {0, 0}, delta[kMaxGridDims] = {0, 0};
    bool inside = true, on_grid = true, finite = true, kink = false;
    for (int64_t d = 0; d < dims; ++d) {
      const double at = p.queries.row(i)[d];
      finite = finite && std::isfinite(at);
      inside = inside && at >= axis[d].lo && at <= axis[d].hi;
      // A compact kernel more than h beyond the box reaches no key, though binning spread the end keys' weight to
      // nodes up to one spacing further out: the empty row (far rules), never the grid.
      const double out_by = std::max(axis[d].lo - at, at - axis[d].hi);
      on_grid = on_grid && !(compact && out_by > axis[d].h);
      // Within 2 spacings of that edge, the keys in reach all sit on the kernel's kink at |u| = 1, where binning
      // and interpolation err to first order in spacing/h (Epanechnikov, 6,000 points, tolerance 1e-3: 3e-3 of
      // range(y) 0.9–0.95 h out, below 8e-4 up to 0.8 h): those rows run exactly (accuracy rule).
      if (compact && out_by > axis[d].h - 2 * axis[d].step) kink = true;
      const double read = laplacian ? std::clamp(at, axis[d].lo, axis[d].hi) : at;
      delta[d] = (read - at) / axis[d].h;
      const double t = (read - axis[d].lo) / axis[d].step + double(axis[d].L);
      on_grid = on_grid && t >= 0 && t <= double(axis[d].E - 1);
      e[d] = on_grid ? std::min<int64_t>(axis[d].E - 2, int64_t(std::floor(t))) : 0;
      frac[d] = t - double(e[d]);
      // Capped taps reach the whole box only from output nodes nodes − 1 … 2L; beyond, keys in reach are missing.
      on_grid = on_grid && (!axis[d].capped || (e[d] >= axis[d].nodes - 1 && e[d] + 1 <= 2 * axis[d].L));
    }
    if (!finite || !on_grid) {  // NaN or infinite queries: the exact engine decides what they give
      (finite && !inside ? far : exact).get()[(finite && !inside ? far_count : exact_count)++] = i;
      continue;
    }
    if (kink) {
      exact.get()[exact_count++] = i;
      continue;
    }
    double* v = interp.get();
    std::fill(v, v + stride, 0.0);
    for (int c2 = 0; c2 < (dims == 2 ? 2 : 1); ++c2)
      for (int c1 = 0; c1 < 2; ++c1) {
        const double share = (c1 ? frac[0] : 1 - frac[0]) * (dims == 2 ? (c2 ? frac[1] : 1 - frac[1]) : 1.0);
        const double* at = mom + ((e[0] + c1) + x1.E * (e[1] + c2)) * stride;
        for (int64_t k = 0; k < stride; ++k) v[k] += share * at[k];
      }
    const double* S = v;
    double* B = v + powers_2;
    double* T = v + 2 * powers_2;
    if (delta[0] != 0 || delta[1] != 0) {
      shift_moments(v, powers_2, dims, delta);
      shift_moments(B, powers_2, dims, delta);
      for (int64_t col = 0; col < width; ++col) shift_moments(T + col * powers_1, powers_1, dims, delta);
    }
    if (m.leave_one_out) {  // the point's own weight K(0)·ω_i = ω_i, at offset u = 0: degree 0 only
      const double w = weight_of(i);
      v[0] -= w;
      B[0] -= w * w;
      for (int64_t col = 0; col < width; ++col) T[col * powers_1] -= w * double(p.values.row(i)[col]);
    }
    const double s0 = S[0], b0 = B[0];
    if (!(s0 > share * total) || (by_fft && squares && !(b0 > share * total_sq))) {
      (inside ? exact : far).get()[(inside ? exact_count : far_count)++] = i;
      continue;
    }
    if (linear && !inside && edge_amplification(S, dims, s0) > kEdgeAmplification) {
      exact.get()[exact_count++] = i;  // an extrapolation that would amplify the grid's errors (accuracy rule)
      continue;
    }
    for (int64_t r = 0; r < p_cols; ++r)
      for (int64_t c = 0; c < p_cols; ++c) a.get()[r * p_cols + c] = S[product_power(r, c)];
    if (p_cols == 1)
      g.get()[0] = 1 / S[0];  // Nadaraya–Watson, inline: once per query, the hot path of grid CV
    else if (first_column_of_inverse(a.get(), p_cols, l.get(), g.get()) && out.guarded)
      out.guarded[i] = 1;
    const double* gg = g.get();
    float* mean = out.mean.row(i);
    for (int64_t col = 0; col < width; ++col) {
      double est = 0;
      for (int64_t r = 0; r < p_cols; ++r) est += gg[r] * T[col * powers_1 + r];
      mean[col] = float(est);
    }
    if (out.sum_sq_weights) {
      double sum_sq = 0;
      for (int64_t r = 0; r < p_cols; ++r)
        for (int64_t c = 0; c < p_cols; ++c) sum_sq += gg[r] * gg[c] * B[product_power(r, c)];
      out.sum_sq_weights[i] = sum_sq > 0 ? sum_sq : b0 / (s0 * s0);  // as in local_fit (local_fit.h)
    }
    if (out.effective_keys) out.effective_keys[i] = s0 * s0 / b0;
    if (out.log_denominator) out.log_denominator[i] = std::log(s0) - std::fabs(delta[0]) - std::fabs(delta[1]);
    // ℓ_i(x_i) = ω_i K(0) gᵀ z_i with z_i = [1, 0, …]: query i is point i, at its own position.
    if (out.self_weight) out.self_weight[i] = m.leave_one_out ? 0.0 : weight_of(i) * gg[0];
  }
  // Rows outside the box the grid does not serve (beyond its output nodes, or with too little weight there).
  // A compact kernel with no key within h along some axis: the empty row, by the policy. In 1-D, the Gaussian at a
  // distance D beyond an end: a key t behind that end weighs r(t) = e^{−t(2D + t)/2h²} relative to the end's keys,
  // so only the keys within t_cut(D) behind it matter, and the exact fit over those alone (the exact engine, both
  // estimators alike) costs O(k) for the k keys there. t_cut is where the mass behind it, at most W·r(t_cut) for the
  // total weight W, falls to ε·ω_end (the end keys' weight, which the kept mass includes): t_cut solves
  // t(2D + t)/2h² = ln(W/(ε·ω_end)). Nadaraya–Watson's mean then moves by at most ε·range(y); local-linear's guard
  // (kPivotFloor) bounds how much its solve amplifies a change of the moments, so ε = kPivotFloor·τ keeps both within
  // the tolerance τ the nodes were sized for (grid_nodes: spacing h·sqrt(12τ)). Where no key but the end's lies within
  // t_cut, the fit is the far limit, the ω-weighted mean of y over the end's keys, in O(1). Keys within the widest
  // t_cut a call needs are gathered and sorted once per end and call. Anything else (2-D, the Nearest policy in 2-D, a
  // compact kernel within h, ends whose keys all have ω = 0) runs exactly.
  const bool gaussian_1d = p.kernel.kind == KernelKind::Gaussian && dims == 1;
  const double tau = (x1.step / x1.h) * (x1.step / x1.h) / 12, eps = kPivotFloor * tau;
  const auto beyond_by = [&](double at) { return at < x1.lo ? x1.lo - at : at - x1.hi; };
  const auto t_cut = [&](double D, double end_weight) {
    const double L = std::log(total / (eps * end_weight));
    if (!(L > 0)) return 0.0;
    const double c = 2 * x1.h * x1.h * L;
    return c / (std::sqrt(D * D + c) + D);  // √(D² + c) − D without cancellation
  };
  double nearest_low = std::numeric_limits<double>::infinity(), nearest_high = nearest_low;  // the smallest D per end
  if (gaussian_1d)
    for (int64_t k = 0; k < far_count; ++k) {
      const double at = p.queries.row(far.get()[k])[0];
      (at < x1.lo ? nearest_low : nearest_high) = std::min(at < x1.lo ? nearest_low : nearest_high, beyond_by(at));
    }
  EdgeKeys low, high;
  EndKeys low_keys, high_keys;
  bool gathered = false;
  int64_t empty_row = -1;  // the first far row that is empty under EmptyPolicy::Error
  int64_t range_count = 0;
  for (int64_t k = 0; k < far_count; ++k) {
    const int64_t i = far.get()[k];
    const float* q = p.queries.row(i);
    bool beyond = false;
    for (int64_t d = 0; d < dims; ++d)
      beyond = beyond || std::max(axis[d].lo - double(q[d]), double(q[d]) - axis[d].hi) > axis[d].h;
    const bool empty = is_compact(p.kernel.kind) && beyond;
    const bool limit = gaussian_1d;
    const bool nearest = empty && p.empty == EmptyPolicy::Nearest;
    if ((!empty && !limit) || (nearest && dims != 1)) {
      exact.get()[exact_count++] = i;
      continue;
    }
    if (!gathered && dims == 1 && (limit || nearest)) {
      if (const Status st = gather_edges(f, float(x1.lo), float(x1.hi), &low, &high); st != Status::Ok) return {st};
      if (limit) {
        if (std::isfinite(nearest_low) && low.weight > 0)
          if (const Status st = gather_end(f, x1.lo, true, t_cut(nearest_low, low.weight), &low_keys); st != Status::Ok)
            return {st};
        if (std::isfinite(nearest_high) && high.weight > 0)
          if (const Status st = gather_end(f, x1.hi, false, t_cut(nearest_high, high.weight), &high_keys);
              st != Status::Ok)
            return {st};
      }
      gathered = true;
    }
    const bool below = double(q[0]) < x1.lo;
    const EdgeKeys& end = below ? low : high;
    float* mean = out.mean.row(i);
    if (out.self_weight) out.self_weight[i] = kNaN;
    if (empty) {
      if (out.sum_sq_weights) out.sum_sq_weights[i] = kNaN;
      if (out.effective_keys) out.effective_keys[i] = 0;
      if (out.log_denominator) out.log_denominator[i] = -std::numeric_limits<double>::infinity();
      const RowOutcome outcome = finalize(empty_state(width), mean, p.empty);
      if (outcome == RowOutcome::Error) {  // reported after the exact rows, so the first empty row is named
        if (empty_row < 0) empty_row = i;
        continue;
      }
      if (outcome == RowOutcome::NeedsNearest)  // the mean of the nearest keys' values, as the exact engine takes it
        for (int64_t col = 0; col < width; ++col) mean[col] = float(end.sum.get()[col] / end.count);
      continue;
    }
    if (!(end.weight > 0)) {
      exact.get()[exact_count++] = i;
      continue;
    }
    const double D = beyond_by(double(q[0]));
    const EndKeys& keys = below ? low_keys : high_keys;
    const int64_t matter =
        std::upper_bound(keys.behind.get(), keys.behind.get() + keys.count, t_cut(D, end.weight)) - keys.behind.get();
    if (double(matter) > end.count) {  // keys behind the end still matter: the exact fit over those
      Fit sub = f;
      sub.problem.queries = {q, 1, 1, p.queries.stride};
      sub.problem.keys = {keys.x.get(), matter, 1, 1};
      sub.problem.values = {keys.y.get(), matter, width, width};
      sub.problem.masks.leave_one_out = false;
      sub.observation_weights = keys.w.get();
      const auto at = [&](auto* v) { return v ? v + i : nullptr; };
      const Result r = local_fit(sub, FitOut{Matrix{mean, 1, width, width}, at(out.sum_sq_weights), nullptr,
                                             at(out.effective_keys), at(out.log_denominator), at(out.guarded)});
      if (r.status != Status::Ok) return {r.status, r.status == Status::EmptyRow ? i : -1, 0};
      ++range_count;
      continue;
    }
    for (int64_t col = 0; col < width; ++col) mean[col] = mean_to_float(end.weighted.get()[col] / end.weight);
    if (out.sum_sq_weights) out.sum_sq_weights[i] = end.weight_sq / (end.weight * end.weight);
    if (out.effective_keys) out.effective_keys[i] = end.weight * end.weight / end.weight_sq;
    const double gap = D / x1.h;
    if (out.log_denominator) out.log_denominator[i] = std::log(end.weight) - gap * gap / 2;
  }
  if (range_rows_out) *range_rows_out = range_count;
  if (exact_rows_out) *exact_rows_out = exact_count;
  if (exact_count) {
    const Result r = exact_rows(f, exact.get(), exact_count, out);
    if (r.status == Status::EmptyRow && empty_row >= 0) return {Status::EmptyRow, std::min(r.row, empty_row), 0};
    if (r.status != Status::Ok) return r;
    if (out.self_weight)  // the exact fit of a single row has no smoother diagonal: such rows count as empty
      for (int64_t k = 0; k < exact_count; ++k) {
        out.self_weight[exact.get()[k]] = kNaN;
        if (out.sum_sq_weights) out.sum_sq_weights[exact.get()[k]] = kNaN;
      }
  }
  if (empty_row >= 0) return {Status::EmptyRow, empty_row, 0};
  if (error_estimate) {
    // Exact fits of up to 64 queries spread through them, against what the grid gave.
    const int64_t probes = std::min<int64_t>(64, I);
    Scratch<int64_t> rows(probes);
    Scratch<float> keep(probes * width);
    if (!rows.ok() || !keep.ok()) return {Status::OutOfMemory};
    for (int64_t r = 0; r < probes; ++r) {
      rows.get()[r] = r * I / probes;
      std::copy(out.mean.row(rows.get()[r]), out.mean.row(rows.get()[r]) + width, keep.get() + r * width);
    }
    double y_lo = std::numeric_limits<double>::infinity(), y_hi = -y_lo;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t col = 0; col < width; ++col) {
        y_lo = std::min(y_lo, double(p.values.row(j)[col]));
        y_hi = std::max(y_hi, double(p.values.row(j)[col]));
      }
    const Result r = exact_rows(f, rows.get(), probes, FitOut{out.mean});
    if (r.status != Status::Ok) return r;
    double worst = 0;
    for (int64_t k = 0; k < probes; ++k)
      for (int64_t col = 0; col < width; ++col) {
        float* cell = out.mean.row(rows.get()[k]) + col;
        const double d = std::fabs(double(*cell) - double(keep.get()[k * width + col]));
        if (d > worst || std::isnan(d)) worst = std::isnan(d) ? worst : d;
        *cell = keep.get()[k * width + col];  // the grid's answer stays the result
      }
    *error_estimate = I ? worst / (y_hi > y_lo ? y_hi - y_lo : 1.0) : 0.0;
  }
  return {};
}

// ---- Leave-one-out CV over a bandwidth search (GridCv) ----

namespace {

// Linear binning on step 2s from linear binning on step s (`cells` coarse cells, 2·cells fine ones), exactly: a
// point φ ∈ [0, 1) of a fine step past node 2j gives f[2j] 1 − φ and f[2j+1] φ, and on the coarse grid, at j + φ/2,
// c[j] 1 − φ/2 and c[j+1] φ/2; past node 2j + 1 likewise. So c[j] = f[2j] + ½(f[2j−1] + f[2j+1]). `c` may be `f`
// (c[j] is written after the last read of f[j]).
void halve_bins(const double* f, int64_t cells, double* c) {
  double before = 0;  // f[2j − 1]
  for (int64_t j = 0; j < cells; ++j) {
    const double after = f[2 * j + 1], at = f[2 * j];
    c[j] = at + 0.5 * (before + after);
    before = after;
  }
  c[cells] = f[2 * cells] + 0.5 * before;
}

// log2 of the cells of the grid GridCv sorts and bins on: kMaxGridNodes cells, so every grid_nodes count fits in a
// grid of 2^k + 1 nodes derived from it (k ≤ kFinestLevel).
constexpr int kFinestLevel = 18;
static_assert(int64_t(1) << kFinestLevel == kMaxGridNodes);

// Rows whose grid moments the leave-one-out subtraction leaves too small are fitted exactly, this many at a time.
constexpr int64_t kExactBatch = 256;

// Where x falls on a grid of `cells` cells from lo, t = (x − lo)·scale nodes along: its cell, and t.
struct Cells {
  double lo, scale;
  int64_t cells;
  double at(float x) const { return (double(x) - lo) * scale; }
  int64_t of(float x) const { return std::min(cells - 1, int64_t(at(x))); }
};

// Counts the points [first, end) with ω > 0 into count[cell + 1].
void count_cells(const Cells& grid, const Fit& f, int64_t first, int64_t end, int64_t* count) {
  const ConstMatrix keys = f.problem.keys;
  const float* omega = f.observation_weights;
  for (int64_t i = first; i < end; ++i)
    if (!omega || omega[i] != 0) ++count[grid.of(keys.row(i)[0]) + 1];
}

// The sorted points: x, y (width per point) and ω (null without observation weights).
struct SortedPoints {
  float* x;
  float* y;
  float* w;
  int64_t width;
  void swap(int64_t a, int64_t b) const {
    std::swap(x[a], x[b]);
    for (int64_t c = 0; c < width; ++c) std::swap(y[a * width + c], y[b * width + c]);
    if (w) std::swap(w[a], w[b]);
  }
};

// Points to move: x_i = x[i·x_stride], y_ic = y[i·y_stride + c], ω_i = w[i] (w null: all ones).
struct Source {
  const float* x;
  int64_t x_stride;
  const float* y;
  int64_t y_stride;
  const float* w;
};

// Moves the points [first, end) of `from` with ω > 0 to `into`, point i to place next[key(x_i)]++. Weighted and
// Width (0: any) are constants, for loops without overhead in the common cases.
template <bool Weighted, int64_t Width, class Key>
void scatter(const Source& from, int64_t first, int64_t end, const Key& key, int64_t* next, const SortedPoints& into) {
  const int64_t width = Width ? Width : into.width;
  const float* x = from.x;
  const float* y = from.y;
  const float* w = from.w;
  const int64_t x_stride = from.x_stride, y_stride = from.y_stride;
  float* to_x = into.x;
  float* to_y = into.y;
  float* to_w = into.w;
  for (int64_t i = first; i < end; ++i) {
    if (Weighted && w[i] == 0) continue;
    const float at = x[i * x_stride];
    const int64_t k = next[key(at)]++;
    to_x[k] = at;
    for (int64_t c = 0; c < width; ++c) to_y[k * width + c] = y[i * y_stride + c];
    if (Weighted) to_w[k] = w[i];
  }
}

template <class Key>
void scatter(const Source& from, int64_t first, int64_t end, const Key& key, int64_t* next, const SortedPoints& into) {
  if (from.w)
    into.width == 1 ? scatter<true, 1>(from, first, end, key, next, into)
                    : scatter<true, 0>(from, first, end, key, next, into);
  else
    into.width == 1 ? scatter<false, 1>(from, first, end, key, next, into)
                    : scatter<false, 0>(from, first, end, key, next, into);
}

// The sort is a radix sort in two steps, each touching few memory pages at a time (a single scatter over tens of
// thousands of cells thrashed the TLB: 50 ns a point at 10⁷): first the points [first, end) with ω > 0 are moved
// to the run of their bucket, a group of 2^`low_bits` cells (next[b]: bucket b's next free place) …
void place_in_buckets(const Cells& grid, int low_bits, const Fit& f, int64_t first, int64_t end, int64_t* next,
                      const SortedPoints& into) {
  const Problem& p = f.problem;
  const Source from{p.keys.data, p.keys.stride, p.values.data, p.values.stride, f.observation_weights};
  const Cells local = grid;
  scatter(
      from, first, end, [&](float x) { return local.of(x) >> low_bits; }, next, into);
}

// … then each bucket, in cache, is sorted by cell (cells [first, end), cell g's run starting at start[g]; `next`
// is scratch for `end − first` cells): through `spare` (room for `room` points) when the bucket fits there, else in
// place, where each swap puts one point in its final place (a chain of dependent steps, several times slower).
void sort_bucket(const Cells& grid, const int64_t* start, int64_t first, int64_t end, int64_t* next,
                 const SortedPoints& points, const SortedPoints& spare, int64_t room) {
  std::copy(start + first, start + end, next);
  const int64_t base = start[first], count = start[end] - base, width = points.width;
  if (count <= room) {
    std::copy(points.x + base, points.x + base + count, spare.x);
    std::copy(points.y + base * width, points.y + (base + count) * width, spare.y);
    if (points.w) std::copy(points.w + base, points.w + base + count, spare.w);
    const Cells local = grid;
    scatter(
        Source{spare.x, 1, spare.y, width, points.w ? spare.w : nullptr}, 0, count,
        [&](float x) { return local.of(x) - first; }, next, points);
    return;
  }
  for (int64_t g = first; g < end; ++g)
    for (int64_t& k = next[g - first]; k < start[g + 1];) {
      const int64_t c = grid.of(points.x[k]);
      if (c == g)
        ++k;
      else
        points.swap(k, next[c - first]++);
    }
}

// A bucket sorted through a spare buffer holds at most this many points (a bucket of clustered data can hold them
// all; it is sorted in place instead).
constexpr int64_t kSpareRoom = int64_t(1) << 17;

// Linear binning of the sorted points of cells [first, end): Σω into bins[0 … cells], Σω·y of column c into
// bins[(1 + c)·(cells + 1) …]; each cell's shares summed before they are added to its two nodes.
void bin_cells(const Cells& grid, const int64_t* start, const float* x, const float* y, const float* w, int64_t width,
               int64_t first, int64_t end, double* bins) {
  const int64_t nodes = grid.cells + 1;
  for (int64_t g = first; g < end; ++g)
    for (int64_t channel = 0; channel <= width; ++channel) {
      double left = 0, right = 0;
      for (int64_t k = start[g]; k < start[g + 1]; ++k) {
        const double r = grid.at(x[k]) - double(g);
        const double v = (w ? double(w[k]) : 1.0) * (channel ? double(y[k * width + channel - 1]) : 1.0);
        left += v * (1 - r);
        right += v * r;
      }
      bins[channel * nodes + g] += left;
      bins[channel * nodes + g + 1] += right;
    }
}

// The sorted points of one cell of the grid being scored and its moments, each a line across the cell:
// moment k = at[k] + u·slope[k] at u = (x − lo)·scale − e ∈ [0, 1] (S_a for a < 1 + 2·Linear, then per column
// T_a for a < 1 + Linear).
struct CellPass {
  const double* at;
  const double* slope;
  double lo, scale, e;
  const float* x;
  const float* y;  // width per point
  const float* w;  // null without observation weights
  int64_t count, width;
  double served_above;  // a point's leave-one-out S₀ must exceed this for the grid to serve it
};

// The local-linear fit T₀/S₀ + q(qT₀ − T₁)/π, q = S₁/S₀, from the moments: first_column_of_inverse for 2 × 2 in
// closed form, with its pivot floor π = max(S₂ − qS₁, kPivotFloor·S₂) and no slope where π is not positive.
// Leave-one-out CV serves only points whose pivot needs no floor (guard_free): the others run exactly, where the
// textbook solve replaces the guard (bandwidth.h).
inline bool guard_free(double s0, double s1, double s2) { return s2 - s1 / s0 * s1 >= kPivotFloor * s2; }
inline double linear_fit(double s0, double s1, double s2, double t0, double t1) {
  const double q = s1 / s0, pivot = std::max(s2 - q * s1, kPivotFloor * s2);
  return t0 / s0 + (pivot > 0 ? q * (q * t0 - t1) / pivot : 0.0);
}

// Adds ω_i Σ_c (y_ic − f_{−i}(x_i)_c)² to *sum over the cell's points, each fit from the moments at x_i less the
// point's own weight ω_i at offset 0, stopping at the first point the grid cannot serve. Returns the points done
// (count, or that point's place). Width 0: any number of columns, else exactly that many (a constant).
template <bool Linear, bool Weighted, int64_t Width>
int64_t cell_residuals(const CellPass& c, double* sum) {
  constexpr int64_t s_count = Linear ? 3 : 1, t_count = Linear ? 2 : 1;
  const int64_t width = Width ? Width : c.width, count = c.count;
  const double* at = c.at;
  const double* slope = c.slope;
  const double lo = c.lo, scale = c.scale, e = c.e, served_above = c.served_above;
  double acc = 0;
  int64_t i = 0;
  for (; i < count; ++i) {
    const double w = Weighted ? double(c.w[i]) : 1.0;
    const double u = (double(c.x[i]) - lo) * scale - e;
    const double s0 = at[0] + u * slope[0] - w;
    if (!(s0 > served_above)) break;
    if (Linear && !guard_free(s0, at[1] + u * slope[1], at[2] + u * slope[2])) break;
    for (int64_t col = 0; col < width; ++col) {
      const int64_t k = s_count + col * t_count;
      const double y = double(c.y[i * width + col]), t0 = at[k] + u * slope[k] - w * y;
      const double fit =
          Linear ? linear_fit(s0, at[1] + u * slope[1], at[2] + u * slope[2], t0, at[k + 1] + u * slope[k + 1])
                 : t0 / s0;
      acc += w * (y - fit) * (y - fit);
    }
  }
  *sum += acc;
  return i;
}

// cell_residuals for one column, several points at a time (batches of doubles), the scalar loop taking over at the
// first batch with a point the grid cannot serve and for the last few points.
template <bool Linear, bool Weighted>
int64_t cell_residuals_batched(const CellPass& c, double* sum) {
  using D = xsimd::batch<double>;
  constexpr int64_t lanes = int64_t(D::size);
  const double* at = c.at;
  const double* slope = c.slope;
  const D lo(c.lo), scale(c.scale), e(c.e), served_above(c.served_above), one(1.0), floor(kPivotFloor), zero(0.0);
  const D s0_at(at[0]), s0_slope(slope[0]), t0_at(at[Linear ? 3 : 1]), t0_slope(slope[Linear ? 3 : 1]);
  const D s1_at(Linear ? at[1] : 0), s1_slope(Linear ? slope[1] : 0), s2_at(Linear ? at[2] : 0),
      s2_slope(Linear ? slope[2] : 0), t1_at(Linear ? at[4] : 0), t1_slope(Linear ? slope[4] : 0);
  D acc(0.0);
  int64_t i = 0;
  for (; i + lanes <= c.count; i += lanes) {
    const D x = D::load_unaligned(c.x + i), y = D::load_unaligned(c.y + i);
    const D w = Weighted ? D::load_unaligned(c.w + i) : one;
    const D u = (x - lo) * scale - e;
    const D s0 = xsimd::fma(u, s0_slope, s0_at) - w;
    if (!xsimd::all(s0 > served_above)) break;
    const D t0 = xsimd::fma(u, t0_slope, t0_at) - w * y;
    D fit;
    if (Linear) {
      const D s1 = xsimd::fma(u, s1_slope, s1_at), s2 = xsimd::fma(u, s2_slope, s2_at);
      const D t1 = xsimd::fma(u, t1_slope, t1_at);
      const D q = s1 / s0, pivot = xsimd::max(s2 - q * s1, floor * s2);
      if (!xsimd::all(s2 - q * s1 >= floor * s2)) break;  // the guard would act: cell_residuals hands it on
      fit = t0 / s0 + xsimd::select(pivot > zero, q * (q * t0 - t1) / pivot, zero);
    } else {
      fit = t0 / s0;
    }
    const D r = y - fit;
    acc = xsimd::fma(w * r, r, acc);
  }
  *sum += xsimd::hadd(acc);
  CellPass rest = c;
  rest.x += i;
  rest.y += i;
  if (Weighted) rest.w += i;
  rest.count -= i;
  return i + cell_residuals<Linear, Weighted, 1>(rest, sum);
}

using CellKernel = int64_t(const CellPass&, double*);

template <bool Linear, bool Weighted>
CellKernel* cell_kernel(int64_t width) {
  return width == 1 ? &cell_residuals_batched<Linear, Weighted> : &cell_residuals<Linear, Weighted, 0>;
}

}  // namespace

GridCv::GridCv(const Fit& f, double tolerance) : fit_(f), tolerance_(tolerance) {
  Problem& p = fit_.problem;
  const Masks& m = p.masks;
  p.kernel.bandwidth = &h_;
  if (!(tolerance > 0) || p.queries.cols != 1 || p.heads != 1 || p.keys.rows < 2 || p.queries.data != p.keys.data ||
      p.queries.rows != p.keys.rows || p.queries.stride != p.keys.stride || m.causal || m.key_padding || m.general ||
      m.query_groups || p.kernel.kind == KernelKind::Cauchy || p.kernel.kind == KernelKind::Softmax ||
      check(p, true) != Status::Ok)
    return;
  const int64_t n = p.keys.rows;
  const float* omega = f.observation_weights;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  bool finite = true;
  const auto range = simd::keep_out_of_line(&column_range);
  for (int64_t j = 0; j < n; j += kBlock) range(p.keys, 0, j, std::min(n, j + kBlock), &lo, &hi, &finite);
  if (!finite) return;  // the exact engine knows what NaN or infinite keys give
  for (int64_t j = 0; j < n; ++j) {
    const double w = omega ? double(omega[j]) : 1.0;
    if (!(w >= 0) || !std::isfinite(w)) return;  // grid_local_fit refuses them (BadArgument)
    total_ += w;
    counted_ += w > 0;
  }
  lo_ = lo;
  range_ = double(hi) - double(lo);
  p.masks.leave_one_out = true;
  p.empty = EmptyPolicy::NaN;
  suits_ = range_ > 0;
}

Result GridCv::sort_and_bin() {
  const Problem& p = fit_.problem;
  const int64_t n = p.keys.rows, width = p.values.cols, cells = int64_t(1) << kFinestLevel;
  const bool weighted = fit_.observation_weights;
  const int low_bits = kFinestLevel - 8;  // 256 buckets
  const int64_t buckets = cells >> low_bits;
  const int64_t room = std::min(counted_, kSpareRoom);
  Scratch<int64_t> next(std::max(buckets, int64_t(1) << low_bits));
  Scratch<float> spare_x(room), spare_y(room * width), spare_w(weighted ? room : 0);
  if (!start_.reset_zeroed(cells + 1) || !next.ok() || !x_.reset_zeroed(counted_) ||
      !y_.reset_zeroed(counted_ * width) || !w_.reset_zeroed(weighted ? counted_ : 0) ||
      !bins_.reset_zeroed((1 + width) * (cells + 1)) || !spare_x.ok() || !spare_y.ok() || !spare_w.ok())
    return {Status::OutOfMemory};
  const Cells grid{lo_, double(cells) / range_, cells};
  const SortedPoints points{x_.get(), y_.get(), w_.get(), width},
      spare{spare_x.get(), spare_y.get(), spare_w.get(), width};
  int64_t* start = start_.get();
  const auto count = simd::keep_out_of_line(&count_cells);
  const auto place = simd::keep_out_of_line(&place_in_buckets);
  const auto sort = simd::keep_out_of_line(&sort_bucket);
  const auto bin = simd::keep_out_of_line(&bin_cells);
  for (int64_t i = 0; i < n; i += kBlock) count(grid, fit_, i, std::min(n, i + kBlock), start);
  for (int64_t g = 0; g < cells; ++g) start[g + 1] += start[g];
  for (int64_t b = 0; b < buckets; ++b) next.get()[b] = start[b << low_bits];
  for (int64_t i = 0; i < n; i += kBlock) place(grid, low_bits, fit_, i, std::min(n, i + kBlock), next.get(), points);
  for (int64_t b = 0; b < buckets; ++b)
    sort(grid, start, b << low_bits, (b + 1) << low_bits, next.get(), points, spare, room);
  for (int64_t g = 0; g < cells; g += kBlock)
    bin(grid, start, x_.get(), y_.get(), w_.get(), width, g, std::min(cells, g + kBlock), bins_.get());
  sorted_ = true;
  return {};
}

Result GridCv::exact_rows_into(const int64_t* sorted, int64_t count, double* sum) {
  if (count == 0 || std::isnan(*sum)) return {};  // a row is already empty: the score is +inf whatever these give
  const Problem& p = fit_.problem;
  const int64_t n = p.keys.rows, width = p.values.cols;
  const float* omega = fit_.observation_weights;
  Scratch<int64_t> rows(count);
  Scratch<float> fits(count * width);
  if (!rows.ok() || !fits.ok()) return {Status::OutOfMemory};
  // The sorted points keep no index into the sample (4 bytes a point saved): each row is the first point with the
  // same x, y and ω, whose leave-one-out fit is the same. The scan costs less than the exact fit of the row.
  const auto same = [](float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); };
  for (int64_t r = 0; r < count; ++r) {
    const int64_t k = sorted[r];
    const float* y = y_.get() + k * width;
    int64_t i = 0;
    while (i < n && !(same(p.keys.row(i)[0], x_.get()[k]) && (!omega || omega[i] == w_.get()[k]) &&
                      std::equal(y, y + width, p.values.row(i), same)))
      ++i;
    rows.get()[r] = i;
  }
  Scratch<uint8_t> guarded(count);
  if (!guarded.ok()) return {Status::OutOfMemory};
  std::fill(guarded.get(), guarded.get() + count, uint8_t(0));
  FitOut into{Matrix{fits.get(), count, width, width}};
  into.guarded = guarded.get();
  const Result r = fit_rows(fit_, rows.get(), count, into);
  if (r.status != Status::Ok) return r;
  const int64_t np = fit_.estimator == Estimator::LocalLinear ? 2 : 1;
  double a[4], z[2];
  Scratch<double> t(np * width), exact(width);
  if (!t.ok() || !exact.ok()) return {Status::OutOfMemory};
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = rows.get()[k];
    const float* fit = fits.get() + k * width;
    // Where the guard acted, the textbook solve (or +inf for a singular design: NaN here), as cv_score_direct.
    const bool textbook = guarded.get()[k] != 0;
    if (textbook && !exact_local_row(fit_.problem, int(np - 1), omega, i, {a, t.get(), z}, exact.get())) {
      *sum = std::numeric_limits<double>::quiet_NaN();
      return {};
    }
    for (int64_t c = 0; c < width; ++c) {
      const double e = double(p.values.row(i)[c]) - (textbook ? exact.get()[c] : double(fit[c]));
      *sum += (omega ? double(omega[i]) : 1.0) * e * e;
    }
  }
  return {};
}

Result GridCv::score(float h, double* score, bool* served) {
  *served = false;
  if (!suits_) return {};
  const int64_t wanted = grid_nodes(range_, double(h), tolerance_);
  if (wanted == 0) return {};  // no grid reaches the tolerance: the caller runs exactly
  int level = 6;               // at least grid_nodes' 64 nodes; more only make the grid more accurate
  while ((int64_t(1) << level) + 1 < wanted) ++level;
  const int64_t cells = int64_t(1) << level;
  if (!grid_pays(fit_.problem.kernel.kind, cells + 1, 1, double(h), range_ / double(cells), counted_)) return {};
  if (!sorted_)
    if (const Result r = sort_and_bin(); r.status != Status::Ok) return r;
  *served = true;
  h_ = h;

  const Problem& p = fit_.problem;
  const int64_t width = p.values.cols, nodes = cells + 1, channels = 1 + width;
  const bool linear = fit_.estimator == Estimator::LocalLinear;
  const int64_t s_count = linear ? 3 : 1, t_count = linear ? 2 : 1, stride = s_count + width * t_count;
  Axis x;
  x.lo = lo_;
  x.hi = lo_ + range_;
  x.step = range_ / double(cells);
  x.h = double(h);
  x.nodes = nodes;
  const double span = std::ceil(reach_of(p.kernel.kind) * x.h / x.step);  // in double: h/step may exceed any integer
  x.L = span < double(nodes) ? int64_t(span) : nodes;
  x.E = nodes + 2 * x.L;
  x.fft = fft_pays(2, double(nodes), double(x.L));  // S_a and T_a of column 0 share a transform

  // The bins at this level: the sorted grid's, or halved from them (the first halving out of place).
  const int64_t fine_nodes = (int64_t(1) << kFinestLevel) + 1, room = level < kFinestLevel ? fine_nodes / 2 + 1 : 0;
  Scratch<double> coarse(channels * room), taps(s_count * (2 * x.L + 1)), across(x.E), moments(x.E * stride),
      slopes(cells * stride);
  if (!coarse.ok() || !taps.ok() || !across.ok() || !moments.ok() || !slopes.ok()) return {Status::OutOfMemory};
  const double* bins = bins_.get();
  int64_t bin_stride = fine_nodes;
  if (level < kFinestLevel) {
    for (int64_t ch = 0; ch < channels; ++ch) {
      double* into = coarse.get() + ch * room;
      halve_bins(bins + ch * fine_nodes, (fine_nodes - 1) / 2, into);
      for (int64_t fine_cells = (fine_nodes - 1) / 2; fine_cells > cells; fine_cells /= 2)
        halve_bins(into, fine_cells / 2, into);
    }
    bins = coarse.get();
    bin_stride = room;
  }

  // Taps K(u)·uᵃ at u = m·step/h, m = −L … L, and the moments S_a (channel Σω) and T_a (channels Σω·y).
  const int64_t tap_len = 2 * x.L + 1;
  for (int64_t m = -x.L; m <= x.L; ++m) {
    const double u = double(m) * x.step / x.h, k = kernel_weight(p.kernel.kind, h, double(m) * x.step);
    for (int64_t a = 0; a < s_count; ++a) taps.get()[a * tap_len + m + x.L] = k * std::pow(u, double(a));
  }
  const double one = 1.0;
  FftWork work;
  const auto t_bins = [&](int64_t c) { return bins + (1 + c) * bin_stride; };
  const auto t_moment = [&](int64_t c, int64_t a) { return moments.get() + s_count + c * t_count + a; };
  for (int64_t a = 0; a < s_count; ++a) {  // S_a with T_a of column 0 (the same taps), then the other columns in pairs
    const bool pair = a < t_count;
    if (const Status st = convolve(bins, x, Axis{}, taps.get() + a * tap_len, &one, across.get(), moments.get() + a,
                                   stride, &work, pair ? t_bins(0) : nullptr, pair ? t_moment(0, a) : nullptr);
        st != Status::Ok)
      return {st};
  }
  for (int64_t c = 1; c < width; c += 2)
    for (int64_t a = 0; a < t_count; ++a) {
      const bool pair = c + 1 < width;
      if (const Status st =
              convolve(t_bins(c), x, Axis{}, taps.get() + a * tap_len, &one, across.get(), t_moment(c, a), stride,
                       &work, pair ? t_bins(c + 1) : nullptr, pair ? t_moment(c + 1, a) : nullptr);
          st != Status::Ok)
        return {st};
    }
  const double* at_node = moments.get() + x.L * stride;  // the sample's nodes: L … L + cells of the output
  for (int64_t k = 0; k < cells * stride; ++k) slopes.get()[k] = at_node[k + stride] - at_node[k];

  // The points, cell by cell (a cell of this grid is a run of the sorted grid's); those the grid cannot serve
  // are fitted exactly, kExactBatch at a time.
  const bool weighted = fit_.observation_weights;
  CellKernel* kernel =
      simd::keep_out_of_line(linear ? (weighted ? cell_kernel<true, true>(width) : cell_kernel<true, false>(width))
                                    : (weighted ? cell_kernel<false, true>(width) : cell_kernel<false, false>(width)));
  const int shift = kFinestLevel - level;
  const int64_t* start = start_.get();
  double sum = 0;
  int64_t pending[kExactBatch], waiting = 0;
  CellPass c{nullptr,
             nullptr,
             lo_,
             double(cells) / range_,
             0,
             nullptr,
             nullptr,
             nullptr,
             0,
             width,
             served_share(x.fft, linear) * total_};
  for (int64_t e = 0; e < cells; ++e) {
    c.at = at_node + e * stride;
    c.slope = slopes.get() + e * stride;
    c.e = double(e);
    for (int64_t k = start[e << shift], end = start[(e + 1) << shift]; k < end;) {
      c.x = x_.get() + k;
      c.y = y_.get() + k * width;
      c.w = weighted ? w_.get() + k : nullptr;
      c.count = end - k;
      k += kernel(c, &sum);
      if (k == end) break;
      pending[waiting++] = k++;  // a point the grid cannot serve
      if (waiting == kExactBatch) {
        if (const Result r = exact_rows_into(pending, waiting, &sum); r.status != Status::Ok) return r;
        waiting = 0;
      }
    }
  }
  if (const Result r = exact_rows_into(pending, waiting, &sum); r.status != Status::Ok) return r;
  *score = std::isnan(sum) || !(total_ > 0) ? std::numeric_limits<double>::infinity() : sum / total_;
  return {};
}

}  // namespace ka
