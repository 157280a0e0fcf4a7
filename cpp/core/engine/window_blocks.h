// 1-D span rows from block moments: a prediction's tricube-weighted sums over the run of sorted keys within its
// bandwidth, in O(run / block + block) instead of O(run), from moments of fixed blocks of keys shifted to the query
// (engine/block_moments.h, the device of ka.loess's direct surface).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/local_row_sums.h"
#include "engine/block_moments.h"

namespace ka::row_sums {

// Σ w² d^p (p = 0, 1, 2) over runs of sorted keys, from the moments Σ ω² (x − c)^l (l <= 20) of the blocks of
// BlockMoments: on one side of q the squared tricube weight (1 − σ(d/h)³)⁶ is a polynomial of degree 18 in
// d = x − q, shifted to q binomially as BlockMoments shifts its own (|x − c| and |c − q| below h: about 2^20 ulps of
// h^l lost, 1e-10 of the sums' scale, for the summary's Σℓ² and effective keys).
class SquaredBlockMoments {
 public:
  void build(const double* x, const double* omega, int64_t n, int64_t block);
  // Adds the sums over the whole blocks [first, end), all on one side of q (sigma −1: x <= q; +1: x >= q), with
  // |x − q| < h: those a fit of `degree` (0 or 1) reads, sums[0 … 2·degree]. (BlockMoments::add_points sums the
  // keys outside whole blocks in its pass.)
  void add_blocks(int64_t first, int64_t end, double q, double h, double sigma, int degree, double sums[3]) const;

 private:
  static constexpr int kMoments = 21;
  std::vector<double> centre_, moments_;  // per block: its centre, Σ ω² (x − c)^l for l = 0 … 20
};

struct WindowBlocks {
  std::vector<double> x, y, omega;  // the keys, the values and the observation weights (1 without) in double
  BlockMoments moments;
  SquaredBlockMoments squared;  // with_b only: Σw² z zᵀ
  bool with_b = false;
};

// The blocks of c's rows where they serve: 1-D span rows (per-query bandwidths) of Nadaraya–Watson or local-linear
// under the tricube kernel, one column of y, keys sorted, no masks (with_b: with the squared weights' sums too, for
// the summary and intervals), and windows large enough to pay (moment_block_size of the median window of three
// queries: at least 1,024 keys). Null otherwise: the rows then sum point by point.
std::unique_ptr<WindowBlocks> window_blocks(const Context& c, bool with_b);

// Query i's sums (r.a, r.t and with_b r.b, in r.sums cleared first) from the blocks: the keys with |x − q| < h, split
// at q into the two sides on which the tricube weight is a polynomial. False where h is too small for the polynomial's
// powers (1/h³ overflows: keys coinciding with the query) or the row is of degree 2, for the caller's point-by-point
// sums.
bool accumulate_blocks(const Context& c, const WindowBlocks& blocks, int64_t i, Row& r);

}  // namespace ka::row_sums
