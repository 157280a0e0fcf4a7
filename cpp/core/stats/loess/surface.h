// loess's interpolated surface (R's lowesb/lowese; Cleveland & Grosse 1991, §4): exact local fits, value and
// slopes, at the vertices of the k-d tree, blended in between; its operator for the statistics and standard errors.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/parallel.h"
#include "base/status.h"
#include "stats/loess/blend.h"
#include "stats/loess/kd_tree.h"
#include "stats/loess/local_fit.h"
#include "stats/loess/sample.h"

namespace ka::loess {

struct FitSpec {
  int64_t q = 1;  // points per neighbourhood: min(n, ⌊n·span⌋)
  double span = 0.75;
  int32_t degree = 2;
  int32_t threads = 1;  // the fits (vertices, direct points) run on up to this many; each is the same arithmetic
};

// The fits' split over `threads`: `count` fits of about `work` operations each in `tasks` runs of consecutive ones
// (4 per thread), each run as body(begin, end, task) on whichever thread is free. Below 2^15 operations in all, one
// run on the calling thread: starting a thread (waking a pool worker, in WebAssembly) costs tens of microseconds.
inline int32_t fit_threads(int64_t count, int64_t work, int32_t threads) {
  return count * work < (int64_t(1) << 15) ? 1 : threads;
}
inline int64_t fit_tasks(int64_t count, int64_t work, int32_t threads) {
  const int32_t used = fit_threads(count, work, threads);
  return std::min<int64_t>(count, used > 1 ? int64_t(used) * 4 : 1);
}
template <class Body>
void for_fit_tasks(int64_t count, int64_t work, int32_t threads, Body&& body) {
  const int64_t tasks = fit_tasks(count, work, threads), per = tasks ? (count + tasks - 1) / tasks : 0;
  parallel_for(tasks, fit_threads(count, work, threads),
               [&](int64_t t) { body(t * per, std::min(count, (t + 1) * per), t); });
}

// What a vertex's fit does to the data, kept for the statistics and standard errors: the entries of the value and
// slopes for point i are rows·design_row(x_i − vertex)·tricube(d²/rho)·rw_i, zero where d² >= rho.
struct VertexOperator {
  double rho = 0;
  double rows[(kMaxDims + 1) * kMaxColumns] = {};  // rows c = 0 … dims of A, k entries each (zero where c >= k)
  int k = 1;
};

// Fits the local polynomial (weights rw, working order) at every vertex: values[v·(dims + 1) + c] is the value
// (c = 0) and slope along coordinate c − 1 (0 for degree 0). ops: when not null, receives every vertex's operator.
// pseudo_inverse (or null): set when some vertex fit dropped a singular value. Returns BadArgument when a vertex has
// a zero-width neighbourhood.
Status fit_vertices(const Sample& sample, const KdTree& tree, const FitSpec& spec, const double* y, const double* rw,
                    double* values, std::vector<VertexOperator>* ops, bool* pseudo_inverse);

// The surface at the data points (working order): out[i], on up to `threads` threads.
void surface_at_data(const Sample& sample, const KdTree& tree, const double* values, int32_t threads, double* out);

// The entries ℓ_c (c = 0 … dims) of point i (working order) in vertex v's fit with weights rw; false (and zeros)
// outside its neighbourhood.
bool vertex_operator_entries(const Sample& sample, const KdTree& tree, const VertexOperator& op, int32_t v, int64_t i,
                             int32_t degree, const double* rw, double* out);

// The trace of the interpolated surface's operator at the data: Σ_i L_ii, L_ii the blend of point i's own entries
// in the fits of the vertices its value blends (R's ehg139 with the diagonal).
double interpolated_trace(const Sample& sample, const KdTree& tree, const std::vector<VertexOperator>& ops,
                          int32_t degree, const double* rw);

// The whole operator at the data, row-major n × n in working order (R's lowesl at the data): L[i][j] the amount
// y_j contributes to the surface at x_i. OutOfMemory when its scratch (vertices × (dims + 1) × n doubles) cannot
// be had.
Status interpolated_operator(const Sample& sample, const KdTree& tree, const std::vector<VertexOperator>& ops,
                             int32_t degree, const double* rw, double* L);

}  // namespace ka::loess
