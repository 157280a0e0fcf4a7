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
  x_ = x, omega_ = omega, block_ = block;
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

void SquaredBlockMoments::add_side(int64_t a, int64_t b, double q, double h, double sigma, double sums[3]) const {
  if (a >= b) return;
  const double inv = 1 / h;
  const auto points = [&](int64_t from, int64_t to) {
    for (int64_t j = from; j < to; ++j) {
      const double d = x_[j] - q, u = std::fabs(d) * inv, t = 1 - u * u * u, t3 = t * t * t;
      const double w2 = t3 * t3 * omega_[j] * omega_[j];
      sums[0] += w2;
      sums[1] += w2 * d;
      sums[2] += w2 * d * d;
    }
  };
  const int64_t first = (a + block_ - 1) / block_, end = b / block_;
  if (first >= end) return points(a, b);
  points(a, first * block_);
  points(end * block_, b);
  double D[kMoments] = {};  // Σ ω² d^l over the whole blocks
  for (int64_t k = first; k < end; ++k) {
    const double* m = moments_.data() + k * kMoments;
    double power[kMoments];  // (c − q)^l
    power[0] = 1;
    const double shift = centre_[size_t(k)] - q;
    for (int l = 1; l < kMoments; ++l) power[l] = power[l - 1] * shift;
    for (int l = 0; l < kMoments; ++l) {
      double s = 0;
      for (int e = 0; e <= l; ++e) s += kBinomials.c[l][e] * power[l - e] * m[e];
      D[l] += s;
    }
  }
  // (1 − σv³)⁶ = Σ_m C(6, m) (−σ v³)^m with v = d/h: the coefficient of d^(3m).
  const double v3 = -sigma * inv * inv * inv;
  double coefficient = 1;
  for (int m = 0; m <= 6; ++m, coefficient *= v3)
    for (int p = 0; p < 3; ++p) sums[p] += kBinomials.c[6][m] * coefficient * D[3 * m + p];
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

bool accumulate_blocks(const Context& c, const WindowBlocks& blocks, int64_t i, Row& r) {
  const double q = double(c.p.queries.row(i)[0]), h = r.h[0], inv = 1 / h;
  // (Degree 2 needs Σw d³, Σw d⁴ and Σw y d² in its design: point by point.)
  if (!std::isfinite(inv * inv * inv) || (r.with_b && !blocks.with_b) || r.p > 2) return false;
  r.sums.clear();
  const Run run = run_of(blocks.x, q, h);
  PolynomialSums s;
  blocks.moments.add_side(run.first, run.mid, q, h, -1, &s);
  blocks.moments.add_side(run.mid, run.last, q, h, 1, &s);
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
  double b[3] = {};
  blocks.squared.add_side(run.first, run.mid, q, h, -1, b);
  blocks.squared.add_side(run.mid, run.last, q, h, 1, b);
  r.b[0] = b[0];
  if (r.p == 2) {
    r.b[1] = r.b[2] = b[1] * inv;
    r.b[3] = b[2] * inv * inv;
  }
  return true;
}

}  // namespace ka::row_sums
