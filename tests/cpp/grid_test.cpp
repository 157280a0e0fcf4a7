// The binned (grid) fit against the exact local_fit: close to the tolerance it was sized for, identical where it
// falls back to the exact engine, and leave-one-out CV on the grid close to the exact CV.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "grid.h"
#include "regression.h"

using namespace ka;

namespace {

struct Sample {
  std::vector<float> x, y, q;
  Sample(int64_t n, int64_t I, uint32_t seed) : x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), q(static_cast<size_t>(I)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> noise(0.0f, 0.2f);
    for (size_t j = 0; j < x.size(); ++j) {
      x[j] = u(rng);
      y[j] = std::sin(6.0f * x[j]) + x[j] + noise(rng);
    }
    for (auto& v : q) v = u(rng);
  }
};

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(double(a[i]) - double(b[i])));
  return d;
}

}  // namespace

TEST_CASE("grid fits are within their tolerance of the exact fit, and report it") {
  const Sample s(3000, 500, 1);
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Epanechnikov, KernelKind::Laplacian})
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
      for (const float h : {0.01f, 0.08f}) {
        Problem p;
        p.keys = {s.x.data(), 3000, 1, 1};
        p.queries = {s.q.data(), 500, 1, 1};
        p.values = {s.y.data(), 3000, 1, 1};
        p.kernel = {kind, 1.0, &h};
        std::vector<float> exact(500), grid(500);
        std::vector<double> sum_sq_exact(500), sum_sq_grid(500);
        REQUIRE(local_fit({p, est}, {Matrix{exact.data(), 500, 1, 1}, sum_sq_exact.data()}).status == Status::Ok);
        const int64_t nodes = grid_nodes(1.0, h, 1e-4);
        REQUIRE(nodes > 0);
        double estimate = -1;
        REQUIRE(grid_local_fit({p, est}, nodes, {Matrix{grid.data(), 500, 1, 1}, sum_sq_grid.data()}, &estimate).status == Status::Ok);
        CAPTURE(int(kind)); CAPTURE(int(est)); CAPTURE(h); CAPTURE(nodes);
        const double err = max_diff(exact, grid) / 3.0;  // y spans about 3
        CHECK(err < 2e-3);
        CHECK(estimate >= 0);
        CHECK(estimate <= 2 * err + 1e-6);  // measured on a subset of the same rows
        for (int64_t i = 0; i < 500; i += 50) CHECK(sum_sq_grid[size_t(i)] == doctest::Approx(sum_sq_exact[size_t(i)]).epsilon(2e-2));
      }
}

TEST_CASE("grid leave-one-out CV follows the exact CV") {
  const Sample s(4000, 1, 2);
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    const float h = 0.02f;
    Problem p;
    p.keys = p.queries = {s.x.data(), 4000, 1, 1};
    p.values = {s.y.data(), 4000, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, &h};
    p.masks.leave_one_out = true;
    std::vector<float> exact(4000), grid(4000);
    REQUIRE(local_fit({p, est}, {Matrix{exact.data(), 4000, 1, 1}}).status == Status::Ok);
    REQUIRE(grid_local_fit({p, est}, grid_nodes(1.0, h, 1e-4), {Matrix{grid.data(), 4000, 1, 1}}).status == Status::Ok);
    double cv_exact = 0, cv_grid = 0;
    for (size_t i = 0; i < 4000; ++i) {
      cv_exact += std::pow(s.y[i] - exact[i], 2);
      cv_grid += std::pow(s.y[i] - grid[i], 2);
    }
    CAPTURE(int(est));
    CHECK(cv_grid == doctest::Approx(cv_exact).epsilon(1e-3));
    CHECK(max_diff(exact, grid) < 1e-2);
  }
}

TEST_CASE("queries the grid cannot serve are fitted exactly") {
  const Sample s(500, 1, 3);
  std::vector<float> q = {5.0f, -3.0f, 0.5f, 1.02f};  // far, far, inside, just beyond the data (extrapolation)
  const float h = 0.02f;
  Problem p;
  p.keys = {s.x.data(), 500, 1, 1};
  p.queries = {q.data(), 4, 1, 1};
  p.values = {s.y.data(), 500, 1, 1};
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Uniform}) {
    p.kernel = {kind, 1.0, &h};
    p.empty = EmptyPolicy::Nearest;
    std::vector<float> exact(4), grid(4);
    REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{exact.data(), 4, 1, 1}}).status == Status::Ok);
    REQUIRE(grid_local_fit({p, Estimator::LocalLinear}, 256, {Matrix{grid.data(), 4, 1, 1}}).status == Status::Ok);
    CAPTURE(int(kind));
    CHECK(grid[0] == exact[0]);
    CHECK(grid[1] == exact[1]);
    CHECK(std::fabs(grid[2] - exact[2]) < 0.05);
    if (kind == KernelKind::Gaussian) CHECK(grid[3] == exact[3]);
  }
}

TEST_CASE("grid sizes follow the tolerance and refuse what they cannot reach") {
  CHECK(grid_nodes(1.0, 0.5, 1e-3) == 64);  // at least 64 nodes
  CHECK(grid_nodes(1.0, 0.1, 1e-3) == 93);  // spacing 0.1·sqrt(0.012)
  CHECK(grid_nodes(1.0, 0.001, 1e-3) == int64_t(std::ceil(1.0 / (0.001 * std::sqrt(12e-3)))) + 1);
  CHECK(grid_nodes(1.0, 1e-7, 1e-3) == 0);
  CHECK(grid_nodes(1.0, 0.0, 1e-3) == 0);
}

TEST_CASE("fit statistics on a grid follow the exact ones") {
  const Sample s(5000, 1, 4);
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    const float h = 0.03f;
    Problem p;
    p.keys = p.queries = {s.x.data(), 5000, 1, 1};
    p.values = {s.y.data(), 5000, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, &h};
    FitSummary exact, grid;
    REQUIRE(summarize_fit({p, est}, &exact).status == Status::Ok);
    REQUIRE(summarize_fit({p, est}, &grid, nullptr, 1e-4).status == Status::Ok);
    CAPTURE(int(est));
    CHECK(grid.empty_rows == 0);
    CHECK(grid.trace == doctest::Approx(exact.trace).epsilon(1e-2));
    CHECK(grid.trace_sq == doctest::Approx(exact.trace_sq).epsilon(1e-2));
    CHECK(grid.sigma2 == doctest::Approx(exact.sigma2).epsilon(1e-3));
  }
}
