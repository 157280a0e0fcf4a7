// The textbook rows (exact_local_row, local_solve.h) of a 2-D Gaussian leave-one-out fit whose bandwidths are wide
// against the sample, from a few sums over it: the fast Gauss transform's single box. With v = (x − c)/h (c the centre
// of the sample's box, per axis), the weight of key j at row i is e_i·e_j·exp(v_i·v_j), e = exp(−|v|²/2), and
// exp(v_i·v_j) = Σ_α v_i^α v_j^α / α! over the multi-indices α = (α₁, α₂). Truncated at |α| ≤ P, each row's moments
// are polynomials in v_i whose coefficients are the sample's sums Σ_j ω_j e_j v_j^γ (and with y_j), made once for every
// row: O(n·P²) once and O(P²) a row, where the textbook row visits every key in reach, O(n), in double. What a search
// pays where every row's design is near-singular at wide bandwidths (points clustered along a line: each guarded, so
// solved in double) or where the tails of a skewed sample lie far from the rest (lognormal axes): the default fit of
// 10⁴ such clustered points spent 10 s on these rows.
// P is the least order whose remainder, at most ρ^(P+1)/(P+1)!·e^(2ρ) of a term with ρ = |v_i₁|·R₁ + |v_i₂|·R₂ (R the
// largest |v| along each axis), stays below 2⁻⁶⁰ of it; where the order would exceed kMostTaylorOrder, or the expansion
// would cost more than the rows themselves, there is none (ok() false) and the caller runs the textbook rows.
#pragma once
#include <cstdint>
#include <memory>

#include "base/scratch.h"
#include "engine/local_solve.h"
#include "engine/problem.h"

namespace ka {

constexpr int kMostTaylorOrder = 40, kMostTaylorColumns = 8;
// A score's guarded rows from which it asks for the expansion (below, their textbook rows cost little).
constexpr int64_t kTaylorRowsFrom = 16;

class TaylorRows {
 public:
  // `p`: the sample as keys and queries (the same rows), 2-D, Gaussian, no mask but leave-one-out (each row's own key
  // left out) or none (each row's own key in: a fit's summary); ω or null; `degree` 0 or 1. `rows`: how many rows will
  // be asked (the expansion is made only where it costs less than they do by the textbook loop over every key).
  TaylorRows(const Problem& p, const float* omega, int degree, int64_t rows);
  bool ok() const { return order_ >= 0; }  // false also with more than kMostTaylorColumns value columns
  // Row i's textbook fit: its D means into `mean`, its own key's weight in it ℓ_i(x_i) into *self_weight (when given)
  // and 1; 0 where the design is singular (kSingularDesign, as exact_local_row); −1 where, its own key left out, its
  // neighbours weigh too little beside that key for the sums to hold them in double (the caller runs the textbook row).
  int row(int64_t i, ExactRowScratch s, double* mean, double* self_weight = nullptr) const;

 private:
  const Problem& p_;
  const float* omega_;
  int degree_;
  bool leave_one_out_;
  int order_ = -1;  // P
  double centre_[2] = {0, 0}, inverse_h_[2] = {1, 1};
  // Per total degree g up to P + 2·degree, the g + 1 sums of v^γ (γ₂ = 0 … g); then per column, with y.
  Scratch<double> sums_;
  int64_t per_channel_ = 0;
  double v(int64_t i, int d) const { return (double(p_.keys.row(i)[d]) - centre_[d]) * inverse_h_[d]; }
  static int64_t index(int g1, int g2) { return int64_t(g1 + g2) * (g1 + g2 + 1) / 2 + g2; }
};

// The expansion for `rows` guarded rows of p (as the constructor's), where one serves them: 2-D, from kTaylorRowsFrom
// rows, ok(); else null (the caller runs the textbook rows).
std::unique_ptr<TaylorRows> taylor_rows_for(const Problem& p, const float* omega, int degree, int64_t rows);

}  // namespace ka
