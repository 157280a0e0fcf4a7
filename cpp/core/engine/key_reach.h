// The keys a row of a double-precision local fit can weigh, on keys sorted by their first coordinate: the rows that
// local_fit redoes in double and the textbook re-solves of local_solve.h visit these instead of every key.
#pragma once
#include <cstdint>
#include <limits>

#include "base/views.h"
#include "kernel/kernels.h"

namespace ka {

// Keys [first, last) of a row, and the largest log-weight `top` over every admissible key (as `consider` combines
// them).
struct KeyRange {
  int64_t first, last;
  double top;
};

// exp(x) is exactly 0 in double below x = −745.2: a key whose log-weight is this far below the row's top adds 0 to
// every sum of weights (and weighted moments), so leaving it out changes no bit.
constexpr double kDoubleUnderflow = 800;

// Query q's range over `keys` (J rows, with `kernel`'s bandwidths). `consider(j)` folds key j's log-weight into the
// caller's top (and ignores a key that is not admissible); `top()` reads it. With `sorted` (every first coordinate a
// number, in increasing order) and q[0] a number, the range grows from q's place outward, and a side ends where the
// first coordinate's term alone lies more than kDoubleUnderflow below the top so far: every key beyond scores lower
// still (the other dimensions' terms and log ω are at most 0), so its weight is exactly 0 and it cannot be the top.
// Otherwise every key: [0, J). O(log J + the keys in range) on sorted keys.
template <class Consider, class Top>
KeyRange keys_in_reach(ConstMatrix keys, const KernelSpec& kernel, const float* q, bool sorted,
                       const Consider& consider, const Top& top) {
  const int64_t J = keys.rows;
  KeyRange range{0, J, 0};
  if (!sorted || q[0] != q[0]) {
    for (int64_t j = 0; j < J; ++j) consider(j);
    range.top = top();
    return range;
  }
  int64_t lo = 0, hi = J;  // the first key whose first coordinate is >= q's
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (keys.row(mid)[0] < q[0])
      lo = mid + 1;
    else
      hi = mid;
  }
  const auto beyond = [&](int64_t j) {
    return log_score<double>(kernel, q, keys.row(j), 1) < top() - kDoubleUnderflow;
  };
  range.first = range.last = lo;
  for (bool left = true, right = true; left || right;) {
    left = left && range.first > 0 && !beyond(range.first - 1);
    if (left) consider(--range.first);
    right = right && range.last < J && !beyond(range.last);
    if (right) consider(range.last++);
  }
  range.top = top();
  return range;
}

// Whether every key's first coordinate is a number and none is below the one before (keys_in_reach's `sorted`).
inline bool sorted_by_first_coordinate(ConstMatrix keys) {
  for (int64_t j = 0; j < keys.rows; ++j)
    if (!(keys.row(j)[0] == keys.row(j)[0]) || (j > 0 && keys.row(j)[0] < keys.row(j - 1)[0])) return false;
  return true;
}

}  // namespace ka
