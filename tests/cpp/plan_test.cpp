// The method table (plan.h) against its documented rules, computed here independently: 'auto' runs sparse for
// attention from 2^20 pairs with at most 15 % of the keys within reach (the share from the keys' extent), the grid
// for regression from 20,000 points in 1-D and 2-D; each refusal names its cause; a method asked for runs where it
// serves the call and is refused, with the field that forbids it, where it does not.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "methods/grid/grid.h"
#include "methods/grid/plan.h"
#include "methods/plan.h"

using namespace ka;

namespace {

// J keys evenly spaced over [-1, 1] in each of `dims` columns (extent exactly 2 along each).
std::vector<float> even_keys(int64_t J, int64_t dims) {
  std::vector<float> k(size_t(J * dims));
  for (int64_t j = 0; j < J; ++j)
    for (int64_t d = 0; d < dims; ++d)
      k[size_t(j * dims + d)] = float(-1 + 2.0 * double((j * (d + 3)) % J) / double(J - 1));
  return k;
}

PlanCall attention_call(KernelKind kind, int64_t I, int64_t J, int64_t dims, const std::vector<float>& keys,
                        const std::vector<float>& h) {
  PlanCall c;
  c.kernel = kind;
  c.queries = I;
  c.keys = J;
  c.dims = dims;
  c.key_data = {keys.data(), J, dims, dims};
  c.bandwidth = h.data();
  return c;
}

bool starts(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

}  // namespace

TEST_CASE("auto runs sparse up to 15 % of the keys within reach, and exactly above") {
  const int64_t J = 1024;
  const std::vector<float> keys = even_keys(J, 1);
  for (double tolerance : {1e-3, 1e-6}) {
    const double reach = std::sqrt(-2 * std::log(tolerance));  // Gaussian: exp(-r²/2) = tolerance
    for (double share : {0.14, 0.16}) {
      CAPTURE(tolerance);
      CAPTURE(share);
      const std::vector<float> h{float(share * 2 / (2 * reach))};
      const Plan p = plan(attention_call(KernelKind::Gaussian, J, J, 1, keys, h), Method::Auto, tolerance);
      CHECK(p.method == (share < 0.15 ? Method::Sparse : Method::Exact));
      CHECK(starts(p.reason, share < 0.15 ? "sparse: 1-D gaussian" : "exact: 1-D gaussian"));
      CHECK(p.tolerance == tolerance);
    }
  }
}

TEST_CASE("auto needs 2^20 pairs, and asks for the keys only when their spread decides") {
  const std::vector<float> keys = even_keys(1024, 2), h{0.01f, 0.01f};
  PlanCall c = attention_call(KernelKind::Epanechnikov, 1023, 1024, 2, keys, h);
  Plan p = plan(c, Method::Auto, 0);
  CHECK(p.method == Method::Exact);
  CHECK(starts(p.reason, "exact: 1047552 pairs: below 2^20"));
  c.queries = 1024;
  CHECK(plan(c, Method::Auto, 0).method == Method::Sparse);
  c.key_data = {};
  p = plan(c, Method::Auto, 0);
  CHECK(p.method == Method::Auto);  // undecided without the keys
  c.queries = 1023;
  CHECK(plan(c, Method::Auto, 0).method == Method::Exact);  // decided by the shape alone
}

TEST_CASE("auto keeps exact for softmax, a heavy tail, more than 3 dimensions per head, a general mask and groups") {
  const std::vector<float> keys = even_keys(2048, 4), h(4, 0.001f);
  struct Refusal {
    KernelKind kind;
    int64_t dims;
    int32_t heads;
    bool general, groups;
    const char* reason;
  };
  const Refusal cases[] = {
      {KernelKind::Softmax, 4, 1, false, false, "exact: softmax attention keeps its bytes"},
      {KernelKind::Cauchy, 1, 1, false, false, "exact: cauchy's heavy tail"},
      {KernelKind::Gaussian, 4, 1, false, false, "exact: 4 dimensions per head"},
      {KernelKind::Gaussian, 2, 1, true, false, "exact: a general mask"},
      {KernelKind::Gaussian, 2, 1, false, true, "exact: groups"},
  };
  for (const Refusal& r : cases) {
    CAPTURE(r.reason);
    PlanCall c = attention_call(r.kind, 2048, 2048, r.dims, keys, h);
    c.key_data.cols = c.key_data.stride = r.dims;
    c.heads = r.heads;
    c.general_mask = r.general;
    c.groups = r.groups;
    const Plan p = plan(c, Method::Auto, 0);
    CHECK(p.method == Method::Exact);
    CHECK(starts(p.reason, r.reason));
  }
  PlanCall two_heads = attention_call(KernelKind::Gaussian, 2048, 2048, 4, keys, h);
  two_heads.heads = 2;
  CHECK(plan(two_heads, Method::Auto, 0).method == Method::Sparse);
}

TEST_CASE("a method asked for runs where it serves the call, with the default tolerance of its task") {
  PlanCall c;
  c.kernel = KernelKind::Gaussian;  // every attention method serves a 1-D Gaussian without masks
  for (Method m : {Method::Exact, Method::Sparse, Method::TopK, Method::RandomFeatures, Method::Nystrom}) {
    const Plan p = plan(c, m, 0);
    CHECK(p.method == m);
    CHECK(p.refused == PlanField::None);
    CHECK(std::string(p.reason) == std::string(method_name(m)) + ": asked for");
  }
  CHECK(plan(c, Method::Sparse, 0).tolerance == 1e-3);
  CHECK(plan(c, Method::Auto, 0).tolerance == 1e-3);
  CHECK(plan(c, Method::RandomFeatures, 0).tolerance == 1e-2);
  CHECK(plan(c, Method::Nystrom, 0.2).tolerance == 0.2);
  c.task = Task::Regression;
  CHECK(plan(c, Method::Exact, 0).tolerance == 1e-3);
}

TEST_CASE("a method asked for that cannot serve the call is refused, with the field that forbids it and why") {
  struct Refusal {
    const char* name;
    Method method;
    PlanCall call;
    PlanField field;
    const char* reason;
  };
  PlanCall softmax, gaussian, regression;
  gaussian.kernel = regression.kernel = KernelKind::Gaussian;
  regression.task = Task::Regression;
  regression.estimator = Estimator::NadarayaWatson;
  const auto with = [](PlanCall c, auto set) {
    set(c);
    return c;
  };
  const Refusal cases[] = {
      {"sparse softmax", Method::Sparse, softmax, PlanField::Kernel,
       "sparse serves gaussian, laplacian, cauchy, epanechnikov, tricube and uniform; got softmax"},
      {"nystrom uniform", Method::Nystrom, with(gaussian, [](PlanCall& c) { c.kernel = KernelKind::Uniform; }),
       PlanField::Kernel, "nystrom serves softmax, gaussian, laplacian and cauchy; got uniform"},
      {"sparse 4 dims per head", Method::Sparse, with(gaussian, [](PlanCall& c) { c.dims = 4; }), PlanField::Dims,
       "4 dimensions per head: the sparse index serves at most 3"},
      {"sparse general mask", Method::Sparse, with(gaussian, [](PlanCall& c) { c.masked = c.general_mask = true; }),
       PlanField::Mask, "a general mask: the sparse method does not serve it"},
      {"sparse groups", Method::Sparse, with(gaussian, [](PlanCall& c) { c.groups = true; }), PlanField::Groups,
       "groups: the sparse method does not serve them"},
      {"random features key padding", Method::RandomFeatures, with(gaussian, [](PlanCall& c) { c.masked = true; }),
       PlanField::Mask, "a mask other than causal: random-features serves causal masks only"},
      {"nystrom groups", Method::Nystrom, with(gaussian, [](PlanCall& c) { c.groups = true; }), PlanField::Groups,
       "groups: nystrom does not serve them"},
      {"grid attention", Method::Grid, gaussian, PlanField::Task, "grid does not compute attention"},
      {"top-k regression", Method::TopK, regression, PlanField::Task, "top-k does not compute a regression"},
      {"grid cauchy", Method::Grid, with(regression, [](PlanCall& c) { c.kernel = KernelKind::Cauchy; }),
       PlanField::Kernel, "grid serves gaussian, laplacian, epanechnikov, tricube and uniform; got cauchy"},
      {"grid 3-D", Method::Grid, with(regression, [](PlanCall& c) { c.dims = 3; }), PlanField::Dims,
       "3 dimensions: the grid serves 1 or 2"},
      {"grid span", Method::Grid, with(regression, [](PlanCall& c) { c.span = true; }), PlanField::Span,
       "span bandwidths run exactly"},
      {"grid 3-D cauchy: dimensions before the kernel", Method::Grid,
       with(regression,
            [](PlanCall& c) {
              c.dims = 3;
              c.kernel = KernelKind::Cauchy;
            }),
       PlanField::Dims, "3 dimensions: the grid serves 1 or 2"},
      {"grid cv-gradient", Method::Grid, with(regression, [](PlanCall& c) { c.criterion = PlanCriterion::CvGradient; }),
       PlanField::Criterion, "rule 'cv-gradient' runs exactly"},
      {"sparse regression 4-D", Method::Sparse, with(regression, [](PlanCall& c) { c.dims = 4; }), PlanField::Dims,
       "4 dimensions: the sparse index serves at most 3"},
      {"sparse local-linear", Method::Sparse,
       with(regression, [](PlanCall& c) { c.estimator = Estimator::LocalLinear; }), PlanField::Estimator,
       "the sparse method fits Nadaraya-Watson (degree 0) only"},
      {"sparse weights", Method::Sparse, with(regression, [](PlanCall& c) { c.weights = true; }), PlanField::Weights,
       "observation weights: the sparse method does not serve them"},
      {"sparse span", Method::Sparse, with(regression, [](PlanCall& c) { c.span = true; }), PlanField::Span,
       "span bandwidths: the sparse method serves one bandwidth for every query"},
  };
  for (const Refusal& r : cases) {
    CAPTURE(r.name);
    const Plan p = plan(r.call, r.method, 0);
    CHECK(p.refused == r.field);
    CHECK(std::string(p.reason) == r.reason);
  }
  // Causal masks count as no mask, and top-k serves every mask and group; exact serves every call.
  PlanCall masked = with(gaussian, [](PlanCall& c) { c.masked = c.general_mask = c.groups = true; });
  CHECK(plan(masked, Method::TopK, 0).refused == PlanField::None);
  CHECK(plan(masked, Method::Exact, 0).refused == PlanField::None);
  CHECK(plan(gaussian, Method::RandomFeatures, 0).refused == PlanField::None);
}

TEST_CASE("regression criteria: 2-D blocked CV runs exactly on a grid asked for; a sparse model's search too") {
  PlanCall c;
  c.task = Task::Regression;
  c.kernel = KernelKind::Gaussian;
  c.queries = c.keys = 50000;
  for (PlanCriterion criterion : {PlanCriterion::Fit, PlanCriterion::Cv}) {
    c.criterion = criterion;
    CHECK(plan(c, Method::Grid, 0).method == Method::Grid);
    CHECK(plan(c, Method::Auto, 0).method == Method::Grid);
  }
  c.criterion = PlanCriterion::Aicc;  // the grid in 1-D (GridCv's AICc) and 2-D (the fit's summary on the grid)
  for (const int64_t dims : {1, 2}) {
    c.dims = dims;
    CHECK(std::string(plan(c, Method::Grid, 0).reason) == "grid: asked for");
    CHECK(plan(c, Method::Auto, 0).method == Method::Grid);
  }
  c.dims = 1;
  c.queries = c.keys = 10000;  // an AICc search bins from 5,000 points, as a CV search
  CHECK(std::string(plan(c, Method::Auto, 0).reason)
            .rfind("grid: 1-D gaussian, 10000 points: an AICc search binned", 0) == 0);
  c.queries = c.keys = 50000;
  c.criterion = PlanCriterion::Cv;
  c.exclude = true;  // blocked CV: the grid in 1-D (its band left out exactly), exactly in 2-D
  CHECK(std::string(plan(c, Method::Grid, 0).reason) == "grid: asked for");
  CHECK(plan(c, Method::Auto, 0).method == Method::Grid);
  c.dims = 2;
  CHECK(std::string(plan(c, Method::Grid, 0).reason) ==
        "exact: blocked CV (exclude) runs exactly in 2-D: the grid leaves its band out in 1-D");
  CHECK(plan(c, Method::Auto, 0).method == Method::Exact);
  c.dims = 1;
  c.exclude = false;
  c.criterion = PlanCriterion::CvGradient;  // refused asked for (above); auto runs it exactly
  CHECK(std::string(plan(c, Method::Auto, 0).reason) == "exact: rule 'cv-gradient' runs exactly");
  c.criterion = PlanCriterion::Plugin;  // the plug-in rule runs on its own bins, a grid asked for or not
  for (Method m : {Method::Grid, Method::Auto}) {
    const Plan p = plan(c, m, 0);
    CHECK(p.method == Method::Exact);
    CHECK(p.refused == PlanField::None);
    CHECK(std::string(p.reason) == "exact: rule 'plugin' bins the sample itself, in double, as KernSmooth's dpill");
  }
  // Below 20,000 points auto says the size, whatever the criterion.
  c.queries = c.keys = 400;
  CHECK(starts(plan(c, Method::Auto, 0).reason, "exact: 1-D gaussian, 400 points: below 20,000"));
  c.estimator = Estimator::NadarayaWatson;
  c.criterion = PlanCriterion::Fit;
  CHECK(plan(c, Method::Sparse, 0).method == Method::Sparse);
  c.criterion = PlanCriterion::Cv;
  const Plan search = plan(c, Method::Sparse, 0);
  CHECK(search.method == Method::Exact);
  CHECK(starts(search.reason, "exact: the sparse method computes a model's fits"));
  // 'auto' never picks sparse for a regression (its cost against the exact fit is not measured).
  c.criterion = PlanCriterion::Fit;
  c.queries = c.keys = 1000000;
  c.dims = 3;
  CHECK(plan(c, Method::Auto, 0).method == Method::Exact);
}

TEST_CASE("regression: auto bins from 20,000 points in 1-D and 2-D for kernels with a grid") {
  PlanCall c;
  c.task = Task::Regression;
  c.kernel = KernelKind::Gaussian;
  for (int64_t dims : {1, 2, 3})
    for (int64_t n : {19999, 20000}) {
      CAPTURE(dims);
      CAPTURE(n);
      c.dims = dims;
      c.queries = c.keys = n;
      CHECK(plan(c, Method::Auto, 0).method == (dims <= 2 && n >= 20000 ? Method::Grid : Method::Exact));
    }
  c.dims = 1;
  c.kernel = KernelKind::Cauchy;
  const Plan p = plan(c, Method::Auto, 0);
  CHECK(p.method == Method::Exact);
  CHECK(starts(p.reason, "exact: cauchy has no grid"));
}

TEST_CASE("plan_grid_nodes is grid_nodes, with a reason") {
  std::vector<float> x(5000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(std::sin(double(i)));
  const ConstMatrix m{x.data(), int64_t(x.size()), 1, 1};
  for (float h : {0.05f, 1e-7f}) {
    CAPTURE(h);
    char why[kReasonSize];
    const int64_t nodes = plan_grid_nodes(m, KernelKind::Gaussian, &h, 1e-3, why);
    CHECK(nodes == grid_nodes(m, KernelKind::Gaussian, &h, 1e-3));
    CHECK(starts(why, nodes > 0 ? "grid: 1-D gaussian, 5000 points" : "exact: at this bandwidth no grid"));
  }
}

TEST_CASE("plan_grid_cv_cells: the smallest power of two of at least 64 cells holding grid_nodes, and GridCv asks it") {
  // The rule as plan.h states it, computed here from grid_nodes: 2^k + 1 >= grid_nodes(range, h, tolerance), k >= 6,
  // within the search's finest grid: 2^18 cells up to 2^18 points, as many as the points above, at most 2^20.
  const auto smallest = [](double range, float h, double tolerance, int64_t points) {
    const int64_t finest = points <= (1 << 18) ? 1 << 18 : points <= (1 << 19) ? 1 << 19 : 1 << 20;
    const int64_t wanted = grid_nodes(range, double(h), tolerance, finest);
    if (wanted == 0) return int64_t(0);
    int64_t cells = 64;
    while (cells + 1 < wanted) cells *= 2;
    return cells;
  };
  for (float h : {0.5f, 0.05f, 0.003f, 0.0008f, 1e-7f}) {
    for (double tolerance : {1e-3, 1e-6}) {
      CAPTURE(h);
      CAPTURE(tolerance);
      char why[kReasonSize];
      const int64_t cells = plan_grid_cv_cells(2.0, KernelKind::Gaussian, h, 1000000, tolerance, why);
      CHECK(cells == smallest(2.0, h, tolerance, 1000000));
      CHECK(starts(why, cells > 0 ? "grid: 1-D gaussian, 1000000 points on " : "exact: at this bandwidth no grid"));
    }
  }
  // h = 0.0008 at 1e-6 wants about 7.2·10⁵ nodes: a million points' finest grid holds them, 1,000 points' does not.
  CHECK(plan_grid_cv_cells(2.0, KernelKind::Gaussian, 0.0008f, 1000000, 1e-6) == (1 << 20));
  CHECK(plan_grid_cv_cells(2.0, KernelKind::Gaussian, 0.0008f, 1000, 1e-6) == 0);
  // A wide Laplacian against a fine grid on 200 points: the convolutions cost more than 200² exact pairs.
  char why[kReasonSize];
  CHECK(smallest(2.0, 0.5f, 1e-6, 200) > 0);
  CHECK(plan_grid_cv_cells(2.0, KernelKind::Laplacian, 0.5f, 200, 1e-6, why) == 0);
  CHECK(starts(why, "exact: the convolutions on "));

  // GridCv::score serves exactly the bandwidths the plan gives cells, with the plan's reason.
  std::vector<float> x(3000), y(3000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = float(2 * std::fmod(0.618034 * double(i), 1.0) - 1);
    y[i] = float(std::sin(3.0 * x[i]));
  }
  float lo = x[0], hi = x[0];
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  const double range = double(hi) - double(lo);
  float h0 = 1;
  Problem p;
  p.queries = p.keys = ConstMatrix{x.data(), int64_t(x.size()), 1, 1};
  p.values = ConstMatrix{y.data(), int64_t(y.size()), 1, 1};
  p.kernel = KernelSpec{KernelKind::Laplacian, 1.0, &h0};
  p.masks.leave_one_out = true;
  GridCv grid(Fit{p, Estimator::NadarayaWatson, nullptr}, 1e-6);
  REQUIRE(grid.suits());
  for (float h : {0.3f, 0.01f, 1e-7f}) {
    CAPTURE(h);
    char planned[kReasonSize], given[kReasonSize];
    const int64_t cells = plan_grid_cv_cells(range, KernelKind::Laplacian, h, 3000, 1e-6, planned);
    double score = 0;
    bool served = false;
    REQUIRE(grid.score(h, &score, &served, given).status == Status::Ok);
    CHECK(served == (cells > 0));
    CHECK(std::string(given) == std::string(planned));
  }
}

TEST_CASE("a 2-D local-linear CV score runs on the grid only where it costs less than the exact score in cells") {
  // 10⁵ points uniform on the unit square: exactly, a held-out point visits about π·(7.6h)²·n keys plus
  // kPlanarRowKeys (exact_planar_cost). At h = 0.0032 (186 keys) a 506² grid at tolerance 3.2e-2 costs more (measured
  // natively 0.080 s on it, 0.084 exactly); at h = 0.0143 (3,700 keys) a 453² grid at 2e-3 costs less (0.15 s against
  // 0.36). A count along x₁ alone (exact_cv_cost: 3,600 keys at 0.0032) had taken the grid for both. The tolerance's
  // own grid at 0.0143 (639² nodes) is within the sample's 2¹⁹ (most_grid_nodes_2d); at 0.012 (762²) it is not, and a
  // scan point there runs at 2e-3 (539²).
  const int64_t n = 100000;
  std::vector<float> x(size_t(2 * n));
  uint32_t state = 7;
  for (auto& v : x) {
    state = state * 1664525u + 1013904223u;
    v = float(state >> 8) / float(1 << 24);
  }
  const ConstMatrix m{x.data(), n, 2, 2};
  const float small[2] = {0.0032f, 0.0032f}, larger[2] = {0.0143f, 0.0143f}, below[2] = {0.012f, 0.012f};
  CHECK(plan_grid_cv_nodes(m, KernelKind::Gaussian, Estimator::LocalLinear, small, 3.2e-2) == 0);
  CHECK(plan_grid_cv_nodes(m, KernelKind::Gaussian, Estimator::LocalLinear, larger, 2e-3) > 0);
  CHECK(plan_scan_tolerance(m, KernelKind::Gaussian, Estimator::LocalLinear, small, 1e-3, 5, 3.2e-2) == 0);
  CHECK(plan_scan_tolerance(m, KernelKind::Gaussian, Estimator::LocalLinear, larger, 1e-3, 5, 3.2e-2) == 1e-3);
  CHECK(plan_scan_tolerance(m, KernelKind::Gaussian, Estimator::LocalLinear, below, 1e-3, 5, 3.2e-2) == 2e-3);
  const double range[2] = {1, 1};
  const double keys =
      3.141592653589793 * 2 * 0.6931471805599453 * (25 + std::log2(double(n))) * 0.0032 * 0.0032 * double(n);
  CHECK(exact_planar_cost(KernelKind::Gaussian, small, range, n) ==
        doctest::Approx(double(n) * (kPlanarRowKeys + keys)).epsilon(1e-3));
}

TEST_CASE("a descent's grid point is screened first where its screen costs at most 0.35 of its grid score") {
  // The uniform spread over [0, 1], local-linear, the default fit's tolerance. The grid's score costs its direct
  // convolutions (five lines of cells + 1 nodes by 2⌈7.8·h·cells⌉ + 1 taps, 0.32 a multiply-add) and 16 a point; the
  // screen 47 a row and each row's keys within 2·√(2 ln 2 (25 + log₂ n)) bandwidths.
  const auto expected = [](float h, int64_t n, int64_t rows) {
    const int64_t cells = plan_grid_cv_cells(1.0, KernelKind::Gaussian, h, n, 1e-3);
    if (cells == 0) return false;
    const double taps = std::min(2 * std::ceil(7.8 * double(h) * double(cells)) + 1, double(2 * cells + 1));
    const double grid = 0.32 * 5 * double(cells + 1) * taps + 16 * double(n);
    const double reach = std::sqrt(2 * std::log(2.0) * (25 + std::log2(double(n))));
    const double screen = double(rows) * (47 + std::min(double(n), 2 * reach * double(h) * double(n)));
    return screen < 0.35 * grid;
  };
  int screened = 0;
  for (const int64_t n : {int64_t(1) << 17, int64_t(1000000)})
    for (float h = 1e-6f; h < 1; h *= 1.5f) {
      CAPTURE(n);
      CAPTURE(h);
      const bool first = plan_band_screen(1.0, KernelKind::Gaussian, Estimator::LocalLinear, h, n, 16384, 1e-3);
      CHECK(first == expected(h, n, 16384));
      screened += first;
      if (h > 1e-3f)
        CHECK(!first);  // far below the minimum only (about 0.01 here): the screen outweighs the grid above
    }
  CHECK(plan_band_screen(1.0, KernelKind::Gaussian, Estimator::LocalLinear, 3.5e-5f, 1000000, 16384, 1e-3));
  CHECK(screened >= 2);
  // Only the Gaussian's band (cv_band_window.h) screens.
  CHECK(!plan_band_screen(1.0, KernelKind::Epanechnikov, Estimator::LocalLinear, 3.5e-5f, 1000000, 16384, 1e-3));
}
