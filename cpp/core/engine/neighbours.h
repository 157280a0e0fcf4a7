// Nearest-neighbour distances for span bandwidths (Cleveland & Devlin 1988): each query's distance to its k-th
// nearest key, with dimension d divided by scale[d] first.
#pragma once
#include <cstdint>

#include "base/status.h"
#include "base/views.h"

namespace ka {

// out[i] = the Euclidean distance from query i to its k-th nearest key (1 ≤ k ≤ J) in the scaled space
// x_d / scale[d] (scale: dims positive finite floats). A query with a NaN coordinate gets NaN. The keys are sorted
// once by their first scaled coordinate (O(J log J)). In 1-D the k nearest keys are a run of k consecutive sorted
// keys, found by bisection (O(log J) per query). In more dimensions each query walks outward from its place in that
// order, nearer side first, and stops once the gap along the first coordinate alone reaches the current k-th
// distance: the keys of a slab around the query (no n² beyond the fit).
Status kth_neighbour_distances(ConstMatrix keys, ConstMatrix queries, const float* scale, int64_t k, int32_t threads,
                               double* out);

// Writes into idx[0, n) the order of the points by key, ties by index (key[idx[·]] increases). One sort instance for
// every place that orders points by one coordinate (span distances, the CV searches' sorted sample and scan bound,
// LOWESS, the plug-in bandwidth), instead of one std::sort or std::stable_sort per comparator: a stable radix sort of
// the keys' bits from 4,096 points (std::stable_sort below that, or when its 3n words of scratch cannot be had).
void order_by(const double* key, int64_t* idx, int64_t n);

// Sorts n values (no NaN) in place into increasing order, by the same radix sort from 4,096 values (std::sort below
// that): for a sorted copy of a column, twice as fast as order_by with no gather after it (median_spacing).
void sort_values(double* values, int64_t n);

}  // namespace ka
