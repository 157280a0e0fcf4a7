// The textbook rows of a wide 2-D Gaussian leave-one-out fit by a Taylor expansion (taylor_rows.h).
#include "engine/taylor_rows.h"

#include <algorithm>
#include <cmath>
#include <new>
#include <utility>

#include "engine/local_fit.h"

namespace ka {
namespace {

// The least P with ρ^(P+1)/(P+1)!·e^ρ at most 2⁻⁶⁰ (the remainder of exp(t), |t| ≤ ρ, after its terms up to tᴾ,
// against e^−ρ, the least the whole can be), or kMostTaylorOrder + 1 where none up to it is.
int order_for(double rho) {
  const double bound = std::ldexp(1.0, -60) * std::exp(-2 * rho);
  double term = rho;  // ρ^(P+1)/(P+1)! at P = 0
  for (int P = 0; P <= kMostTaylorOrder; ++P) {
    if (term <= bound) return P;
    term *= rho / double(P + 2);
  }
  return kMostTaylorOrder + 1;
}

}  // namespace

TaylorRows::TaylorRows(const Problem& p, const float* omega, int degree, int64_t rows)
    : p_(p), omega_(omega), degree_(degree), leave_one_out_(p.masks.leave_one_out) {
  const int64_t n = p.keys.rows, width = p.values.cols;
  const Masks& m = p.masks;
  if (p.keys.cols != 2 || p.kernel.kind != KernelKind::Gaussian || degree < 0 || degree > 1 || n < 2 || width < 1 ||
      width > kMostTaylorColumns || !queries_are_keys(p) || m.causal || m.key_padding || m.general || m.query_groups ||
      m.band_first)
    return;
  double lo[2], hi[2];
  for (int d = 0; d < 2; ++d) {
    lo[d] = hi[d] = double(p.keys.row(0)[d]);
    for (int64_t j = 1; j < n; ++j) {
      lo[d] = std::min(lo[d], double(p.keys.row(j)[d]));
      hi[d] = std::max(hi[d], double(p.keys.row(j)[d]));
    }
    if (!std::isfinite(lo[d]) || !std::isfinite(hi[d])) return;
    centre_[d] = (lo[d] + hi[d]) / 2;
    inverse_h_[d] = 1 / double(p.kernel.bandwidth[d]);
  }
  const double r1 = (hi[0] - lo[0]) / 2 * inverse_h_[0], r2 = (hi[1] - lo[1]) / 2 * inverse_h_[1];
  const int order = order_for(r1 * r1 + r2 * r2);  // ρ of the farthest row
  if (order > kMostTaylorOrder) return;
  const int top = order + 2 * degree;
  const int64_t channel = int64_t(top + 1) * (top + 2) / 2, terms = int64_t(order + 1) * (order + 2) / 2;
  // The sums' cost (a product and an add per entry and key) against the rows' by the textbook loop (two passes of
  // about ten operations a key), counted in those operations.
  if (!(double(n) * double(channel) * double(1 + width) + double(rows) * double(terms) * double(3 + 3 * width) <
        20.0 * double(rows) * double(n)))
    return;
  if (!sums_.reset_zeroed(channel * (1 + width))) return;
  per_channel_ = channel;
  Scratch<double> power(2 * (top + 1));
  if (!power.ok()) return;
  double* p1 = power.get();
  double* p2 = p1 + top + 1;
  double* s = sums_.get();
  for (int64_t j = 0; j < n; ++j) {
    const double w = omega ? double(omega[j]) : 1.0;
    if (!(w > 0)) continue;
    const double a = v(j, 0), b = v(j, 1), e = w * std::exp(-(a * a + b * b) / 2);
    p1[0] = p2[0] = 1;
    for (int k = 1; k <= top; ++k) {
      p1[k] = p1[k - 1] * a;
      p2[k] = p2[k - 1] * b;
    }
    for (int g = 0; g <= top; ++g)
      for (int g2 = 0; g2 <= g; ++g2) {
        const double m = e * p1[g - g2] * p2[g2];
        const int64_t at = index(g - g2, g2);
        s[at] += m;
        for (int64_t c = 0; c < width; ++c) s[(1 + c) * channel + at] += m * double(p.values.row(j)[c]);
      }
  }
  order_ = order;
}

int TaylorRows::row(int64_t i, ExactRowScratch s, double* mean, double* self_weight) const {
  const int64_t width = p_.values.cols, np = degree_ == 0 ? 1 : 3;
  const int shifts = degree_ == 0 ? 1 : 6;  // β of |β| ≤ 2·degree, kPowers order: (0,0) (1,0) (0,1) (2,0) (1,1) (0,2)
  constexpr int kShift[6][2] = {{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}, {0, 2}};
  const double a = v(i, 0), b = v(i, 1), e = std::exp(-(a * a + b * b) / 2);
  // G[β] = Σ_α v_i^α/α! · M[α + β] over |α| ≤ P, for the weights' sums (S) and, with |β| ≤ degree, each column's (T).
  double G[6] = {}, H[3 * kMostTaylorColumns] = {};
  double c1 = 1;  // a^α₁/α₁!
  for (int a1 = 0; a1 <= order_; ++a1) {
    double c = c1;  // a^α₁ b^α₂/(α₁! α₂!)
    for (int a2 = 0; a1 + a2 <= order_; ++a2) {
      for (int k = 0; k < shifts; ++k) {
        const int64_t at = index(a1 + kShift[k][0], a2 + kShift[k][1]);
        G[k] += c * sums_.get()[at];
        if (k < (degree_ == 0 ? 1 : 3))
          for (int64_t col = 0; col < width; ++col) H[col * 3 + k] += c * sums_.get()[(1 + col) * per_channel_ + at];
      }
      c *= b / double(a2 + 1);
    }
    c1 *= a / double(a1 + 1);
  }
  // The moments about row i, u = v_j − v_i: Σ w (u₁)^a (u₂)^b = e·Σ_β C(a,β₁)C(b,β₂)(−a)^(a−β₁)(−b)^(b−β₂) G[β].
  // Leave-one-out takes the row's own key out: weight K(0)·ω_i at offset 0.
  const double own = omega_ ? double(omega_[i]) : 1.0, out = leave_one_out_ ? own : 0.0;
  const double S00 = e * G[0] - out;
  if (leave_one_out_ && !(S00 > 1e-4 * own)) return -1;
  double* A = s.a;
  double* T = s.t;
  A[0] = S00;
  for (int64_t col = 0; col < width; ++col) T[col] = e * H[col * 3] - out * double(p_.values.row(i)[col]);
  if (degree_ == 1) {
    const double S10 = e * (G[1] - a * G[0]), S01 = e * (G[2] - b * G[0]);
    const double S20 = e * (G[3] - 2 * a * G[1] + a * a * G[0]), S02 = e * (G[5] - 2 * b * G[2] + b * b * G[0]);
    const double S11 = e * (G[4] - a * G[2] - b * G[1] + a * b * G[0]);
    A[1] = S10;  // the upper triangle of Σ w z zᵀ, z = (1, u₁, u₂)
    A[2] = S01;
    A[4] = S20;
    A[5] = S11;
    A[8] = S02;
    for (int64_t col = 0; col < width; ++col) {
      const double* h = H + col * 3;
      T[1 * width + col] = e * (h[1] - a * h[0]);
      T[2 * width + col] = e * (h[2] - b * h[0]);
    }
  }
  if (!textbook_solve(np, width, s, mean)) return 0;
  // ℓ_i(x_i) = ω_i·K(0)·gᵀz_i, z_i = e₁ (its own offset is 0): the weight it would have were it in the fit.
  if (self_weight) *self_weight = leave_one_out_ ? 0.0 : own * s.z[0];
  return 1;
}

std::unique_ptr<TaylorRows> taylor_rows_for(const Problem& p, const float* omega, int degree, int64_t rows) {
  if (p.keys.cols != 2 || rows < kTaylorRowsFrom) return nullptr;
  std::unique_ptr<TaylorRows> taylor(new (std::nothrow) TaylorRows(p, omega, degree, rows));
  return taylor && taylor->ok() ? std::move(taylor) : nullptr;
}

}  // namespace ka
