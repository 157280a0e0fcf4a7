// The grid's convolutions (convolution.h).
#include "methods/grid/convolution.h"

#include <algorithm>
#include <cmath>

#include "base/scratch.h"
#include "base/simd.h"
#include "kernel/kernels.h"

namespace ka {
namespace {

using simd::DoubleBatch;
using simd::kDoubleLanes;

// out[e] = Σ_{m = 0 … taps − 1} tap[m] · in[e + m·stride] for e in [0, count): every output's terms in the order of m,
// from 0, as the scalar loop adds them (the same bits without fused multiply-adds), kDoubleLanes outputs an
// instruction. Stride 1 correlates a line (the row pass); stride E₁ weighs `taps` rows of cells into one, the columns
// side by side (the column pass). Out of line: V8 optimises a WebAssembly function between calls (simd.h,
// keep_out_of_line).
void correlate(const double* in, int64_t stride, const double* tap, int64_t taps, double* out, int64_t count) {
  int64_t e = 0;
  constexpr int64_t kBlock = 4 * kDoubleLanes;  // four independent sums hide the adds' latency
  for (; e + kBlock <= count; e += kBlock) {
    DoubleBatch a0(0.0), a1(0.0), a2(0.0), a3(0.0);
    for (int64_t m = 0; m < taps; ++m) {
      const DoubleBatch t(tap[m]);
      const double* at = in + e + m * stride;
      a0 += t * simd::load(at);
      a1 += t * simd::load(at + kDoubleLanes);
      a2 += t * simd::load(at + 2 * kDoubleLanes);
      a3 += t * simd::load(at + 3 * kDoubleLanes);
    }
    simd::store(out + e, a0);
    simd::store(out + e + kDoubleLanes, a1);
    simd::store(out + e + 2 * kDoubleLanes, a2);
    simd::store(out + e + 3 * kDoubleLanes, a3);
  }
  for (; e < count; ++e) {
    double acc = 0;
    for (int64_t m = 0; m < taps; ++m) acc += tap[m] * in[e + m * stride];
    out[e] = acc;
  }
}

}  // namespace

double kernel_weight(KernelKind kind, float h, double offset) {
  const float zero = 0.0f, at = float(offset);
  const KernelSpec unit{kind, 1.0, &h};
  return std::exp(log_score<double>(unit, &at, &zero, 1));
}

namespace {

// The output nodes e₁ ∈ [from1, to1), e₂ ∈ [from2, to2) a 2-D convolution computes: all of them, or those a query
// inside the box reads (the nodes the axes hold: Axis::held).
struct Window {
  int64_t from1, to1, from2, to2;
};

// The first pass of a 2-D convolution (or the only one of a 1-D one): each of x2.nodes lines of `in` (x1.nodes bins)
// correlated with each of `count` taps tap1[k] into outputs [from, to) of x1.E (all: to < 0) of across[k] (by FFT, each
// pair of lines transformed once for all of them).
Status row_pass(const double* in, const Axis& x1, const Axis& x2, const double* const* tap1, int count,
                double* const* across, FftWork* work, int64_t from = 0, int64_t to = -1) {
  if (to < 0) to = x1.E;
  if (x1.fft) {
    if (const Status st = work->prepare(tap1, count, x1.L, x1.nodes, from, to); st != Status::Ok) return st;
    for (int64_t g2 = 0; g2 < x2.nodes; g2 += 2) {
      const bool pair = g2 + 1 < x2.nodes;
      work->rows.load(in + x1.nodes * g2, pair ? in + x1.nodes * (g2 + 1) : nullptr, 1);
      for (int k = 0; k < count; ++k)
        work->rows.emit(k, across[k] + x1.E * g2, pair ? across[k] + x1.E * (g2 + 1) : nullptr, 1, from, to - from);
    }
    return Status::Ok;
  }
  // Output e reads in[e − 2L … e]: each line with 2L zeros either side, so that the outputs near its ends (a 2-D
  // grid's margins, 2L of its E, which a scalar loop over their partial taps made most of this pass's time) run in
  // the same SIMD loop. A zero adds nothing to a sum that starts at +0, and the other terms come in the same order:
  // the same bits.
  const auto line_pass = simd::keep_out_of_line(&correlate);
  Scratch<double> padded(x1.nodes + 4 * x1.L);
  if (!padded.ok()) return Status::OutOfMemory;
  double* const line = padded.get() + 2 * x1.L;
  std::fill(padded.get(), line, 0.0);
  std::fill(line + x1.nodes, padded.get() + x1.nodes + 4 * x1.L, 0.0);
  for (int64_t g2 = 0; g2 < x2.nodes; ++g2) {
    std::copy(in + x1.nodes * g2, in + x1.nodes * (g2 + 1), line);
    for (int k = 0; k < count; ++k)
      line_pass(padded.get() + from, 1, tap1[k], 2 * x1.L + 1, across[k] + x1.E * g2 + from, to - from);
  }
  return Status::Ok;
}

// One row pass's output (x1.E × x2.nodes, in `across`) and the moments its column passes give: out[k] by tap[k].
struct ColumnJob {
  const double* across = nullptr;
  int count = 0;
  const double* tap[3] = {};
  double* out[3] = {};
};

// The second pass of every job, staged contiguously and then written node by node: a node's moments are
// interleaved, and a pass per moment, writing one entry per node down the columns, had touched a cache line and a page
// per output, once per moment (most of a 2-D score's time at 10⁵ points). By FFT, a pair of columns at a time through
// every job (each column transformed once for all of its taps); directly, a row of outputs at a time, each weighing
// the rows of `across` in reach, all the window's columns at once (SIMD along the row).
Status column_passes(const ColumnJob* jobs, int64_t job_count, const Axis& x1, const Axis& x2, int64_t stride,
                     FftWork* work, const Window& w) {
  constexpr int64_t kMostJobs = 3;
  if (job_count > kMostJobs) return Status::BadArgument;
  // The distinct taps (the K·u₂ᵇ of S or B), and each moment's index among them and its place in the stage.
  const double* bank[RowConvolution::kMaxFilters];
  double* target[kMostJobs * 3];
  int filters = 0, index[kMostJobs * 3], moments = 0;
  for (int64_t j = 0; j < job_count; ++j)
    for (int k = 0; k < jobs[j].count; ++k, ++moments) {
      int f = 0;
      while (f < filters && bank[f] != jobs[j].tap[k]) ++f;
      if (f == filters) {
        if (filters == RowConvolution::kMaxFilters) return Status::BadArgument;
        bank[filters++] = jobs[j].tap[k];
      }
      index[moments] = f;
      target[moments] = jobs[j].out[k];
    }
  const int64_t E1 = x1.E, E2 = x2.E, width = w.to1 - w.from1;
  if (!x2.fft) {
    const auto rows_pass = simd::keep_out_of_line(&correlate);
    Scratch<double> staged(moments * width);  // moment m's row of outputs e₁ ∈ [from1, to1) at m·width
    if (!staged.ok()) return Status::OutOfMemory;
    for (int64_t e2 = w.from2; e2 < w.to2; ++e2) {
      const int64_t m_lo = std::max(-x2.L, x2.L - e2), m_hi = std::min(x2.L, x2.nodes - 1 - e2 + x2.L);
      if (m_hi < m_lo) {
        std::fill(staged.get(), staged.get() + moments * width, 0.0);
      } else {
        for (int64_t j = 0, m = 0; j < job_count; ++j)
          for (int k = 0; k < jobs[j].count; ++k, ++m)
            rows_pass(jobs[j].across + E1 * (e2 - x2.L + m_lo) + w.from1, E1, jobs[j].tap[k] + m_lo + x2.L,
                      m_hi - m_lo + 1, staged.get() + m * width, width);
      }
      for (int64_t e1 = w.from1; e1 < w.to1; ++e1)
        for (int m = 0; m < moments; ++m)
          target[m][held_node(x1, x2, e1, e2) * stride] = staged.get()[m * width + (e1 - w.from1)];
    }
    return Status::Ok;
  }
  if (const Status st = work->prepare(bank, filters, x2.L, x2.nodes, w.from2, w.to2); st != Status::Ok) return st;
  Scratch<double> staged(2 * moments * E2);  // moment m's outputs for the pair's columns at 2m·E₂ and (2m + 1)·E₂
  if (!staged.ok()) return Status::OutOfMemory;
  const double* const stage = staged.get();
  for (int64_t e1 = w.from1; e1 < w.to1; e1 += 2) {  // pairs from an even column (the held window's)
    const bool pair = e1 + 1 < w.to1;
    for (int64_t j = 0, m = 0; j < job_count; ++j) {
      work->rows.load(jobs[j].across + e1, pair ? jobs[j].across + e1 + 1 : nullptr, E1);
      for (int k = 0; k < jobs[j].count; ++k, ++m)
        work->rows.emit(index[m], staged.get() + 2 * m * E2, pair ? staged.get() + (2 * m + 1) * E2 : nullptr, 1);
    }
    for (int64_t c = 0; c < (pair ? 2 : 1); ++c)
      for (int64_t e2 = w.from2; e2 < w.to2; ++e2) {
        const int64_t at = held_node(x1, x2, e1 + c, e2) * stride;
        for (int m = 0; m < moments; ++m) target[m][at] = stage[(2 * m + c) * E2 + e2];
      }
  }
  return Status::Ok;
}

}  // namespace

Status convolve(const double* in, const Axis& x1, const Axis& x2, const double* tap1, const double* tap2,
                double* across, double* out, int64_t stride, FftWork* work, const double* in_b, double* out_b) {
  const bool flat = x2.nodes == 1 && x2.L == 0;
  if (flat && x1.fft) {  // 1-D: straight into out, in and in_b as one complex line (tap2 is the single 1)
    if (const Status st = work->prepare(tap1, x1.L, x1.nodes); st != Status::Ok) return st;
    work->rows.apply(in, in_b, 1, out, out_b, stride);
    return Status::Ok;
  }
  if (in_b) {
    if (const Status st = convolve(in_b, x1, x2, tap1, tap2, across, out_b, stride, work); st != Status::Ok) return st;
  }
  if (const Status st = row_pass(in, x1, x2, &tap1, 1, &across, work); st != Status::Ok) return st;
  ColumnJob job;
  job.across = across;
  job.count = 1;
  job.tap[0] = tap2;
  job.out[0] = out;
  return column_passes(&job, 1, x1, x2, stride, work, Window{0, x1.E, 0, x2.E});
}

Status convolve_moments(KernelKind kind, const Axis* axis, int64_t dims, int64_t width, bool linear, bool squares,
                        const double* count, const double* count_sq, const double* sums, double* moments) {
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};
  const NodeMoments layout(linear, dims, width, squares);
  const int64_t powers_2 = layout.p2, powers_1 = layout.p1, stride = layout.stride();
  const auto power_at = [&](int64_t k) { return dims == 2 ? kPowers[k] : Power{int(k), 0}; };
  const int64_t cells = x1.nodes * x2.nodes;
  Scratch<double> columns(cells * width), across(dims == 2 ? 0 : x1.E);  // 1-D: one line
  Scratch<double> taps(kMaxGridDims * 6 * (std::max(x1.L, x2.L) * 2 + 1));
  if (!columns.ok() || !across.ok() || !taps.ok()) return Status::OutOfMemory;

