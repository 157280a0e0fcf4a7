// Blocked quartic fits and Mallows' Cp (plugin_blocks.h).
#include "stats/plugin_blocks.h"

#include <algorithm>
#include <cmath>

#include "base/scratch.h"
#include "base/simd.h"

namespace ka {
namespace {

// Columns of a block's least-squares problem: 1, t, t², t³, t⁴, then y.
constexpr int kTerms = 5;
constexpr int kColumns = kTerms + 1;
// Rows folded into a triangle at a time (column-major, so each reflection runs down contiguous columns).
constexpr int kChunk = 64;

// The upper-triangular factor R of [X y] for the rows folded in so far: XᵀX = RᵀR over the first kTerms columns,
// Qᵀy in the last column, and |R[5][5]| the residual norm of the least-squares fit of y.
struct Triangle {
  double r[kColumns][kColumns] = {};
};

// Rows to fold into a triangle: column c of row i at col[c][i].
struct Rows {
  double col[kColumns][kChunk];
  int count = 0;
};

// R ← the triangular factor of [R; rows] by one Householder reflection per column (LAPACK's dlarfg convention:
// R[k][k] becomes −sign(R[k][k])·norm, so the reflector's first entry never cancels).
void fold(Triangle* t, Rows* rows) {
  const int m = rows->count;
  for (int k = 0; k < kColumns; ++k) {
    double* v = rows->col[k];
    double below = 0;
    for (int i = 0; i < m; ++i) below += v[i] * v[i];
    if (below == 0) continue;  // this column of the rows is already zero: nothing to reflect
    const double top = t->r[k][k];
    const double norm = std::sqrt(top * top + below);
    const double diagonal = top > 0 ? -norm : norm;
    const double scale = 1.0 / (top - diagonal);
    for (int i = 0; i < m; ++i) v[i] *= scale;  // the reflector is (1, v)
    const double tau = (diagonal - top) / diagonal;
    t->r[k][k] = diagonal;
    for (int j = k + 1; j < kColumns; ++j) {
      double* u = rows->col[j];
      double dot = t->r[k][j];
      for (int i = 0; i < m; ++i) dot += v[i] * u[i];
      dot *= tau;
      t->r[k][j] -= dot;
      for (int i = 0; i < m; ++i) u[i] -= dot * v[i];
    }
  }
  rows->count = 0;
}

// The basis of a run of sorted points: t = (x − centre)/half_width spans [−1, 1] (half_width 1 when all x are
// equal, so t = 0).
struct Basis {
  double centre, half_width;
};

Basis basis_of(const double* x, int64_t first, int64_t end) {
  const double lo = x[first], hi = x[end - 1];
  const double half = (hi - lo) / 2;
  return {lo + half, half > 0 ? half : 1.0};
}

// Folds points [first, end), at most kChunk of them, into t in `b`'s basis.
void fold_points(const double* x, const double* y, int64_t first, int64_t end, const Basis& b, Triangle* t,
                 Rows* rows) {
  const double inv = 1.0 / b.half_width;
  for (int64_t i = first; i < end; ++i) {
    const int at = int(i - first);
    const double u = (x[i] - b.centre) * inv;
    double power = 1;
    for (int k = 0; k < kTerms; ++k, power *= u) rows->col[k][at] = power;
    rows->col[kTerms][at] = y[i];
  }
  rows->count = int(end - first);
  fold(t, rows);
}

// The triangle of points [first, end) in `b`'s basis, folded kChunk rows at a time, each a call of its own (under
// WebAssembly, V8 optimises a function only between calls: simd::keep_out_of_line).
void triangle_of(const double* x, const double* y, int64_t first, int64_t end, const Basis& b, Triangle* t,
                 Rows* rows) {
  *t = Triangle{};
  const auto fold_chunk = simd::keep_out_of_line(&fold_points);
  for (int64_t i = first; i < end; i += kChunk) fold_chunk(x, y, i, std::min(end, i + kChunk), b, t, rows);
}

// Folds a stretch's triangle `s` (basis `from`) into a block's triangle `t` (basis `to`, whose points include the
// stretch's). On the stretch, t_to = a·t_from + c with a = from.half/to.half, c = (from.centre − to.centre)/to.half,
// so column k of X_to is Σ_{i ≤ k} C(k, i) aⁱ c^(k−i) (column i of X_from): X_to = X_from·T with T upper triangular,
// and [X_to y] = Q·(R_from·diag(T, 1)). Both |a| and |c| + |a| are at most 1, so T is bounded.
void fold_stretch(const Triangle& s, const Basis& from, const Basis& to, Triangle* t, Rows* rows) {
  const double a = from.half_width / to.half_width, c = (from.centre - to.centre) / to.half_width;
  double a_power[kTerms] = {1}, c_power[kTerms] = {1};
  for (int k = 1; k < kTerms; ++k) a_power[k] = a_power[k - 1] * a, c_power[k] = c_power[k - 1] * c;
  double change[kTerms][kTerms] = {};  // change[i][k] = C(k, i) aⁱ c^(k−i)
  for (int k = 0; k < kTerms; ++k) {
    double binomial = 1;  // C(k, i)
    for (int i = 0; i <= k; ++i) {
      change[i][k] = binomial * a_power[i] * c_power[k - i];
      binomial = binomial * double(k - i) / double(i + 1);
    }
  }
  rows->count = kColumns;
  for (int r = 0; r < kColumns; ++r) {
    for (int k = 0; k < kTerms; ++k) {
      double sum = 0;
      for (int i = r; i <= k; ++i) sum += s.r[r][i] * change[i][k];
      rows->col[k][r] = sum;
    }
    rows->col[kTerms][r] = s.r[r][kTerms];
  }
  fold(t, rows);
}

// Whether points [first, end) hold at least 5 distinct x (sorted, so distinct values are changes between
// neighbours); it stops as soon as it has seen them.
bool has_distinct_quartic(const double* x, int64_t first, int64_t end) {
  int distinct = end > first ? 1 : 0;
  for (int64_t i = first + 1; i < end && distinct < kTerms; ++i) distinct += x[i] != x[i - 1];
  return distinct >= kTerms;
}

int64_t block_start(int64_t n, int32_t partition, int32_t j) {
  return j == partition ? n : int64_t(j) * (n / partition);
}

// The residual sum of squares, Σ m̂''² and Σ m̂''m̂'''' of a block from its triangle in basis `b`: the quartic's
// coefficients solve R[0:5, 0:5] β = R[0:5, 5]; in x's units m̂'' = (2β₂ + 6β₃t + 12β₄t²)/h², m̂'''' = 24β₄/h⁴
// (h the half-width), and for any coefficient vector v, Σ_i (X v)_i² = ‖R v‖² and Σ_i (X v)_i = (R e₀)ᵀ(R v).
void add_block(const Triangle& t, const Basis& b, QuarticBlocks* out, int32_t partition) {
  double beta[kTerms];
  for (int k = kTerms - 1; k >= 0; --k) {
    double sum = t.r[k][kTerms];
    for (int j = k + 1; j < kTerms; ++j) sum -= t.r[k][j] * beta[j];
    beta[k] = sum / t.r[k][k];
  }
  const double h2 = b.half_width * b.half_width;
  const double second[3] = {2 * beta[2] / h2, 6 * beta[3] / h2, 12 * beta[4] / h2};
  double rv[3];
  for (int r = 0; r < 3; ++r) {
    rv[r] = 0;
    for (int k = r; k < 3; ++k) rv[r] += t.r[r][k] * second[k];
  }
  const double fourth = 24 * beta[4] / (h2 * h2);
  out->rss[partition - 1] += t.r[kTerms][kTerms] * t.r[kTerms][kTerms];
  out->curvature[partition - 1] += rv[0] * rv[0] + rv[1] * rv[1] + rv[2] * rv[2];
  out->curvature4[partition - 1] += fourth * t.r[0][0] * rv[0];
}

}  // namespace

Status fit_quartic_blocks(const double* x, const double* y, int64_t n, int32_t max_partitions, QuarticBlocks* out) {
  *out = QuarticBlocks{};
  int32_t partitions = 0;
  for (int32_t p = 1; p <= max_partitions; ++p) {
    bool determined = true;
    for (int32_t j = 0; j < p && determined; ++j)
      determined = has_distinct_quartic(x, block_start(n, p, j), block_start(n, p, j + 1));
    if (!determined) break;
    partitions = p;
  }
  out->partitions = partitions;
  if (partitions == 0) return Status::Ok;
  // The stretches between consecutive boundaries of every partition, each folded once.
  Scratch<int64_t> cuts(int64_t(partitions) * (partitions + 1) / 2 + 1);
  if (!cuts.ok()) return Status::OutOfMemory;
  int64_t* cut = cuts.get();
  int64_t count = 0;
  for (int32_t p = 1; p <= partitions; ++p)
    for (int32_t j = 0; j < p; ++j) cut[count++] = block_start(n, p, j);
  cut[count++] = n;
  std::sort(cut, cut + count);
  count = std::unique(cut, cut + count) - cut;
  const int64_t stretches = count - 1;
  Scratch<Triangle> triangle(stretches);
  Scratch<Basis> basis(stretches);
  Rows rows;
  if (!triangle.ok() || !basis.ok()) return Status::OutOfMemory;
  for (int64_t s = 0; s < stretches; ++s) {
    basis.get()[s] = basis_of(x, cut[s], cut[s + 1]);
    triangle_of(x, y, cut[s], cut[s + 1], basis.get()[s], &triangle.get()[s], &rows);
  }
  for (int32_t p = 1; p <= partitions; ++p) {
    int64_t s = 0;  // the first stretch of block j
    for (int32_t j = 0; j < p; ++j) {
      const int64_t first = block_start(n, p, j), end = block_start(n, p, j + 1);
      while (cut[s] < first) ++s;
      const Basis b = basis_of(x, first, end);
      Triangle block;
      for (; cut[s] < end; ++s) fold_stretch(triangle.get()[s], basis.get()[s], b, &block, &rows);
      add_block(block, b, out, p);
    }
  }
  return Status::Ok;
}

int32_t choose_blocks(const QuarticBlocks& fits, int64_t n, double* cp) {
  const int32_t last = fits.partitions;
  const double nd = double(n), reference = fits.rss[last - 1];
  int32_t best = 0;
  for (int32_t p = 1; p <= last; ++p) {
    cp[p - 1] = (nd - 5.0 * last) * fits.rss[p - 1] / reference + 10.0 * p - nd;
    if (!std::isnan(cp[p - 1]) && (best == 0 || cp[p - 1] < cp[best - 1])) best = p;
  }
  return best ? best : 1;
}

}  // namespace ka
