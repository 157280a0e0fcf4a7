// The method table and method 'auto' (plan.h).
#include "methods/plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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
  // Says why, and returns the answer it explains.
  template <class Answer, class... Args>
  Answer answer(Answer a, const char* format, Args... args) {
    say(format, args...);
    return a;
  }
  bool empty() const { return s[0] == 0; }
};

// A pair or point count in reasons, in full (a rounded count would blur the thresholds it is compared with).
struct Count {
  char s[32];
  explicit Count(double n) { format_text(s, sizeof s, "%.0f", n); }
};

// Whether a method that serves a call computes its criterion itself, runs it exactly, or (asked for) refuses it.
enum class Verdict { Computes, Exact, Refuses };

// The kernels with `trait` (a distance kernel for a regression), for a refusal: "gaussian, laplacian and cauchy".
void say_kernels(Text& out, bool KernelTraits::*trait, Task task) {
  int count = 0, listed = 0;
  for (const KernelTraits& t : kKernelTraits) count += t.*trait && (task == Task::Attention || t.distance);
  for (const KernelTraits& t : kKernelTraits) {
    if (!(t.*trait && (task == Task::Attention || t.distance))) continue;
    const size_t used = std::strlen(out.s);
    const char* separator = listed == 0 ? "" : listed + 1 == count ? " and " : ", ";
    format_text(out.s + used, sizeof out.s - used, "%s%s", separator, t.name);
    ++listed;
  }
}

// ---- sparse (sparse.h): 'auto' runs it for attention where it measured at least 2× faster than exact ----

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

PlanField sparse_serves(const PlanCall& c, const char*, Text& why) {
  if (c.task == Task::Attention) {
    const int64_t per_head = c.dims / c.heads;
    if (per_head > kSparseMaxDims)
      return why.answer(PlanField::Dims, "%lld dimensions per head: the sparse index serves at most %lld",
                        (long long)per_head, (long long)kSparseMaxDims);
    if (c.general_mask) return why.answer(PlanField::Mask, "a general mask: the sparse method does not serve it");
    if (c.groups) return why.answer(PlanField::Groups, "groups: the sparse method does not serve them");
    return PlanField::None;
  }
  if (c.span)
    return why.answer(PlanField::Span, "span bandwidths: the sparse method serves one bandwidth for every query");
  if (c.discrete) return why.answer(PlanField::Discrete, "discrete columns: the sparse method does not serve them");
  if (c.dims > kSparseMaxDims)
    return why.answer(PlanField::Dims, "%lld dimensions: the sparse index serves at most %lld", (long long)c.dims,
                      (long long)kSparseMaxDims);
  if (c.estimator != Estimator::NadarayaWatson)
    return why.answer(PlanField::Estimator, "the sparse method fits Nadaraya-Watson (degree 0) only");
  if (c.weights) return why.answer(PlanField::Weights, "observation weights: the sparse method does not serve them");
  return PlanField::None;
}

// A sparse model's fits; its bandwidth search and its criteria run exactly.
Verdict sparse_computes(const PlanCall& c, Text& why) {
  if (c.task == Task::Attention || c.criterion == PlanCriterion::Fit) return Verdict::Computes;
  why.say("the sparse method computes a model's fits; a criterion runs exactly");
  return Verdict::Exact;
}