  // Taps per axis: K(u)·uᵃ and K(u)²·uᵃ (a = 0, 1, 2) at u = m·step/h, m = −L … L, for the 1-D profile K of
  // the product kernel.
  const int64_t tap_len = std::max(x1.L, x2.L) * 2 + 1;
  const auto tap = [&](int64_t d, bool squared, int a) { return taps.get() + ((d * 2 + squared) * 3 + a) * tap_len; };
  for (int64_t d = 0; d < dims; ++d) {
    for (int64_t m2 = -axis[d].L; m2 <= axis[d].L; ++m2) {
      const double u = double(m2) * axis[d].step / axis[d].h;
      const double k = kernel_weight(kind, float(axis[d].h), double(m2) * axis[d].step);
      double ua = 1;  // uᵃ by products: std::pow would link libm's pow and its 4 kB table (issue 21)
      for (int a = 0; a < 3; ++a, ua *= u) {
        tap(d, false, a)[m2 + axis[d].L] = k * ua;
        tap(d, true, a)[m2 + axis[d].L] = k * k * ua;
      }
    }
  }
  const double one = 1.0;
  const auto tap2 = [&](bool squared, int b) { return dims == 2 ? tap(1, squared, b) : &one; };
  double* mom = moments;
  for (int64_t col = 0; col < width; ++col)
    for (int64_t c = 0; c < cells; ++c) columns.get()[col * cells + c] = sums[c * width + col];
  const auto column = [&](int64_t col) { return columns.get() + col * cells; };
  const auto t_moment = [&](int64_t col, int64_t k) { return mom + layout.t(col) + k; };
  FftWork work;
  if (dims == 2) {
    // Each row pass once, then a column pass per moment: S_ab and T_ab read their input's row pass by K·u₁ᵃ, which
    // S₀₀, S₀₁ and S₀₂ share (T₀₀ and T₀₁ too), where a convolve per moment redid it (9 row passes instead of 5, local-
    // linear). The same passes, so the same bits. One input's row passes, then their column passes (column_passes).
    const int64_t lines = x1.E * x2.nodes, count_rows = linear ? 3 : 1, sum_rows = linear ? 2 : 1;
    // The output nodes the moments hold (all, or the box's: lay_axes). By FFT the transforms then cover those alone
    // (convolution_size's window, often half the whole pass's length): the box's nodes round differently from the
    // whole pass's, by about 1e-16·log₂N of a line's largest output (the float32 fits the same bits on grid_test.cpp's
    // samples).
    const Window box{x1.first_held, x1.first_held + x1.held_nodes(), x2.first_held, x2.first_held + x2.held_nodes()};
    Scratch<double> rows(count_rows * lines);
    if (!rows.ok()) return Status::OutOfMemory;
    const auto passes = [&](const double* in, bool squared, int64_t each, int64_t count, double* first) -> Status {
      ColumnJob jobs[3];
      const double* taps[3];
      double* across[3];
      for (int64_t a = 0; a < each; ++a) {
        taps[a] = tap(0, squared, int(a));
        across[a] = rows.get() + a * lines;
        jobs[a].across = across[a];
      }
      if (const Status st = row_pass(in, x1, x2, taps, int(each), across, &work, box.from1, box.to1); st != Status::Ok)
        return st;
      for (int64_t k = 0; k < count; ++k) {
        const Power pw = power_at(k);
        ColumnJob& job = jobs[pw.a];
        job.tap[job.count] = tap(1, squared, pw.b);
        job.out[job.count++] = first + k;
      }
      return column_passes(jobs, each, x1, x2, stride, &work, box);
    };
    if (const Status st = passes(count, false, count_rows, powers_2, mom); st != Status::Ok) return st;
    if (squares)
      if (const Status st = passes(count_sq, true, count_rows, powers_2, mom + layout.b()); st != Status::Ok) return st;
    for (int64_t col = 0; col < width; ++col)
      if (const Status st = passes(column(col), false, sum_rows, powers_1, t_moment(col, 0)); st != Status::Ok)
        return st;
    return Status::Ok;
  }
  // 1-D: Σ K·ω·uᵏ with Σ K·ω·y·uᵏ of column 0 (the same taps: one transform), then the other columns in pairs.
  for (int64_t k = 0; k < powers_2; ++k) {
    const Power pw = power_at(k);
    const bool pair = k < powers_1 && width > 0;
    if (const Status st = convolve(count, x1, x2, tap(0, false, pw.a), tap2(false, pw.b), across.get(), mom + k, stride,
                                   &work, pair ? column(0) : nullptr, pair ? t_moment(0, k) : nullptr);
        st != Status::Ok)
      return st;
    if (squares)
      if (const Status st = convolve(count_sq, x1, x2, tap(0, true, pw.a), tap2(true, pw.b), across.get(),
                                     mom + layout.b() + k, stride, &work);
          st != Status::Ok)
        return st;
  }
  for (int64_t col = 1; col < width; col += 2)
    for (int64_t k = 0; k < powers_1; ++k) {
      const Power pw = power_at(k);
      const bool pair = col + 1 < width;
      if (const Status st =
              convolve(column(col), x1, x2, tap(0, false, pw.a), tap2(false, pw.b), across.get(), t_moment(col, k),
                       stride, &work, pair ? column(col + 1) : nullptr, pair ? t_moment(col + 1, k) : nullptr);
          st != Status::Ok)
        return st;
    }
  return Status::Ok;
}

}  // namespace ka
