// Tricube-weighted polynomial sums over runs of sorted 1-D points, from moments of fixed blocks of points: the sums
// a local fit of degree <= 2 needs, in O(run / block + block) instead of O(run) (lowess.cpp's device, to degree 2).
#pragma once
#include <cstdint>
#include <vector>

namespace ka {

// Σ w·d^p (p = 0 … 4) and Σ w·y·d^p (p = 0 … 2) of a local fit at z, d = x − z.
struct PolynomialSums {
  double s[5] = {};
  double t[3] = {};
};

// On one side of z the tricube weight (1 − (|d|/h)³)³ is the polynomial 1 − 3σ(d/h)³ + 3(d/h)⁶ − σ(d/h)⁹ in d
// (σ = ±1 the side), so a block's share of the sums follows from its raw moments about its centre c,
// a_l = Σ rw (x − c)^l (l <= 13) and e_l = Σ rw y (x − c)^l (l <= 11), by the binomial shift d = (x − c) + (c − z).
// Within a neighbourhood |x − c| and |c − z| are below h, so the shift loses about 2^13 ulps of h^l: the sums
// agree with point-by-point ones to about 1e-12 of their scale.
class BlockMoments {
 public:
  // The moments of blocks of `block` consecutive points (x sorted; rw the fit weights; y the values); block 0 keeps
  // none, and every sum runs point by point.
  void build(const double* x, const double* y, const double* rw, int64_t n, int64_t block);

  // Adds the sums over the points [a, b), all on one side of z (sigma −1: x <= z; +1: x >= z), with |x − z| < h:
  // those a fit of `degree` reads, s[0 … 2·degree] and t[0 … degree] (the others are left as they were).
  void add_side(int64_t a, int64_t b, double z, double h, double sigma, PolynomialSums* sums, int degree = 2) const;

  // The same sums over the whole blocks [first, end) alone (the points [first·block, end·block)).
  void add_blocks(int64_t first, int64_t end, double z, double h, double sigma, int degree, PolynomialSums* sums) const;

  // The same sums over the points [a, b) one by one (inv_h = 1/h); with `squares`, also the squared weights' sums
  // Σ rw² (1 − (|d|/h)³)⁶ d^e (e <= 2·degree) into squares[e], in the same pass.
  void add_points(int64_t a, int64_t b, double z, double inv_h, int degree, PolynomialSums* sums,
                  double* squares = nullptr) const;

  int64_t block() const { return block_; }

 private:
  const double *x_ = nullptr, *y_ = nullptr, *rw_ = nullptr;
  int64_t n_ = 0, block_ = 0;
  std::vector<double> centre_;   // per block
  std::vector<double> moments_;  // per block: a_0 … a_13, e_0 … e_11
};

// The block size for q points per fit: about √(8q), a power of 2 from 64 to 512; 0 (point by point) below
// q = 1024, where the direct sums are as fast.
int64_t moment_block_size(int64_t q);

}  // namespace ka
