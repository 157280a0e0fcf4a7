// See window_blocks.h.
#include "engine/window_blocks.h"

#include <algorithm>
#include <cmath>

namespace ka::row_sums {
namespace {

// The first place in the sorted keys x where below(x[place]) is false (below is true then false along x).
template <class Below>
int64_t partition_point(const std::vector<double>& x, Below below) {
  return std::partition_point(x.begin(), x.end(), below) - x.begin();
}

// The keys [first, last) with |x − q| < h, on the exact differences, and mid, the first with x >= q.
struct Run {
  int64_t first, mid, last;
};
Run run_of(const std::vector<double>& x, double q, double h) {
  return {partition_point(x, [&](double v) { return !(v - q > -h); }),
          partition_point(x, [&](double v) { return v < q; }), partition_point(x, [&](double v) { return v - q < h; })};
}

struct Binomials {
  double c[21][21] = {};
  Binomials() {
    for (int l = 0; l < 21; ++l) {
      c[l][0] = 1;
      for (int q = 1; q <= l; ++q) c[l][q] = c[l - 1][q - 1] + (q < l ? c[l - 1][q] : 0);
    }
  }
};
const Binomials kBinomials;

}  // namespace

void SquaredBlockMoments::build(const double* x, const double* omega, int64_t n, int64_t block) {
  const int64_t blocks = n / block;
  centre_.assign(size_t(blocks), 0.0);
  moments_.assign(size_t(blocks * kMoments), 0.0);
  for (int64_t k = 0; k < blocks; ++k) {
    const int64_t j0 = k * block;
    const double c = centre_[size_t(k)] = x[j0 + block / 2];
    double* m = moments_.data() + k * kMoments;
    for (int64_t j = j0; j < j0 + block; ++j) {
      const double d = x[j] - c;
      double v = omega[j] * omega[j];
      for (int l = 0; l < kMoments; ++l, v *= d) m[l] += v;
    }
  }
}

void SquaredBlockMoments::add_blocks(int64_t first, int64_t end, double q, double h, double sigma, int degree,
                                     double sums[3]) const {
  if (first >= end) return;
  const double inv = 1 / h;
  const int powers = 2 * degree + 1;  // the sums read: d^e for e < powers
  double D[kMoments] = {};            // Σ ω² d^l over the whole blocks, for the l = 3m + e the sums reach
  for (int64_t k = first; k < end; ++k) {
    const double* m = moments_.data() + k * kMoments;
    double power[kMoments];  // (c − q)^l
    power[0] = 1;
    const double shift = centre_[size_t(k)] - q;
    for (int l = 1; l < kMoments; ++l) power[l] = power[l - 1] * shift;
    for (int l = 0; l < kMoments; ++l) {
      if (l % 3 >= powers) continue;
      double s = 0;
      for (int e = 0; e <= l; ++e) s += kBinomials.c[l][e] * power[l - e] * m[e];
      D[l] += s;
    }
  }
  // (1 − σv³)⁶ = Σ_m C(6, m) (−σ v³)^m with v = d/h: the coefficient of d^(3m).
  const double v3 = -sigma * inv * inv * inv;
  double coefficient = 1;
  for (int m = 0; m <= 6; ++m, coefficient *= v3)
    for (int p = 0; p < powers; ++p) sums[p] += kBinomials.c[6][m] * coefficient * D[3 * m + p];
}

std::unique_ptr<WindowBlocks> window_blocks(const Context& c, bool with_b) {
  const Problem& p = c.p;
  const int64_t I = p.queries.rows, J = p.keys.rows;
  if (!c.query_scale || !c.sorted || p.queries.cols != 1 || p.values.cols != 1 ||
      p.kernel.kind != KernelKind::Tricube || p.masks.any() || I == 0)
    return nullptr;
  auto b = std::make_unique<WindowBlocks>();
  b->x.resize(size_t(J));
  for (int64_t j = 0; j < J; ++j) b->x[size_t(j)] = double(p.keys.row(j)[0]);
  int64_t window[3];
  for (int t = 0; t < 3; ++t) {
    const int64_t i = t * (I - 1) / 2;
    const double h = double(p.kernel.bandwidth[0]) * c.query_scale[i];
    const Run run = run_of(b->x, double(p.queries.row(i)[0]), std::isnan(h) ? 0.0 : h);
    window[t] = run.last - run.first;
  }
  std::sort(window, window + 3);
  const int64_t block = moment_block_size(window[1]);
  if (block == 0) return nullptr;
  b->y.resize(size_t(J));
  b->omega.resize(size_t(J));
  for (int64_t j = 0; j < J; ++j) {
    b->y[size_t(j)] = double(p.values.row(j)[0]);
    b->omega[size_t(j)] = c.omega ? double(c.omega[j]) : 1.0;
  }
  b->moments.build(b->x.data(), b->y.data(), b->omega.data(), J, block);
  b->with_b = with_b;
  if (with_b) b->squared.build(b->x.data(), b->omega.data(), J, block);
  return b;
}

namespace {

// The sums of one side's keys [a, b) of a fit of `degree`: the keys outside whole blocks one by one (with the
// squared weights' sums in the same pass when `squares`), then the whole blocks from their moments.
void add_side(const WindowBlocks& blocks, int64_t a, int64_t b, double q, double h, double sigma, int degree,
              PolynomialSums* s, double* squares) {
  if (a >= b) return;
  const int64_t block = blocks.moments.block();
  const int64_t first = (a + block - 1) / block, end = b / block;
  const double inv = 1 / h;
  if (first >= end) return blocks.moments.add_points(a, b, q, inv, degree, s, squares);
  blocks.moments.add_points(a, first * block, q, inv, degree, s, squares);
  blocks.moments.add_points(end * block, b, q, inv, degree, s, squares);
  blocks.moments.add_blocks(first, end, q, h, sigma, degree, s);
  if (squares) blocks.squared.add_blocks(first, end, q, h, sigma, degree, squares);
}

}  // namespace

bool accumulate_blocks(const Context& c, const WindowBlocks& blocks, int64_t i, Row& r) {
  const double q = double(c.p.queries.row(i)[0]), h = r.h[0], inv = 1 / h;
  // (Degree 2 needs Σw d³, Σw d⁴ and Σw y d² in its design: point by point.)
  if (!std::isfinite(inv * inv * inv) || (r.with_b && !blocks.with_b) || r.p > 2) return false;
  r.sums.clear();
  const Run run = run_of(blocks.x, q, h);
  const int degree = int(r.p) - 1;  // 1-D: the design's columns are 1 … degree + 1
  PolynomialSums s;
  double b[3] = {};
  double* squares = r.with_b ? b : nullptr;
  add_side(blocks, run.first, run.mid, q, h, -1, degree, &s, squares);
  add_side(blocks, run.mid, run.last, q, h, 1, degree, &s, squares);
  if (run.first == run.last || !(s.s[0] > 0)) return true;  // an empty row: r.sums as cleared
  r.sums.max = 0;
  // The sums are in powers of d = x − q; the design's column is d/h.
  r.a[0] = s.s[0];
  r.t[0] = s.t[0];
  if (r.p == 2) {
    r.a[1] = r.a[2] = s.s[1] * inv;
    r.a[3] = s.s[2] * inv * inv;
    r.t[1] = s.t[1] * inv;
  }
  if (!r.with_b) return true;
  r.b[0] = b[0];
  if (r.p == 2) {
    r.b[1] = r.b[2] = b[1] * inv;
    r.b[3] = b[2] * inv * inv;
  }
  return true;
}

}  // namespace ka::row_sums
