// The method table and method 'auto' (plan.h).
#include "methods/plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/text.h"
#include "kernel/traits.h"
#include "methods/grid/grid.h"
#include "methods/grid/plan.h"
#include "methods/sparse.h"

namespace ka {
namespace {

// A reason being written (format_text), truncated at kReasonSize.
struct Text {
  char s[kReasonSize] = {};
  template <class... Args>
  void say(const char* format, Args... args) {
    format_text(s, sizeof s, format, args...);
  }
  bool empty() const { return s[0] == 0; }
};

// A pair or point count in reasons, in full (a rounded count would blur the thresholds it is compared with).
struct Count {
  char s[32];
  explicit Count(double n) { format_text(s, sizeof s, "%.0f", n); }
};

// ---- sparse (sparse.h): 'auto' runs it where it measured at least 2× faster than exact ----

// Below this many query-key pairs the exact engine takes milliseconds: building an index does not pay.
constexpr double kSparseMinPairs = double(int64_t(1) << 20);
// The largest share of the keys within reach for which 'auto' runs sparse (measured 2.2× faster than exact at 0.14,
// 1.7× at 0.17: scripts/auto-threshold.mjs).
constexpr double kSparseMaxShare = 0.15;

// The share of the keys within `reach` bandwidths of a query, were the keys spread evenly over their bounding box:
// per head, the product over its dimensions of min(1, 2·reach·h / extent), averaged over the heads. Clustered keys
// make the true share larger, which costs time, never accuracy.
double share_in_reach(const PlanCall& c, double reach) {
  const ConstMatrix k = c.key_data;
  const int64_t M = k.cols;
  double share_sum = 0;
  const int64_t per_head = M / c.heads;
  for (int32_t h = 0; h < c.heads; ++h) {
    double share = 1;
    for (int64_t d = h * per_head; d < (h + 1) * per_head; ++d) {
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      for (int64_t j = 0; j < k.rows; ++j) {
        const double x = k.row(j)[d];
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      const double extent = hi - lo;  // not finite with infinite keys: counted as all in reach
      share *= std::isfinite(extent) ? std::min(1.0, (2 * reach * double(c.bandwidth[d])) / extent) : 1.0;
    }
    share_sum += share;
  }
  return share_sum / c.heads;
}

bool sparse_serves(const PlanCall& c, double, Text& why) {
  const KernelTraits& t = kernel_traits(c.kernel);
  const int64_t per_head = c.dims / c.heads;
  if (!t.sparse)
    why.say("%s attention keeps its bytes: no certified approximation serves it", t.name);
  else if (t.heavy_tail)
    why.say("%s's heavy tail makes a sparse certificate visit nearly every key", t.name);
  else if (per_head > kSparseMaxDims) {
    why.say("%lld dimensions per head: the sparse index serves at most %lld", (long long)per_head,
            (long long)kSparseMaxDims);
  } else if (c.general_mask)
    why.say("a general mask: the sparse method does not serve it");
  else if (c.groups)
    why.say("groups: the sparse method does not serve them");
  else
    return true;
  return false;
}

// Needs the keys (key_data) unless the pair count alone rules sparse out; *needs_keys says when they were missing.
bool sparse_pays(const PlanCall& c, double tolerance, Text& why, bool* needs_keys) {
  const double pairs = double(c.queries) * double(c.keys);
  const Count n(pairs);
  if (pairs < kSparseMinPairs) {
    why.say("%s pairs: below 2^20 = 1048576 the exact engine takes milliseconds and a sparse index does not pay", n.s);
    return false;
  }
  if (!c.key_data.data || !c.bandwidth) {
    *needs_keys = true;
    why.say("the share of keys within reach needs the keys");
    return false;
  }
  const double share = share_in_reach(c, sparse_reach(c.kernel, tolerance));
  const int64_t per_head = c.dims / c.heads;
  const char* kernel = kernel_traits(c.kernel).name;
  if (share > kSparseMaxShare) {
    why.say(
        "%lld-D %s, %.1f %% of keys within reach at tolerance %g: sparse measured under 2x faster than exact above 15 "
        "%%",
        (long long)per_head, kernel, 100 * share, tolerance);
    return false;
  }
  why.say(
      "%lld-D %s, %s pairs, %.1f %% of keys within reach: certified within %g and measured at least 2x faster than "
      "exact (from 2^20 pairs, up to 15 %% in reach)",
      (long long)per_head, kernel, n.s, 100 * share, tolerance);
  return true;
}

// ---- grid (grid.h): 'auto' bins regression samples of this many points on ----

// Below it the exact O(n²) fit takes well under a second.
constexpr int64_t kGridMinPoints = 20000;

bool grid_serves(const PlanCall& c, double, Text& why) {
  const KernelTraits& t = kernel_traits(c.kernel);
  if (c.dims > kMaxGridDims)
    why.say("%lld dimensions: the grid serves 1 or 2", (long long)c.dims);
  else if (!t.grid)
    why.say("%s has no grid (its reach is not finite, or it is no product over dimensions)", t.name);
  else
    return true;
  return false;
}

bool grid_pays(const PlanCall& c, double tolerance, Text& why, bool*) {
  const Count n(double(c.keys));
  const char* kernel = kernel_traits(c.kernel).name;
  if (c.keys < kGridMinPoints) {
    why.say("%lld-D %s, %s points: below 20,000 the exact fit takes well under a second", (long long)c.dims, kernel,
            n.s);
    return false;
  }
  why.say("%lld-D %s, %s points: binned within %g (from 20,000 points; a bandwidth no grid serves runs exactly)",
          (long long)c.dims, kernel, n.s, tolerance);
  return true;
}

bool serves_all(const PlanCall&, double, Text&) { return true; }
bool never_auto(const PlanCall&, double, Text&, bool*) { return false; }

// One row per method, in the order 'auto' tries them. `certified`: its error is bounded, so 'auto' may pick it
// (random features and Nyström only estimate their error, top-k drops keys without a bound).
struct MethodEntry {
  Method method;
  const char* name;
  bool attention, regression;  // the tasks it computes
  bool certified;
  double default_tolerance;
  bool (*serves)(const PlanCall&, double tolerance, Text& why);
  // Whether it costs less than exact; says why either way.
  bool (*pays)(const PlanCall&, double tolerance, Text& why, bool* needs_keys);
};

constexpr MethodEntry kMethods[] = {
    // method                  name               attn   regr   certified tolerance
    {Method::Grid, "grid", false, true, true, 1e-3, grid_serves, grid_pays},
    {Method::Sparse, "sparse", true, false, true, 1e-3, sparse_serves, sparse_pays},
    {Method::TopK, "top-k", true, false, false, 1e-2, serves_all, never_auto},
    {Method::RandomFeatures, "random-features", true, false, false, 1e-2, serves_all, never_auto},
    {Method::Nystrom, "nystrom", true, false, false, 1e-2, serves_all, never_auto},
    {Method::Exact, "exact", true, true, true, 1e-2, serves_all, never_auto},
};

const MethodEntry* entry(Method m) {
  for (const MethodEntry& e : kMethods)
    if (e.method == m) return &e;
  return nullptr;
}

}  // namespace

const char* method_name(Method m) {
  const MethodEntry* e = entry(m);
  return e ? e->name : "auto";
}

double default_tolerance(Task task, Method m) {
  if (task == Task::Regression) m = Method::Grid;
  const MethodEntry* e = entry(m == Method::Auto ? Method::Sparse : m);
  return e ? e->default_tolerance : 1e-3;
}

Plan plan(const PlanCall& call, Method requested, double tolerance) {
  Plan out;
  if (!(tolerance > 0)) tolerance = default_tolerance(call.task, requested);
  out.tolerance = tolerance;
  if (requested != Method::Auto) {
    out.method = requested;
    format_text(out.reason, sizeof out.reason, "%s: asked for", method_name(requested));
    return out;
  }
  Text first;  // why the first method 'auto' could have picked was not: the reason exact runs
  for (const MethodEntry& e : kMethods) {
    if (e.method == Method::Exact) break;
    if (!e.certified || !(call.task == Task::Attention ? e.attention : e.regression)) continue;
    Text why;
    bool needs_keys = false;
    if (e.serves(call, tolerance, why) && e.pays(call, tolerance, why, &needs_keys)) {
      out.method = e.method;
      format_text(out.reason, sizeof out.reason, "%s: %s", e.name, why.s);
      return out;
    }
    if (needs_keys) {
      out.method = Method::Auto;  // undecided: call again with the keys
      format_text(out.reason, sizeof out.reason, "auto: %s", why.s);
      return out;
    }
    if (first.empty()) first = why;
  }
  out.method = Method::Exact;
  format_text(out.reason, sizeof out.reason, "exact: %s",
              first.empty() ? "no certified approximation serves this call" : first.s);
  return out;
}

int64_t plan_grid_nodes(ConstMatrix x, KernelKind kind, const float* h, double tolerance, char* why) {
  const int64_t nodes = grid_nodes(x, kind, h, tolerance);
  if (why) {
    if (nodes > 0) {
      format_text(why, kReasonSize, "grid: %lld-D %s, %lld points on %lld nodes per axis, within %g", (long long)x.cols,
                  kernel_traits(kind).name, (long long)x.rows, (long long)nodes, tolerance);
    } else if (!(tolerance > 0)) {
      format_text(why, kReasonSize, "exact: no grid asked for");
    } else {
      format_text(why, kReasonSize,
                  "exact: at this bandwidth no grid of at most %lld nodes reaches %g, or its "
                  "convolutions cost more than the exact fit of %lld points",
                  (long long)kMaxGridNodes, tolerance, (long long)x.rows);
    }
  }
  return nodes;
}

int64_t plan_grid_cv_cells(double range, KernelKind kind, float h, int64_t points, double tolerance, char* why) {
  const int64_t wanted = grid_nodes(range, double(h), tolerance);
  if (wanted == 0) {  // no grid reaches the tolerance: the caller runs exactly
    if (why)
      format_text(why, kReasonSize, "exact: at this bandwidth no grid of at most %lld nodes reaches %g",
                  (long long)kMaxGridNodes, tolerance);
    return 0;
  }
  int level = 6;  // at least grid_nodes' 64 nodes; more only make the grid more accurate
  while ((int64_t(1) << level) + 1 < wanted) ++level;
  const int64_t cells = int64_t(1) << level;
  if (!convolutions_pay(kind, cells + 1, 1, double(h), range / double(cells), points)) {
    if (why)
      format_text(why, kReasonSize, "exact: the convolutions on %lld nodes cost more than the exact CV of %lld points",
                  (long long)(cells + 1), (long long)points);
    return 0;
  }
  if (why)
    format_text(why, kReasonSize, "grid: 1-D %s, %lld points on %lld nodes, within %g", kernel_traits(kind).name,
                (long long)points, (long long)(cells + 1), tolerance);
  return cells;
}

}  // namespace ka
