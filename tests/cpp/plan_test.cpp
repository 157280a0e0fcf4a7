// The method table (plan.h) against its documented rules, computed here independently: 'auto' runs sparse for
// attention from 2^20 pairs with at most 15 % of the keys within reach (the share from the keys' extent), the grid
// for regression from 20,000 points in 1-D and 2-D; each refusal names its cause; asked-for methods pass through.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "methods/grid/grid.h"
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

TEST_CASE("a method asked for passes through, with the default tolerance of its task") {
  PlanCall c;
  for (Method m : {Method::Exact, Method::Sparse, Method::TopK, Method::RandomFeatures, Method::Nystrom}) {
    const Plan p = plan(c, m, 0);
    CHECK(p.method == m);
    CHECK(std::string(p.reason) == std::string(method_name(m)) + ": asked for");
  }
  CHECK(plan(c, Method::Sparse, 0).tolerance == 1e-3);
  CHECK(plan(c, Method::Auto, 0).tolerance == 1e-3);
  CHECK(plan(c, Method::RandomFeatures, 0).tolerance == 1e-2);
  CHECK(plan(c, Method::Nystrom, 0.2).tolerance == 0.2);
  c.task = Task::Regression;
  CHECK(plan(c, Method::Exact, 0).tolerance == 1e-3);
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
