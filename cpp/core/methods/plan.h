// Which method computes a call, decided in one place: one table of methods (exact, grid, sparse, top-k, random
// features, Nyström), each saying whether it serves a call and whether it costs less than exact, and method 'auto'
// as one loop over that table (plan.cpp); and the choices inside a fit or a search: a grid's size and which CV
// evaluations bin, run the windowed exact criterion or run exactly (plan_search.cpp). Every decision comes with a
// short sentence saying why.
#pragma once
#include <cstdint>

#include "base/views.h"
#include "engine/local_fit.h"
#include "kernel/kernels.h"
#include "methods/grid/grid.h"

namespace ka {

// The ways to compute a call; Auto asks plan() to choose.
enum class Method : int32_t { Exact, Grid, Sparse, TopK, RandomFeatures, Nystrom, Auto };

// What computes: attention (attention(), attentionWithInfo()) or a kernel regression (predictions, CV scores and
// bandwidth searches of kernelRegression / selectBandwidth / cvScore).
enum class Task : int32_t { Attention, Regression };

// What a regression call computes over its sample: a model's fits (predictions and fit summaries at a bandwidth), or
// a criterion of the bandwidth (a CV score, a search): leave-one-out CV, AICc, or CV searched by its gradient; or the
// plug-in rule (stats/plugin.h), which bins the sample itself.
enum class PlanCriterion : int32_t { Fit, Cv, Aicc, CvGradient, Plugin };

// The field of a call that keeps a method asked for from serving it (Plan::refused).
enum class PlanField : int32_t {
  None,
  Task,
  Kernel,
  Dims,
  Mask,
  Groups,
  Estimator,
  Weights,
  Span,
  Criterion,
  Discrete
};

// What plan() needs to know of a call. Regression: queries = keys = n sample points, dims = the sample's columns.
struct PlanCall {
  Task task = Task::Attention;
  KernelKind kernel = KernelKind::Softmax;
  int64_t queries = 0;  // I
  int64_t keys = 0;     // J
  int64_t dims = 1;     // M, over every head
  int32_t heads = 1;
  // Attention's masks: `masked`, any mask but causal (key padding, leave-one-out, a general mask); `general_mask`,
  // an I×J mask. Causal counts as neither: every method serves it.
  bool masked = false;
  bool general_mask = false;
  bool groups = false;  // query and key groups
  // Regression: the estimator (its degree: Nadaraya–Watson 0, local-linear 1, local-quadratic 2; the grid serves
  // degrees 0 and 1, the sparse method degree 0), what the call computes, blocked CV
  // (exclude > 0), observation weights, per-query (span) bandwidths.
  Estimator estimator = Estimator::LocalLinear;
  PlanCriterion criterion = PlanCriterion::Fit;
  bool exclude = false;
  bool weights = false;
  bool span = false;
  // Regression: discrete (categorical or ordered) columns among the sample's (stats/mixed.h); `dims` counts the
  // continuous ones.
  bool discrete = false;
  // The keys (J × dims) and the bandwidths (dims), for the share of keys within the sparse method's reach; may be
  // null (then sparse is judged on the shape alone, as if every key were in reach).
  ConstMatrix key_data;
  const float* bandwidth = nullptr;
};

constexpr int kReasonSize = 240;

struct Plan {
  Method method = Method::Exact;
  double tolerance = 0;  // the one given, or default_tolerance's when it was <= 0
  // Not None: the method asked for cannot serve the call, this field of it forbids it, and `reason` says why (a
  // clause without the method's name: "a general mask: the sparse method does not serve it").
  PlanField refused = PlanField::None;
  char reason[kReasonSize] = {};  // "sparse: 2-D gaussian, …": the method's name, a colon, why
};

// The method that runs `call` when `requested` is asked for at `tolerance` (in (0, 1); a value <= 0 means the
// default, default_tolerance). Every method is checked against the call the same way, asked for or tried by Auto:
//   - whether it serves the call (the task, the kernel, dimensions, masks, groups, the estimator, observation weights,
//     span bandwidths, the criterion); a method asked for that does not comes back refused, with the field and why;
//   - whether it computes the call's criterion: a regression's grid bins a model's fits and leave-one-out CV; on
//     AICc, blocked CV and the plug-in rule the plan says Exact (and why), and it refuses CV by its gradient when
//     asked for (Auto runs that exactly); the sparse method computes a model's fits, and any criterion runs
//     exactly;
//   - for Auto only, whether it costs less than exact (`pays`).
// A method asked for that serves the call runs, with "asked for" as the reason. Auto walks the method table in order
// and takes the first method that 'auto' may pick for the task (its error is certified and its cost measured), that
// serves the call and that pays; exact when none does, with the first refusal as the reason. Auto comes back
// (undecided) only when the call's key_data or bandwidth is null and the keys' spread decides: call again with them.
Plan plan(const PlanCall& call, Method requested, double tolerance);

// The tolerance a call runs at when none is given. Attention: sparse 1e-3 (a weight ratio), random features, Nyström
// and top-k 1e-2 (an RMS error target), Auto that of sparse, the method it may choose. Regression: 1e-3 whatever the
// method (the grid's relative error, and the sparse model's weight ratio).
double default_tolerance(Task task, Method m);

// The JS name of a method ('exact', 'grid', 'sparse', 'top-k', 'random-features', 'nystrom', 'auto').
const char* method_name(Method m);

// Regression on a grid, per bandwidth: grid_nodes (grid.h) of the sample x at bandwidths h, and in `why` (may be
// null) a sentence saying whether the grid runs or, when it returns 0, why the fit runs exactly. The one place that
// decides grid-or-exact for a bandwidth: predictions, CV scores, fit summaries and the search call it.
int64_t plan_grid_nodes(const SampleExtent& x, KernelKind kind, const float* h, double tolerance, char* why = nullptr);

// Leave-one-out CV of a 2-D sample sorted by its first coordinate (a search's), per bandwidth: plan_grid_nodes, and 0
// where the estimator is local-linear and the exact score, whose held-out points visit only the keys within the
// kernel's reach along x₁, costs less than the grid's convolutions (grid_cv_pays_2d, grid/plan.h). `why` as there.
int64_t plan_grid_cv_nodes(const SampleExtent& x, KernelKind kind, Estimator estimator, const float* h,
                           double tolerance, char* why = nullptr);

// A 2-D leave-one-out search's scan point (cv_search_parts.h, kCoarseScanSteps): the tolerance its score runs at.
// `tolerance` where plan_grid_cv_nodes gives a grid there; else the finest of 2·tolerance, 4·tolerance, … (`steps`
// doublings at most, none above `coarsest`) that it gives one for; else 0 (the point runs exactly).
double plan_scan_tolerance(const SampleExtent& x, KernelKind kind, Estimator estimator, const float* h,
                           double tolerance, int steps, double coarsest);
// The coarsest tolerance plan_scan_tolerance can give (the last of its doublings).
double coarsest_scan_tolerance(double tolerance, int steps, double coarsest);

// Leave-one-out CV of a 1-D sample over a bandwidth search (GridCv, grid.h), per bandwidth: the cells of the grid that
// scores bandwidth h for `points` points (those with weight > 0) spread over `range` (> 0), a power of two of at least
// 64 (a grid of 2^k + 1 nodes, at least grid_nodes(range, h, tolerance) of them, derived from the search's finest
// grid); 0 when no grid reaches the tolerance or its convolutions cost more than the exact score (which visits, per
// held-out point, only the keys within the kernel's reach: exact_cv_cost in grid/plan.h). `why`
// (may be null) as in plan_grid_nodes. What GridCv::score asks for every bandwidth.
int64_t plan_grid_cv_cells(double range, KernelKind kind, float h, int64_t points, double tolerance,
                           char* why = nullptr);

// A descending 1-D scan's point (select_cv's exact band, docs/regression.md "The lower end"): whether the float32
// windowed criterion (stats/cv_band_window.h) scores Gaussian bandwidth h of `points` points spread over `range`,
// rather than the grid plan_grid_cv_cells gives h (or the exact fit, where it gives none): where its keys in reach cost
// less than the grid's convolutions and its pass over the points. `keys_in_reach` (when >= 0): the sample's own count
// of (row, key) pairs within the band's reach, for the uniform spread's estimate, which a clustered sample exceeds many
// times.
bool plan_band_cv(double range, KernelKind kind, Estimator estimator, float h, int64_t points, double tolerance,
                  double keys_in_reach = -1);
// A descending 1-D scan's grid point on a large sample (its band screen, stats/cv_band_screen.h): whether the band's
// criterion on `rows` of the `points` rows costs less than kScreenShare of the grid's score at h, so that screening
// the point first pays, and costs little where the screen does not skip it (the grid's cost grows as h falls, the
// screen's shrinks: the scan's lowest grid points, far below the minimum at 10⁶ points).
bool plan_band_screen(double range, KernelKind kind, Estimator estimator, float h, int64_t points, int64_t rows,
                      double tolerance);
// The band's reach in bandwidths on `points` points: its keys within 2^-(25 + log₂ n) of a row's nearest key's weight.
double band_reach(double points);

}  // namespace ka
