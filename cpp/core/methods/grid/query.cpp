// Where a query sits on a grid and its moments there (query.h).
#include "methods/grid/query.h"

#include <algorithm>
#include <cmath>

#include "methods/grid/convolution.h"

namespace ka {

// Moments Σ w·u₁ᵃ·u₂ᵇ (`count` of them, in kPowers order; 1-D: b = 0) about a point c, turned into those about
// q = c − δ·h: the offsets become u + δ, so each is Σ over i ≤ a, j ≤ b of C(a, i)·C(b, j)·δ₁^(a−i)·δ₂^(b−j) times the
// moment of power (i, j). Powers are at most 2, so the binomial coefficients are 1 or 2.
// dᵉ for e = 0, 1, 2 (the moments' degrees), by products rather than std::pow, which links libm's pow (issue 21).
namespace {

double square_at_most(double d, int e) { return e == 0 ? 1 : e == 1 ? d : d * d; }

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
        acc += c * square_at_most(delta[0], pw.a - i) * square_at_most(delta[1], pw.b - j) * old[index(i, j)];
      }
    v[k] = acc;
  }
}

}  // namespace

// The output nodes reach L taps (the kernel's reach) beyond the box on each side, so a query within reach of the
// data reads its moments there, inside or outside the box alike. The Laplacian reads them at the nearest point c
// of the box instead: beyond the data, every key's weight along that axis carries the same factor e^{−|q − c|/h},
// which cancels from the fit, so the moments about q are those about c with the offsets shifted by δ = (c − q)/h
// (exact at any distance).
GridQuery locate(const float* q, const Axis* axis, int64_t dims, bool laplacian, bool compact) {
  GridQuery g;
  int64_t* e = g.e;
  double* frac = g.frac;
  double* delta = g.delta;
  bool &inside = g.inside, &on_grid = g.on_grid, &finite = g.finite, &kink = g.kink;
  for (int64_t d = 0; d < dims; ++d) {
    const double at = q[d];
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
  return g;
}

// The moments at query g into v (S, T per column, then B where held): interpolated between the output nodes around
// it, then moved to the query by δ where they were read elsewhere (shift_moments).
void moments_at(const GridQuery& g, const double* mom, const Axis* axis, int64_t dims, const NodeMoments& layout,
                double* v) {
  const int64_t stride = layout.stride();
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};
  const int64_t* e = g.e;
  const double* frac = g.frac;
  std::fill(v, v + stride, 0.0);
  for (int c2 = 0; c2 < (dims == 2 ? 2 : 1); ++c2)
    for (int c1 = 0; c1 < 2; ++c1) {
      const double share = (c1 ? frac[0] : 1 - frac[0]) * (dims == 2 ? (c2 ? frac[1] : 1 - frac[1]) : 1.0);
      const double* at = mom + held_node(x1, x2, e[0] + c1, e[1] + c2) * stride;
      for (int64_t k = 0; k < stride; ++k) v[k] += share * at[k];
    }
  if (g.delta[0] != 0 || g.delta[1] != 0) {
    shift_moments(v, layout.p2, dims, g.delta);
    if (layout.squares) shift_moments(v + layout.b(), layout.p2, dims, g.delta);
    for (int64_t col = 0; col < layout.width; ++col) shift_moments(v + layout.t(col), layout.p1, dims, g.delta);
  }
}

OwnShare::OwnShare(KernelKind kind, const Axis& axis) {
  const double k = kernel_weight(kind, float(axis.h), axis.step), r = axis.step / axis.h;
  for (int squared = 0; squared < 2; ++squared) {
    const double tap = squared ? k * k : k;
    zero[squared] = 2 * (1 - tap);
    two[squared] = 2 * tap * r * r;
  }
}

OwnTerms own_terms(const GridQuery& g, const OwnShare* axes, int64_t dims) {
  double a[2][kMaxGridDims][3] = {};  // [squared][axis][power]: A₀, A₁ = 0, A₂; an axis beyond dims: 1, 0, 0
  for (int sq = 0; sq < 2; ++sq)
    for (int64_t d = 0; d < kMaxGridDims; ++d) {
      a[sq][d][0] = d < dims ? axes[d].s0(g.frac[d], sq) : 1;
      a[sq][d][2] = d < dims ? axes[d].s2(g.frac[d], sq) : 0;
    }
  OwnTerms t;
  for (int64_t j = 0; j < 6; ++j) {
    const Power pw = dims == 2 ? kPowers[j] : Power{int(j % 3), 0};
    t.s[j] = a[0][0][pw.a] * a[0][1][pw.b];
    t.b[j] = a[1][0][pw.a] * a[1][1][pw.b];
  }
  return t;
}

}  // namespace ka
