// 1-D span rows from block moments: a prediction's tricube-weighted sums over the run of sorted keys within its
// bandwidth, in O(run / block + block) instead of O(run), from moments of fixed blocks of keys shifted to the query
// (stats/loess/block_moments.h, the device of ka.lowess and ka.loess's direct surface).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/local_row_sums.h"
#include "stats/loess/block_moments.h"

namespace ka::row_sums {

struct WindowBlocks {
  std::vector<double> x, y, omega;  // the keys, the values and the observation weights (1 without) in double
  loess::BlockMoments moments;
};

// The blocks of c's rows where they serve: 1-D span rows (per-query bandwidths) of Nadaraya–Watson or local-linear
// under the tricube kernel, one column of y, keys sorted, no masks, no Σw² asked (with_b false: predictions, not the
// summary), and windows large enough to pay (loess::moment_block_size of the median window of three queries: at
// least 1,024 keys). Null otherwise: the rows then sum point by point.
std::unique_ptr<WindowBlocks> window_blocks(const Context& c, bool with_b);

// Query i's sums (r.a, r.t, in r.sums cleared first) from the blocks: the keys with |x − q| < h, split at q into the
// two sides on which the tricube weight is a polynomial. False where h is too small for the polynomial's powers
// (1/h³ overflows: keys coinciding with the query), for the caller's point-by-point sums.
bool accumulate_blocks(const Context& c, const WindowBlocks& blocks, int64_t i, Row& r);

}  // namespace ka::row_sums