// Needs the keys (key_data) unless the kernel or the pair count alone rules sparse out; *needs_keys says when they
// were missing.
bool sparse_pays(const PlanCall& c, double tolerance, Text& why, bool* needs_keys) {
  const double pairs = double(c.queries) * double(c.keys);
  const Count n(pairs);
  if (kernel_traits(c.kernel).heavy_tail) {
    why.say("%s's heavy tail makes a sparse certificate visit nearly every key", kernel_traits(c.kernel).name);
    return false;
  }
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

PlanField grid_serves(const PlanCall& c, const char*, Text& why) {
  if (c.span) return why.answer(PlanField::Span, "span bandwidths run exactly");
  // Mixed data with one continuous column: a group's fits binned over every key with its discrete factors
  // (mixed.h), the leave-one-out search's score per combination of levels (grid/cv_mixed.h).
  const bool mixed_served = c.criterion == PlanCriterion::Fit || (c.criterion == PlanCriterion::Cv && !c.exclude);
  if (c.discrete && !(c.dims == 1 && mixed_served))
    return why.answer(PlanField::Discrete,
                      "discrete columns: the grid serves mixed data with one continuous column, its fits and "
                      "leave-one-out CV search; other mixed criteria run exactly");
  if (c.dims > kMaxGridDims)
    return why.answer(PlanField::Dims, "%lld dimensions: the grid serves 1 or 2", (long long)c.dims);
  if (c.estimator == Estimator::LocalQuadratic)
    return why.answer(PlanField::Estimator, "local-quadratic (degree 2) runs exactly: the grid bins degrees 0 and 1");
  return PlanField::None;
}

// The grid bins a model's fits, leave-one-out CV and AICc, and in 1-D blocked CV (its band left out of each point's
// grid moments exactly, cv_band.h); 2-D blocked CV runs exactly, CV searched by its gradient (that of the exact CV)
// refuses a grid asked for, and the plug-in rule runs as it always does (on its own bins).
Verdict grid_computes(const PlanCall& c, Text& why) {
  if (c.criterion == PlanCriterion::CvGradient) return why.answer(Verdict::Refuses, "rule 'cv-gradient' runs exactly");
  if (c.exclude && c.dims > 1)
    return why.answer(Verdict::Exact,
                      "blocked CV (exclude) runs exactly in %lld-D: the grid leaves its band out in 1-D",
                      (long long)c.dims);
  if (c.criterion == PlanCriterion::Plugin)
    return why.answer(Verdict::Exact, "rule 'plugin' bins the sample itself, in double, as KernSmooth's dpill");
  return Verdict::Computes;
}

// A leave-one-out search scores dozens of bandwidths, each exactly an O(n·k) pass, k the keys in reach (1-D: at 10⁴
// points Brent's points near h = 0.02 took 55–95 ms each, the search 0.75 s, 2.25 s at 19,000; 2-D: 2.0 s at 19,000,
// 1.05 s on the grid): from this many points it bins, where each bandwidth's plan finds the grid cheaper
// (plan_grid_cv_nodes), its model's fit at the chosen h staying exact below kGridMinPoints.
constexpr int64_t kGridMinSearchPoints = 5000;

bool grid_pays(const PlanCall& c, double tolerance, Text& why, bool*) {
  const Count n(double(c.keys));
  const char* kernel = kernel_traits(c.kernel).name;
  // An AICc search scans as leave-one-out CV's does.
  const bool aicc = c.criterion == PlanCriterion::Aicc;
  const bool search = (c.criterion == PlanCriterion::Cv || aicc) && c.dims <= 2 && !c.exclude;
  const char* criterion = aicc ? "an AICc" : "a CV";
  if (search && c.keys >= kGridMinSearchPoints && c.keys < kGridMinPoints) {
    why.say(
        "%lld-D %s, %s points: %s search binned within %g (from 5,000 points%s; its model's fit is exact below "
        "20,000)",
        (long long)c.dims, kernel, n.s, criterion, tolerance, c.discrete ? ", per combination of levels" : "");
    return true;
  }
  if (c.keys < kGridMinPoints) {
    if (search)
      why.say("%lld-D %s, %s points: below 5,000 %s search runs exactly in well under a second", (long long)c.dims,
              kernel, n.s, criterion);
    else
      why.say("%lld-D %s, %s points: below 20,000 the exact fit takes well under a second", (long long)c.dims, kernel,
              n.s);
    return false;
  }
  why.say("%lld-D %s, %s points: binned within %g (from 20,000 points; a bandwidth no grid serves runs exactly)%s",
          (long long)c.dims, kernel, n.s, tolerance,
          c.exclude    ? "; blocked CV's band left out exactly"
          : c.discrete ? "; per combination of levels"
                       : "");
  return true;
}

// ---- random features and Nyström (random_features.h, nystrom.h): causal masks only, no groups ----

PlanField low_rank_serves(const PlanCall& c, const char* name, Text& why) {
  if (c.masked) return why.answer(PlanField::Mask, "a mask other than causal: %s serves causal masks only", name);
  if (c.groups) return why.answer(PlanField::Groups, "groups: %s does not serve them", name);
  return PlanField::None;
}

PlanField serves_all(const PlanCall&, const char*, Text&) { return PlanField::None; }
Verdict computes_all(const PlanCall&, Text&) { return Verdict::Computes; }
bool never_auto(const PlanCall&, double, Text&, bool*) { return false; }

// One row per method, in the order 'auto' tries them. 'auto' picks a method for a task only where its error is
// certified and its cost measured (random features and Nyström only estimate their error, top-k drops keys without a
// bound, and sparse regression's cost has not been measured against the exact fit).
struct MethodEntry {
  Method method;
  const char* name;
  bool attention, regression;            // the tasks it computes
  bool auto_attention, auto_regression;  // 'auto' may pick it for that task
  double default_tolerance;
  bool KernelTraits::*kernels;  // the kernels it serves (null: every kernel of the task)
  const char* other_kernel;     // why 'auto' passes it over for a kernel it does not serve (%s: the kernel's name)
  bool kernel_last;             // the kernel is checked after `serves` (the grid: span bandwidths, dimensions first)
  PlanField (*serves)(const PlanCall&, const char* name, Text& why);
  Verdict (*computes)(const PlanCall&, Text& why);
  // Whether it costs less than exact; says why either way.
  bool (*pays)(const PlanCall&, double tolerance, Text& why, bool* needs_keys);
};

constexpr MethodEntry kMethods[] = {
    {Method::Grid, "grid", false, true, false, true, 1e-3, &KernelTraits::grid,
     "%s has no grid (its reach is not finite, or it is no product over dimensions)", true, grid_serves, grid_computes,
     grid_pays},
    {Method::Sparse, "sparse", true, true, true, false, 1e-3, &KernelTraits::sparse,
     "%s attention keeps its bytes: no certified approximation serves it", false, sparse_serves, sparse_computes,
     sparse_pays},
    {Method::TopK, "top-k", true, false, false, false, 1e-2, nullptr, "", false, serves_all, computes_all, never_auto},
    {Method::RandomFeatures, "random-features", true, false, false, false, 1e-2, &KernelTraits::random_features, "",
     false, low_rank_serves, computes_all, never_auto},
    {Method::Nystrom, "nystrom", true, false, false, false, 1e-2, &KernelTraits::nystrom, "", false, low_rank_serves,
     computes_all, never_auto},
    {Method::Exact, "exact", true, true, false, false, 1e-2, nullptr, "", false, serves_all, computes_all, never_auto},
};

const MethodEntry* entry(Method m) {
  for (const MethodEntry& e : kMethods)
    if (e.method == m) return &e;
  return nullptr;
}

// Whether `e` computes `c`'s kernel; says why not, for a method asked for (`asked`: the kernels it serves) or one
// 'auto' passes over.
bool kernel_served(const MethodEntry& e, const PlanCall& c, bool asked, Text& why) {
  const KernelTraits& t = kernel_traits(c.kernel);
  if (!e.kernels || t.*e.kernels) return true;
  if (!asked) {
    why.say(e.other_kernel, t.name);
  } else {
    why.say("%s serves ", e.name);
    say_kernels(why, e.kernels, c.task);
    const size_t used = std::strlen(why.s);
    format_text(why.s + used, sizeof why.s - used, "; got %s", t.name);
  }
  return false;
}

// Whether `e` serves `c`: its task, its kernels and its own checks (in the entry's order). Says why not.
PlanField check(const MethodEntry& e, const PlanCall& c, bool asked, Text& why) {
  if (!(c.task == Task::Attention ? e.attention : e.regression))
    return why.answer(PlanField::Task, "%s does not compute %s", e.name,
                      c.task == Task::Attention ? "attention" : "a regression");
  if (!e.kernel_last && !kernel_served(e, c, asked, why)) return PlanField::Kernel;
  const PlanField field = e.serves(c, e.name, why);
  if (field != PlanField::None) return field;
  if (e.kernel_last && !kernel_served(e, c, asked, why)) return PlanField::Kernel;
  return PlanField::None;
}

// The plan of `c` when method `e` is asked for: it runs, runs exactly (its criterion), or is refused.
Plan asked(const PlanCall& c, const MethodEntry& e, Plan out) {
  Text why;
  out.method = e.method;
  out.refused = check(e, c, true, why);
  if (out.refused == PlanField::None) {
    const Verdict v = e.computes(c, why);
    if (v == Verdict::Computes) {
      format_text(out.reason, sizeof out.reason, "%s: asked for", e.name);
      return out;
    }
    if (v == Verdict::Exact) {
      out.method = Method::Exact;
      format_text(out.reason, sizeof out.reason, "exact: %s", why.s);
      return out;
    }
    out.refused = PlanField::Criterion;
  }
  format_text(out.reason, sizeof out.reason, "%s", why.s);
  return out;
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
  if (requested != Method::Auto) return asked(call, *entry(requested), out);
  Text first;  // why the first method 'auto' could have picked was not: the reason exact runs
  for (const MethodEntry& e : kMethods) {
    if (e.method == Method::Exact) break;
    if (!(call.task == Task::Attention ? e.auto_attention : e.auto_regression)) continue;
    Text why;
    bool needs_keys = false;
    if (check(e, call, false, why) == PlanField::None && e.pays(call, tolerance, why, &needs_keys) &&
        e.computes(call, why) == Verdict::Computes) {
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

}  // namespace ka
