// A lower bound on 1-D Nadaraya–Watson leave-one-out CV at large bandwidths, within rounding of the criterion itself:
// the upward scan of a small 1-D search (cv_scan.cpp) skips the points it rules out, each of which would cost an
// O(n²) evaluation (every key in reach of every row).
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "stats/bandwidth.h"

namespace ka {

// For the Gaussian kernel, with u = (x − c)/h about the sample's centre c and U = max |u|,
//   exp(−(u_i − u_j)²/2) = e^(−u_i²/2) e^(−u_j²/2) Σ_k (u_i u_j)^k / k!,
// so the held-out sums S_i = Σ_{j≠i} K_ij ỹ_j take p moments M_k = Σ_j e^(−u_j²/2) u_j^k ỹ_j / √k! and O(n·p) work,
// less the point itself, whose weight is 1 (ỹ: y less its computed mean, a shift the fit follows exactly; ỹ ≡ 1 for
// the weights' sum). Each pair's terms beyond p are at most e^(−(u_i²+u_j²)/2) T^p/p! / (1 − T/(p+1)), T = U² < p + 1,
// and each pair's terms sum in absolute value to at most e^(−(|u_i|−|u_j|)²/2) <= 1; so with Y1 = Σ_j |ỹ_j| (n for
// the weights) every computed sum lies within
//   Y1 · (T^p/p! / (1 − T/(p+1)) + 2(n + 12p + 8T + 16)·ε)
// of the exact one: the tail, the rounding of the moments and sums (γ of their length times the absolute sums), of
// each term's factors (a_k(u) from a_(k−1)(u) by two products and a rounded 1/√k: 4kε a side, 8kε a pair; u's own
// rounding raised to the k-th power: 4kε a pair), and of u in the exponentials (a weight's exponent moves by at most
// 8Tε). The held-out fit f₋ᵢ = N/D then lies in an interval, and CV(h) >= Σ_i Σ_col dist(0, ỹ_i − f₋ᵢ)² / n. p is
// the least giving a tail below 1e-10 (about 85 terms at h = range/10, 170 at range/15, 20 at range); beyond
// kMaxTerms (T above about 95), no bound (0).
class ExpansionBound {
 public:
  // active() is false unless: 1-D, Gaussian, Nadaraya–Watson, leave-one-out without a band (exclude), no observation
  // weights, no other mask, every x and y finite, at least 2 points, and `wanted`.
  ExpansionBound(const Problem& p, const Criterion& c, bool wanted);
  Status status() const { return status_; }
  bool active() const { return active_; }
  // A lower bound on the textbook criterion at bandwidth h (0 where none is shown).
  double lower_bound(double h) const;
  static constexpr int kMaxTerms = 256;

 private:
  Status status_ = Status::Ok;
  bool active_ = false;
  int64_t n_ = 0, width_ = 0;
  Scratch<double> x_, y_, absolute_;  // per point: x − c; n × width: ỹ; per column: Σ_j |ỹ_j|
};

}  // namespace ka
