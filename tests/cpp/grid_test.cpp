// The binned (grid) fit against the exact local_fit: close to the tolerance it was sized for, identical where it
// falls back to the exact engine, and leave-one-out CV on the grid close to the exact CV.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "stats/bandwidth.h"
#include "stats/cv_band_window.h"
#include "engine/local_solve.h"
#include "methods/grid/grid.h"
#include "methods/plan.h"
#include "reference.h"
#include "stats/regression.h"

using namespace ka;

namespace {

struct Sample {
  std::vector<float> x, y, q;
  Sample(int64_t n, int64_t I, uint32_t seed)
      : x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), q(static_cast<size_t>(I)) {
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
        REQUIRE(
            grid_local_fit({p, est}, nodes, {Matrix{grid.data(), 500, 1, 1}, sum_sq_grid.data()}, &estimate).status ==
            Status::Ok);
        CAPTURE(int(kind));
        CAPTURE(int(est));
        CAPTURE(h);
        CAPTURE(nodes);
        const double err = max_diff(exact, grid) / 3.0;  // y spans about 3
        CHECK(err < 2e-3);
        CHECK(estimate >= 0);
        CHECK(estimate <= 2 * err + 1e-6);  // measured on a subset of the same rows
        for (int64_t i = 0; i < 500; i += 50)
          CHECK(sum_sq_grid[size_t(i)] == doctest::Approx(sum_sq_exact[size_t(i)]).epsilon(2e-2));
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

TEST_CASE("queries the grid cannot serve inside the box are fitted exactly; far ones follow the far rules") {
  const Sample s(500, 1, 3);
  // Far beyond both ends, inside, inside a gap of the data wider than a compact kernel (no key within h).
  std::vector<float> x = s.x;
  for (float& v : x)
    if (v > 0.6f && v < 0.7f) v = 0.6f;
  std::vector<float> q = {5.0f, -3.0f, 0.5f, 0.65f};
  const float h = 0.02f;
  Problem p;
  p.keys = {x.data(), 500, 1, 1};
  p.queries = {q.data(), 4, 1, 1};
  p.values = {s.y.data(), 500, 1, 1};
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Uniform}) {
    p.kernel = {kind, 1.0, &h};
    p.empty = EmptyPolicy::Nearest;
    std::vector<float> exact(4), grid(4);
    int64_t exact_rows = -1;
    REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{exact.data(), 4, 1, 1}}).status == Status::Ok);
    REQUIRE(
        grid_local_fit({p, Estimator::LocalLinear}, 256, {Matrix{grid.data(), 4, 1, 1}}, nullptr, &exact_rows).status ==
        Status::Ok);
    CAPTURE(int(kind));
    // Uniform: no key within h, the Nearest policy's mean of the end's keys, as the exact engine takes it. Gaussian:
    // 150–250 h out the next keys' relative weights are e^(−150·t/h), not 0: the keys that still matter are fitted
    // exactly, within the grid's tolerance (1e-3 of range(y), which spans about 3) of the fit over all keys.
    CHECK(std::fabs(grid[0] - exact[0]) <= (kind == KernelKind::Uniform ? 0.0 : 3e-3));
    CHECK(std::fabs(grid[1] - exact[1]) <= (kind == KernelKind::Uniform ? 0.0 : 3e-3));
    CHECK(std::fabs(grid[2] - exact[2]) < 0.05);
    // The gap's middle: the Gaussian reaches keys there (on the grid), the uniform kernel none (run exactly).
    if (kind == KernelKind::Uniform)
      CHECK(grid[3] == exact[3]);
    else
      CHECK(std::fabs(grid[3] - exact[3]) < 0.05);
    CHECK(exact_rows == (kind == KernelKind::Uniform ? 1 : 0));
  }
}

namespace {

// The float64 fit at query i (NaN for an empty row).
double reference_fit(const Problem& p, int64_t i, Estimator est, const std::vector<float>& omega = {}) {
  const auto lw = reference::local_weights(p, i, est == Estimator::LocalLinear ? 1 : 0, omega).ell;
  if (lw.empty()) return std::numeric_limits<double>::quiet_NaN();
  double f = 0;
  for (size_t j = 0; j < lw.size(); ++j) f += lw[j] * double(p.values.row(int64_t(j))[0]);
  return f;
}

}  // namespace

TEST_CASE("predictions across 1.05× the data's range are served by the grid, within its tolerance, none exactly") {
  // The benchmark's case at 20,000 points: 512 queries from min − 2.5 % to max + 2.5 % of the range, the nodes that
  // tolerance 1e-3 gives. Nadaraya–Watson serves every row from the grid (no exact pass at all) for each kernel;
  // local-linear serves those its extrapolation rule (kEdgeAmplification) allows and the Gaussian's others by the far
  // rules (far tables), the other kernels' exactly.
  const int64_t n = 20000, I = 512;
  const Sample s(n, 1, 11);
  std::vector<float> q(I);
  for (int64_t i = 0; i < I; ++i) q[size_t(i)] = -0.025f + 1.05f * float(i) / float(I - 1);
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Epanechnikov, KernelKind::Laplacian})
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
      for (const float h : {0.01f, 0.02f}) {
        Problem p;
        p.keys = {s.x.data(), n, 1, 1};
        p.queries = {q.data(), I, 1, 1};
        p.values = {s.y.data(), n, 1, 1};
        p.kernel = {kind, 1.0, &h};
        p.empty = EmptyPolicy::NaN;
        std::vector<float> grid(static_cast<size_t>(I));
        int64_t exact_rows = -1;
        REQUIRE(grid_local_fit({p, est}, grid_nodes(1.0, h, 1e-3), {Matrix{grid.data(), I, 1, 1}}, nullptr, &exact_rows)
                    .status == Status::Ok);
        CAPTURE(int(kind));
        CAPTURE(int(est));
        CAPTURE(h);
        CAPTURE(exact_rows);
        // Compact kernels run exactly the rows within 2 spacings of their support's end (its kink), and only those.
        const float lo = *std::min_element(s.x.begin(), s.x.end()), hi = *std::max_element(s.x.begin(), s.x.end());
        const double step = (double(hi) - double(lo)) / double(grid_nodes(1.0, h, 1e-3) - 1);
        int64_t kink = 0, outside = 0;
        for (const float v : q) {
          const double out_by = std::max(double(lo) - double(v), double(v) - double(hi));
          kink += kind == KernelKind::Epanechnikov && out_by > double(h) - 2 * step && out_by <= double(h);
          outside += out_by > 0;
        }
        if (est == Estimator::NadarayaWatson)
          CHECK(exact_rows == kink);
        else if (kind == KernelKind::Gaussian)
          CHECK(exact_rows == 0);  // its extrapolations by the far rules
        else
          CHECK(exact_rows <= outside);  // only extrapolations (kEdgeAmplification), never a row inside the data
        double worst = 0;
        int64_t empty = 0;
        for (int64_t i = 0; i < I; i += 3) {
          const double ref = reference_fit(p, i, est);
          if (std::isnan(ref)) {  // Epanechnikov more than h beyond the data: the empty row, as the exact fit
            CHECK(std::isnan(grid[size_t(i)]));
            ++empty;
            continue;
          }
          worst = std::max(worst, std::fabs(double(grid[size_t(i)]) - ref) / 3.0);  // y spans about 3
        }
        CHECK(worst < 1e-3);  // the tolerance the nodes were sized for
        if (kind != KernelKind::Epanechnikov) CHECK(empty == 0);
      }
}

TEST_CASE("beyond every key's reach: the empty-row policy, the Gaussian's far limit, the Laplacian at any distance") {
  // 200 keys 0.5 h apart with ties at both ends and observation weights; queries 20 h to 10⁵ h beyond either end.
  const int64_t n = 200;
  std::vector<float> x(n), y(n), omega(n);
  for (int64_t j = 0; j < n; ++j) {
    x[size_t(j)] = float(std::min<int64_t>(std::max<int64_t>(j, 2), n - 3)) * 0.005f;  // 3 keys tied at each end
    y[size_t(j)] = std::sin(0.1f * float(j)) + 0.01f * float(j % 7);
    omega[size_t(j)] = 0.5f + float(j % 3);
  }
  std::vector<float> q = {-0.2f, 1.2f, -10.0f, 11.0f, -1000.0f};
  const int64_t I = int64_t(q.size());
  const float h = 0.01f;
  Problem p;
  p.keys = {x.data(), n, 1, 1};
  p.queries = {q.data(), I, 1, 1};
  p.values = {y.data(), n, 1, 1};
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    CAPTURE(int(est));
    {  // Gaussian: about 20 h out the next key, 0.5 h behind the end, still weighs e^(−10) of the end's keys: those
       // rows are fitted over the keys near the end; further out only the end's keys matter: their ω-weighted mean
       // (O(1))
      p.kernel = {KernelKind::Gaussian, 1.0, &h};
      std::vector<float> grid(static_cast<size_t>(I));
      std::vector<double> eff(static_cast<size_t>(I)), eff_exact(eff), logden(eff), logden_exact(eff);
      std::vector<float> exact(static_cast<size_t>(I));
      int64_t exact_rows = -1, range_rows = -1;
      const Fit f{p, est, omega.data()};
      REQUIRE(grid_local_fit(f, 256, {Matrix{grid.data(), I, 1, 1}, nullptr, nullptr, eff.data(), logden.data()},
                             nullptr, &exact_rows, &range_rows)
                  .status == Status::Ok);
      REQUIRE(local_fit(f, {Matrix{exact.data(), I, 1, 1}, nullptr, nullptr, eff_exact.data(), logden_exact.data()})
                  .status == Status::Ok);
      CHECK(exact_rows == 0);
      CHECK(range_rows == 2);  // −0.2 and 1.2 (about 21 h out); the rows 1,000 h and more out get the end keys' mean
      for (int64_t i = 0; i < I; ++i) {
        CAPTURE(q[size_t(i)]);
        CHECK(grid[size_t(i)] == doctest::Approx(reference_fit(p, i, est, omega)).epsilon(1e-4));
        CHECK(eff[size_t(i)] == doctest::Approx(eff_exact[size_t(i)]).epsilon(1e-4));
        CHECK(logden[size_t(i)] == doctest::Approx(logden_exact[size_t(i)]).epsilon(1e-6));
      }
    }
    {  // Laplacian: beyond the data its fit is the one at the end, shifted, exactly: Nadaraya–Watson is served at every
       // distance; local-linear extrapolates the end's line, which the grid serves only as well conditioned as the
       // edge (kEdgeAmplification), so these rows, 20 h out and more, run exactly.
      p.kernel = {KernelKind::Laplacian, 1.0, &h};
      std::vector<float> grid(static_cast<size_t>(I));
      int64_t exact_rows = -1;
      REQUIRE(grid_local_fit({p, est}, grid_nodes(1.0, h, 1e-3), {Matrix{grid.data(), I, 1, 1}}, nullptr, &exact_rows)
                  .status == Status::Ok);
      CHECK(exact_rows == (est == Estimator::NadarayaWatson ? 0 : I));
      for (int64_t i = 0; i < I; ++i)
        CHECK(std::fabs(grid[size_t(i)] - reference_fit(p, i, est)) < 1e-3);  // y spans ~2
    }
    for (const EmptyPolicy policy : {EmptyPolicy::NaN, EmptyPolicy::Zero, EmptyPolicy::Nearest, EmptyPolicy::Error}) {
      p.kernel = {KernelKind::Epanechnikov, 1.0, &h};
      p.empty = policy;
      std::vector<float> grid(static_cast<size_t>(I)), exact(static_cast<size_t>(I));
      int64_t exact_rows = -1;
      const Result g = grid_local_fit({p, est}, 256, {Matrix{grid.data(), I, 1, 1}}, nullptr, &exact_rows);
      const Result e = local_fit({p, est}, {Matrix{exact.data(), I, 1, 1}});
      CAPTURE(int(policy));
      CHECK(g.status == e.status);
      if (policy == EmptyPolicy::Error) {
        CHECK(g.status == Status::EmptyRow);
        CHECK(g.row == e.row);
        continue;
      }
      CHECK(exact_rows == 0);
      for (int64_t i = 0; i < I; ++i)
        CHECK((grid[size_t(i)] == exact[size_t(i)] || (std::isnan(grid[size_t(i)]) && std::isnan(exact[size_t(i)]))));
    }
    p.empty = EmptyPolicy::NaN;
  }
}

TEST_CASE("grid sizes follow the tolerance and refuse what they cannot reach") {
  CHECK(grid_nodes(1.0, 0.5, 1e-3) == 64);  // at least 64 nodes
  CHECK(grid_nodes(1.0, 0.1, 1e-3) == 93);  // spacing 0.1·sqrt(0.012)
  CHECK(grid_nodes(1.0, 0.001, 1e-3) == int64_t(std::ceil(1.0 / (0.001 * std::sqrt(12e-3)))) + 1);
  CHECK(grid_nodes(1.0, 1e-7, 1e-3) == 0);
  CHECK(grid_nodes(1.0, 0.0, 1e-3) == 0);
}

TEST_CASE("a sample flat along an axis still costs that axis: six equal 2-D points run exactly, not on a 64² grid") {
  // grid_local_fit spaces a flat axis's nodes by h; a Laplacian then has 30 taps a side on 64 nodes per axis.
  const float x[12] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
  const float h[2] = {1e-3f, 1e-3f};
  CHECK(grid_nodes(ConstMatrix{x, 6, 2, 2}, KernelKind::Laplacian, h, 1e-3) == 0);
  // Many points make the same grid worth it.
  std::vector<float> many(20000 * 2, 0.5f);
  CHECK(grid_nodes(ConstMatrix{many.data(), 20000, 2, 2}, KernelKind::Laplacian, h, 1e-3) == 64);
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

namespace {

// y = sin(4 x₁) + cos(3 x₂) + N(0, 0.2²) at n points uniform on the unit square, and I queries inside it.
struct Surface {
  std::vector<float> x, y, q;
  Surface(int64_t n, int64_t I, unsigned seed) : x(size_t(n * 2)), y(size_t(n)), q(size_t(I * 2)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    std::normal_distribution<float> noise(0.0f, 0.2f);
    for (int64_t j = 0; j < n; ++j) {
      x[size_t(2 * j)] = u(rng);
      x[size_t(2 * j + 1)] = u(rng);
      y[size_t(j)] = std::sin(4.0f * x[size_t(2 * j)]) + std::cos(3.0f * x[size_t(2 * j + 1)]) + noise(rng);
    }
    for (auto& v : q) v = 0.02f + 0.96f * u(rng);
  }
};

}  // namespace

TEST_CASE("2-D grid fits (separable product-kernel convolutions) are within their tolerance of the exact fit") {
  // Per-dimension bandwidths.
  const int64_t n = 5000, I = 300;
  Surface s(n, I, 4);
  std::vector<float>&x = s.x, &y = s.y, &q = s.q;
  const float h[2] = {0.06f, 0.09f};
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Epanechnikov})
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
      Problem p;
      p.keys = {x.data(), n, 2, 2};
      p.queries = {q.data(), I, 2, 2};
      p.values = {y.data(), n, 1, 1};
      p.kernel = {kind, 1.0, h};
      const int64_t nodes = grid_nodes(p.keys, kind, h, 1e-3);
      REQUIRE(nodes > 0);
      const size_t rows = static_cast<size_t>(I);
      std::vector<float> exact(rows), grid(rows);
      std::vector<double> sum_sq_exact(rows), sum_sq_grid(rows), eff_exact(rows), eff_grid(rows);
      REQUIRE(
          local_fit({p, est}, {Matrix{exact.data(), I, 1, 1}, sum_sq_exact.data(), nullptr, eff_exact.data()}).status ==
          Status::Ok);
      double estimate = -1;
      REQUIRE(grid_local_fit({p, est}, nodes,
                             {Matrix{grid.data(), I, 1, 1}, sum_sq_grid.data(), nullptr, eff_grid.data()}, &estimate)
                  .status == Status::Ok);
      CAPTURE(int(kind));
      CAPTURE(int(est));
      CAPTURE(nodes);
      const double err = max_diff(exact, grid) / 4.0;  // y spans about 4
      CHECK(err < 5e-3);
      CHECK(estimate >= 0);
      CHECK(estimate <= 2 * err + 1e-6);
      for (int64_t i = 0; i < I; i += 30) {
        CHECK(sum_sq_grid[size_t(i)] == doctest::Approx(sum_sq_exact[size_t(i)]).epsilon(3e-2));
        CHECK(eff_grid[size_t(i)] == doctest::Approx(eff_exact[size_t(i)]).epsilon(3e-2));
      }
      // Leave-one-out on the sample itself: each point's own weight comes off exactly.
      p.queries = p.keys;
      p.masks.leave_one_out = true;
      std::vector<float> loo_exact(static_cast<size_t>(n)), loo_grid(static_cast<size_t>(n));
      REQUIRE(local_fit({p, est}, {Matrix{loo_exact.data(), n, 1, 1}}).status == Status::Ok);
      REQUIRE(grid_local_fit({p, est}, nodes, {Matrix{loo_grid.data(), n, 1, 1}}).status == Status::Ok);
      double cv_exact = 0, cv_grid = 0;
      for (size_t i = 0; i < size_t(n); ++i) {
        cv_exact += std::pow(y[i] - loo_exact[i], 2);
        cv_grid += std::pow(y[i] - loo_grid[i], 2);
      }
      CHECK(cv_grid == doctest::Approx(cv_exact).epsilon(5e-3));
    }
}

TEST_CASE("a 2-D fit of the sample at itself convolves the box's nodes alone, to the same bits") {
  // The same queries as a copy (another view: every output node convolved) and as the keys themselves (box_only,
  // whose transforms cover the box's outputs alone), leave-one-out and not, at bandwidths whose passes run directly,
  // by FFT (columns from an odd node too) and capped at the grid's width.
  const int64_t n = 5000;
  Surface s(n, 1, 4);
  const std::vector<float> copy = s.x;
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Epanechnikov})
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
      for (const float width : {0.01f, 0.02f, 0.023f, 0.06f, 0.6f})
        for (const bool loo : {false, true})
          for (const bool wide_first : {false, true}) {  // an odd number of taps along x₁ too (93 at 1.3·width)
            const float h[2] = {wide_first ? 1.3f * width : width, wide_first ? width : 1.3f * width};
            Problem p;
            p.keys = {s.x.data(), n, 2, 2};
            p.values = {s.y.data(), n, 1, 1};
            p.kernel = {kind, 1.0, h};
            p.masks.leave_one_out = loo;
            const int64_t nodes = std::max<int64_t>(grid_nodes(p.keys, kind, h, 1e-3), 64);
            std::vector<float> full(static_cast<size_t>(n)), box(static_cast<size_t>(n));
            p.queries = {copy.data(), n, 2, 2};
            REQUIRE(grid_local_fit({p, est}, nodes, {Matrix{full.data(), n, 1, 1}}).status == Status::Ok);
            p.queries = p.keys;
            REQUIRE(grid_local_fit({p, est}, nodes, {Matrix{box.data(), n, 1, 1}}).status == Status::Ok);
            CAPTURE(int(kind));
            CAPTURE(int(est));
            CAPTURE(width);
            CAPTURE(loo);
            CAPTURE(wide_first);
            CHECK(std::memcmp(full.data(), box.data(), full.size() * sizeof(float)) == 0);
          }
}

TEST_CASE("a 2-D leave-one-out fit on the grid: its hot path gives the general path's bits") {
  // The sample at itself, leave-one-out, local-linear, Gaussian: without observation weights its rows take serve_grid's
  // hot path (planar_loo_row); with weights all 1 the general one (locate, own_terms, a row's weight), whose arithmetic
  // is then the same (1·w is exact). Bandwidths from narrow (near-singular designs: rows handed to the guard) to
  // capped taps, per-dimension, FFT and direct passes.
  const int64_t n = 4000;
  Surface s(n, 1, 9);
  const std::vector<float> ones(static_cast<size_t>(n), 1.0f);
  for (const float width : {0.004f, 0.02f, 0.06f, 0.6f})
    for (const bool wide_first : {false, true}) {
      const float h[2] = {wide_first ? 1.5f * width : width, wide_first ? width : 1.5f * width};
      Problem p;
      p.queries = p.keys = {s.x.data(), n, 2, 2};
      p.values = {s.y.data(), n, 1, 1};
      p.kernel = {KernelKind::Gaussian, 1.0, h};
      p.masks.leave_one_out = true;
      p.empty = EmptyPolicy::NaN;
      const int64_t nodes = std::max<int64_t>(grid_nodes(p.keys, KernelKind::Gaussian, h, 1e-3), 64);
      std::vector<float> hot(static_cast<size_t>(n)), general(static_cast<size_t>(n));
      std::vector<uint8_t> hot_guard(static_cast<size_t>(n)), general_guard(static_cast<size_t>(n));
      FitOut a{Matrix{hot.data(), n, 1, 1}}, b{Matrix{general.data(), n, 1, 1}};
      a.guarded = hot_guard.data();
      b.guarded = general_guard.data();
      REQUIRE(grid_local_fit({p, Estimator::LocalLinear}, nodes, a).status == Status::Ok);
      REQUIRE(grid_local_fit({p, Estimator::LocalLinear, ones.data()}, nodes, b).status == Status::Ok);
      CAPTURE(width);
      CAPTURE(wide_first);
      CHECK(std::memcmp(hot.data(), general.data(), hot.size() * sizeof(float)) == 0);
      CHECK(hot_guard == general_guard);
    }
}

TEST_CASE("2-D grids: queries outside the sample's box run exactly; sizes and refusals") {
  std::vector<float> x = {0, 0, 1, 0, 0, 1, 1, 1, 0.5f, 0.5f, 0.2f, 0.7f}, y = {1, 2, 3, 4, 5, 6};
  std::vector<float> q = {3.0f, 0.5f, 0.5f, -2.0f, 0.5f, 0.5f};
  const float h[2] = {0.3f, 0.3f};
  Problem p;
  p.keys = {x.data(), 6, 2, 2};
  p.queries = {q.data(), 3, 2, 2};
  p.values = {y.data(), 6, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, h};
  std::vector<float> exact(3), grid(3);
  REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{exact.data(), 3, 1, 1}}).status == Status::Ok);
  REQUIRE(grid_local_fit({p, Estimator::LocalLinear}, 128, {Matrix{grid.data(), 3, 1, 1}}).status == Status::Ok);
  CHECK(grid[0] == exact[0]);
  CHECK(grid[1] == exact[1]);
  CHECK(std::fabs(grid[2] - exact[2]) < 0.05);
  // One count per axis; 2-D grids share kMaxGridNodes between the axes. 2,000 points on the unit square, where the
  // grid costs less than the exact fit; on the 6 points above it does not, so they run exactly.
  std::vector<float> many(4000);
  for (size_t i = 0; i < many.size(); ++i) many[i] = float((i * 7919) % 1000) / 999.0f;
  const ConstMatrix box{many.data(), 2000, 2, 2};
  CHECK(grid_nodes(box, KernelKind::Gaussian, h, 1e-3) == 64);
  CHECK(grid_nodes(p.keys, KernelKind::Gaussian, h, 1e-3) == 0);
  const float narrow[2] = {0.3f, 0.002f};
  CHECK(grid_nodes(box, KernelKind::Gaussian, narrow, 1e-3) == 0);  // 4,565² nodes would exceed kMaxGridNodes
  CHECK(grid_nodes(box, KernelKind::Cauchy, h, 1e-3) == 0);
  // A fit's grid holds up to 2^kMaxCvLevel nodes in all (a CV score's, most_grid_nodes_2d): 1,025² is refused.
  CHECK(grid_local_fit({p, Estimator::LocalLinear}, 1025, {Matrix{grid.data(), 3, 1, 1}}).status ==
        Status::BadArgument);
  std::vector<float> x3(18, 0.5f), q3(3, 0.5f);
  const float h3[3] = {0.3f, 0.3f, 0.3f};
  CHECK(grid_nodes(ConstMatrix{x3.data(), 6, 3, 3}, KernelKind::Gaussian, h3, 1e-3) == 0);  // 3-D: no grid
}

namespace {

// The float64 local design of point i of a 1-D Gaussian-kernel fit: S_a = Σ_j w_j uᵃ, T_a = Σ_j w_j uᵃ y_j over every
// point j (i itself left out with `held_out`), u = (x_j − x_i)/h, w_j = ω_j e^(−(u² − shift²)/2).
struct LineDesign {
  double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
  LineDesign(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& w, size_t i, double h,
             bool held_out, double shift) {
    for (size_t j = 0; j < x.size(); ++j) {
      if (held_out && j == i) continue;
      const double u = (double(x[j]) - double(x[i])) / h, k = w[j] * std::exp(-0.5 * (u * u - shift * shift));
      s0 += k;
      s1 += k * u;
      s2 += k * u * u;
      t0 += k * y[j];
      t1 += k * u * y[j];
    }
  }
  // Local-linear as the textbook solves it (no guard, bandwidth.h): the exact 2 × 2 solve; singular (false) where the
  // slope's pivot S₂ − S₁²/S₀ is at most kSingularDesign·S₂. *inverse00: (A⁻¹)₀₀, the weight of an own point at u = 0.
  bool solve(Estimator est, double* fit, double* inverse00) const {
    const double q = s1 / s0, pivot = s2 - q * s1;
    const bool linear = est == Estimator::LocalLinear;
    if (linear && !(pivot > kSingularDesign * s2)) return false;
    *fit = linear ? t0 / s0 + q * (q * t0 - t1) / pivot : t0 / s0;
    *inverse00 = linear ? 1 / s0 + q * q / pivot : 1 / s0;
    return true;
  }
};

// Float64 leave-one-out CV of a 1-D Gaussian-kernel fit, point by point: Σ_i ω_i (y_i − f_{−i}(x_i))² / Σ_i ω_i
// over the points with ω_i > 0 (local-linear: the intercept of the weighted line).
double naive_loo_cv(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& w, double h,
                    Estimator est) {
  double sum = 0, total = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    total += w[i];
    if (w[i] == 0) continue;
    // Weights relative to the nearest point's, as the exact engine takes them: a point far from all others gets
    // its nearest neighbour's value, not 0/0.
    double nearest = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < x.size(); ++j)
      if (j != i && w[j] > 0) nearest = std::min(nearest, std::fabs(double(x[j]) - double(x[i])) / h);
    double fit = 0, unused = 0;
    if (!LineDesign(x, y, w, i, h, true, nearest).solve(est, &fit, &unused))
      return std::numeric_limits<double>::infinity();
    sum += w[i] * (y[i] - fit) * (y[i] - fit);
  }
  return sum / total;
}

// AICc (Hurvich, Simonoff & Tsai) of a float64 loop: each point's fit with itself included, the smoother's diagonal
// ℓ_ii = ω_i·(A⁻¹)₀₀, the residuals weighted by ω scaled to a mean of 1 over the m points with ω > 0.
double naive_aicc(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& w, double h,
                  Estimator est) {
  double rss = 0, trace = 0, total = 0, m = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    total += w[i];
    if (w[i] == 0) continue;
    ++m;
    double fit = 0, inverse00 = 0;
    if (!LineDesign(x, y, w, i, h, false, 0).solve(est, &fit, &inverse00))
      return std::numeric_limits<double>::infinity();
    rss += w[i] * (y[i] - fit) * (y[i] - fit);
    trace += w[i] * inverse00;
  }
  rss *= m / total;
  return std::log(rss / m) + (1 + trace / m) / (1 - (trace + 2) / m);
}

// The old per-evaluation path: grid_local_fit on 2^k + 1 nodes (the grid GridCv picks for h), then the score.
double grid_local_fit_cv(const Problem& p, const std::vector<float>& w, float h, Estimator est, double tolerance) {
  const int64_t n = p.keys.rows;
  int64_t nodes = 65;
  const float lo = *std::min_element(p.keys.data, p.keys.data + n),
              hi = *std::max_element(p.keys.data, p.keys.data + n);
  while (nodes < grid_nodes(double(hi) - double(lo), h, tolerance)) nodes = 2 * nodes - 1;
  Problem q = p;
  q.kernel.bandwidth = &h;
  q.masks.leave_one_out = true;
  const int64_t width = p.values.cols;
  std::vector<float> fit(static_cast<size_t>(n * width));
  std::vector<uint8_t> guarded(static_cast<size_t>(n), 0);
  FitOut out{Matrix{fit.data(), n, width, width}};
  out.guarded = guarded.data();
  REQUIRE(grid_local_fit({q, est, w.data()}, nodes, out).status == Status::Ok);
  // CV's rule (bandwidth.h): where the guard acted, the float64 solve without it.
  std::vector<double> a(4), t(static_cast<size_t>(2 * width)), z(2), exact(static_cast<size_t>(width));
  double sum = 0, total = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    total += w[i];
    const bool textbook = guarded[i] && w[i] > 0;
    if (textbook && !exact_local_row(q, 1, w.data(), int64_t(i), {a.data(), t.data(), z.data()}, exact.data()))
      return std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < size_t(width); ++c) {
      const double f = textbook ? exact[c] : double(fit[i * size_t(width) + c]);
      if (w[i] > 0) sum += w[i] * std::pow(double(p.values.data[i * size_t(width) + c]) - f, 2);
    }
  }
  return std::isnan(sum) ? std::numeric_limits<double>::infinity() : sum / total;
}

}  // namespace

TEST_CASE("a 2-D grid of 2^17 points or more holds more than 2^18 nodes, within its tolerance") {
  // Up to about four times as many nodes as points, from kMaxGridNodes up to 2^20: at h = 0.012 of a unit square a
  // 762² grid reaches 1e-3, which a fit or a CV score of 2^17 points does not take (2^19 nodes); one of 600,000 does.
  CHECK(most_grid_nodes_2d(1000) == kMaxGridNodes);
  CHECK(most_grid_nodes_2d(int64_t(1) << 16) == kMaxGridNodes);
  CHECK(most_grid_nodes_2d((int64_t(1) << 16) + 1) == (int64_t(1) << 19));
  CHECK(most_grid_nodes_2d(100000) == (int64_t(1) << 19));
  CHECK(most_grid_nodes_2d((int64_t(1) << 17) + 1) == (int64_t(1) << 20));
  CHECK(most_grid_nodes_2d(int64_t(1) << 30) == (int64_t(1) << 20));
  const int64_t n = 600000;
  Surface s(n, 0, 21);
  const float h[2] = {0.012f, 0.012f};
  const ConstMatrix x{s.x.data(), n, 2, 2}, quarter{s.x.data(), int64_t(1) << 17, 2, 2};
  const int64_t nodes = plan_grid_cv_nodes(x, KernelKind::Gaussian, Estimator::LocalLinear, h, 1e-3);
  CHECK(nodes == 762);
  CHECK(plan_grid_nodes(x, KernelKind::Gaussian, h, 1e-3) == nodes);
  CHECK(plan_grid_nodes(quarter, KernelKind::Gaussian, h, 1e-3) == 0);
  CHECK(plan_grid_cv_nodes(quarter, KernelKind::Gaussian, Estimator::LocalLinear, h, 1e-3) == 0);
  // That grid's leave-one-out fits against the exact ones, on 20,000 of the points.
  const int64_t m = 20000;
  Problem p;
  p.keys = p.queries = {s.x.data(), m, 2, 2};
  p.values = {s.y.data(), m, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, h};
  p.masks.leave_one_out = true;
  std::vector<float> exact(static_cast<size_t>(m)), grid(static_cast<size_t>(m));
  REQUIRE(local_fit({p, Estimator::LocalLinear}, {Matrix{exact.data(), m, 1, 1}}).status == Status::Ok);
  REQUIRE(grid_local_fit({p, Estimator::LocalLinear}, nodes, {Matrix{grid.data(), m, 1, 1}}).status == Status::Ok);
  double cv_exact = 0, cv_grid = 0;
  for (size_t i = 0; i < size_t(m); ++i) {
    cv_exact += std::pow(double(s.y[i]) - double(exact[i]), 2);
    cv_grid += std::pow(double(s.y[i]) - double(grid[i]), 2);
  }
  CHECK(max_diff(exact, grid) / 4.0 < 5e-3);  // y spans about 4
  CHECK(cv_grid == doctest::Approx(cv_exact).epsilon(5e-3));
}

// 3,000 uniform points with observation weights, every 50th 0 (it does not count), and one point 9 bandwidths (at
// h = 0.01) beyond the rest: out of the grid's reach, fitted exactly. GridCv's scores against float64 loops read it.
struct WeightedSample {
  static constexpr int64_t n = 3000;
  Sample s{n, 1, 11};
  std::vector<float> w = std::vector<float>(size_t(n));
  float h0 = 1.0f;
  Problem p;
  WeightedSample() {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.5f, 1.5f);
    for (size_t i = 0; i < w.size(); ++i) w[i] = i % 50 == 7 ? 0.0f : u(rng);
    s.x[0] = 1.09f;
    p.keys = p.queries = {s.x.data(), n, 1, 1};
    p.values = {s.y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, &h0};
  }
  WeightedSample(const WeightedSample&) = delete;  // p points into s and h0
};

TEST_CASE("grid CV over a search (GridCv) follows a float64 leave-one-out loop and the per-evaluation grid") {
  const WeightedSample ws;
  const int64_t n = ws.n;
  const Sample& s = ws.s;
  const std::vector<float>& w = ws.w;
  const Problem& p = ws.p;
  // Fine to coarse, then finer again: every grid is halved from the one finest grid, so the order does not matter.
  const double bandwidths[] = {0.01, 0.004, 0.03, 0.1, 0.3, 0.002};
  const auto [low, high] = std::minmax_element(s.x.begin(), s.x.end());
  const double range = double(*high) - double(*low);
  const int64_t counted = std::count_if(w.begin(), w.end(), [](float v) { return v > 0; });
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    GridCv grid({p, est, w.data()}, 1e-3);
    REQUIRE(grid.suits());
    for (const double h : bandwidths) {
      double score = 0, standalone = 0;
      bool served = false;
      REQUIRE(grid.score(float(h), &score, &served).status == Status::Ok);
      const Criterion c{est, Score::LeaveOneOut, w.data(), 1e-3};
      REQUIRE(cv_score(p, &h, &standalone, c).status == Status::Ok);
      const double naive = naive_loo_cv(s.x, s.y, w, double(float(h)), est);
      CAPTURE(int(est));
      CAPTURE(h);
      // At the smallest bandwidths the exact score, which visits only the keys in reach, costs less than the grid's
      // convolutions on 3,000 points (plan_grid_cv_cells): those run exactly, in cv_score too.
      REQUIRE(served == (plan_grid_cv_cells(range, KernelKind::Gaussian, float(h), counted, 1e-3) > 0));
      REQUIRE(served == (h >= 0.004));
      if (!served) {
        CHECK(standalone == doctest::Approx(naive).epsilon(1e-4));
        continue;
      }
      CHECK(standalone == score);  // a fresh grid gives the same bytes: a search resumed in steps is one search
      CHECK(score == doctest::Approx(grid_local_fit_cv(p, w, float(h), est, 1e-3)).epsilon(1e-6));
      CHECK(score == doctest::Approx(naive).epsilon(3e-3));  // 64 nodes at h = 0.1 and 0.3: about 1e-3 off
    }
  }
}

TEST_CASE("GridCv's AICc follows a float64 AICc loop: the fits with each point included and their diagonal") {
  const WeightedSample ws;
  const int64_t n = ws.n;
  const Sample& s = ws.s;
  const std::vector<float>& w = ws.w;
  const Problem& p = ws.p;
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
    for (const bool weighted : {false, true}) {
      const std::vector<float> ones(size_t(n), 1.0f), &omega = weighted ? w : ones;
      GridCv grid({p, est, weighted ? w.data() : nullptr}, 1e-3, 0, true);
      REQUIRE(grid.suits());
      for (const double h : {0.01, 0.004, 0.03, 0.1, 0.3, 0.002}) {
        double score = 0, exact = 0;
        bool served = false;
        REQUIRE(grid.score(float(h), &score, &served).status == Status::Ok);
        const Criterion c{est, Score::AICc, weighted ? w.data() : nullptr};
        REQUIRE(cv_score(p, &h, &exact, c).status == Status::Ok);
        const double naive = naive_aicc(s.x, s.y, omega, double(float(h)), est);
        CAPTURE(int(est));
        CAPTURE(weighted);
        CAPTURE(h);
        REQUIRE(served == (h >= 0.004));  // as leave-one-out CV's grid
        if (!served) continue;
        CHECK(exact == doctest::Approx(naive).epsilon(1e-5));  // the premise: the exact AICc is the definition
        // AICc is ln σ̂² plus a penalty: the grid's fits, within about 1e-3 of range(y), move it by about 1e-3.
        CHECK(std::fabs(score - naive) < 2e-3);
      }
    }
  // The search asks the same of the grid: a criterion with a grid tolerance scores AICc there, 1-D.
  double h = 0.03, on_grid = 0;
  REQUIRE(cv_score(p, &h, &on_grid, {Estimator::LocalLinear, Score::AICc, nullptr, 1e-3}).status == Status::Ok);
  GridCv grid({p, Estimator::LocalLinear, nullptr}, 1e-3, 0, true);
  double direct = 0;
  bool served = false;
  REQUIRE(grid.score(0.03f, &direct, &served).status == Status::Ok);
  CHECK(on_grid == direct);
}

TEST_CASE("2-D AICc on the grid follows the exact AICc, its trace the exact fit's") {
  // 4,000 uniform points, sorted by x₁ as a search's sample is.
  const int64_t n = 4000;
  std::vector<float> x(static_cast<size_t>(2 * n)), y(static_cast<size_t>(n));
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<std::pair<float, float>> points(static_cast<size_t>(n));
  for (auto& pt : points) pt = {u(rng), u(rng)};
  std::sort(points.begin(), points.end());
  for (int64_t i = 0; i < n; ++i) {
    const auto [a, b] = points[size_t(i)];
    x[size_t(2 * i)] = a;
    x[size_t(2 * i + 1)] = b;
    y[size_t(i)] = std::sin(6 * a) + std::cos(4 * b) + (u(rng) - 0.5f);
  }
  Problem p;
  p.keys = p.queries = {x.data(), n, 2, 2};
  p.values = {y.data(), n, 1, 1};
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Epanechnikov})
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
      for (const double h : {0.1, 0.2}) {
        CAPTURE(int(kind));
        CAPTURE(int(est));
        CAPTURE(h);
        p.kernel = {kind, 1.0, nullptr};
        const double hh[2] = {h, h};
        const float hf[2] = {float(h), float(h)};
        double on_grid = 0, exact = 0;
        REQUIRE(cv_score(p, hh, &on_grid, {est, Score::AICc, nullptr, 1e-3}).status == Status::Ok);
        REQUIRE(cv_score(p, hh, &exact, {est, Score::AICc}).status == Status::Ok);
        CHECK(on_grid != exact);  // the premise: the grid scored it
        // ln σ̂² moves by about (δf/σ)², the fits' error δf about 1e-3 of range(y) against σ = 0.29 (2e-4), and the
        // penalty by about 2δν/m, ν's binning error under 1 % (measured 1.6e-3 at most), more with the compact
        // kernel (2.9e-3: its binning errs most at the support's edge).
        CHECK(std::fabs(on_grid - exact) < (kind == KernelKind::Gaussian ? 2.5e-3 : 4e-3));
        Problem q = p;
        q.kernel.bandwidth = hf;
        FitSummary grid, full;
        REQUIRE(summarize_fit({q, est}, &grid, nullptr, 1e-3).status == Status::Ok);
        REQUIRE(summarize_fit({q, est}, &full).status == Status::Ok);
        CHECK(grid.empty_rows == 0);
        CHECK(grid.trace == doctest::Approx(full.trace).epsilon(1e-2));
      }
}

TEST_CASE("GridCv fits the points it cannot serve over their own window of keys, as over every key") {
  // 2,988 uniform points, a dense cluster of 500 in 1e-4 beside an empty stretch, and 12 points 0.05 apart (the last
  // three 1e-4) beyond the rest with y around 50: at h = 0.004 each such point's keys weigh e^-78 of the bulk's, so
  // the grid hands it to exact_rows_into, and its residual (about 1) is a large share of the score. The reference is
  // the per-evaluation grid, whose exact rows run over every key.
  const int64_t n = 3500;
  Sample s(n, 1, 19);
  for (int64_t i = 0; i < 500; ++i) s.x[size_t(i)] = 0.3f + 1e-4f * float(i) / 500;
  for (int64_t k = 0; k < 12; ++k) {  // the last three 1e-4 apart: no held-out design is singular
    s.x[size_t(500 + k)] = k < 9 ? 1.05f + 0.05f * float(k) : 1.5f + 1e-4f * float(k - 9);
    s.y[size_t(500 + k)] = 50.0f + float(k % 3);
  }
  for (size_t i = 512; i < s.x.size(); ++i) s.x[i] = s.x[i] < 0.3f && s.x[i] > 0.2f ? s.x[i] - 0.1f : s.x[i];
  const std::vector<float> w(size_t(n), 1.0f);
  const float h0 = 1.0f;
  for (const KernelKind kind : {KernelKind::Gaussian, KernelKind::Laplacian}) {
    Problem p;
    p.keys = p.queries = {s.x.data(), n, 1, 1};
    p.values = {s.y.data(), n, 1, 1};
    p.kernel = {kind, 1.0, &h0};
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
      GridCv grid({p, est, nullptr}, 1e-3);
      for (const double h : {0.004, 0.01}) {
        double score = 0;
        bool served = false;
        REQUIRE(grid.score(float(h), &score, &served).status == Status::Ok);
        CAPTURE(int(kind));
        CAPTURE(int(est));
        CAPTURE(h);
        REQUIRE(served);
        const double old = grid_local_fit_cv(p, w, float(h), est, 1e-3);
        CHECK(score > 0.01);  // the premise: the isolated points' residuals count
        CHECK(score == doctest::Approx(old).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("GridCv of more than 2^18 points bins on a finer grid: a bandwidth of 15 spacings on 2^19 cells") {
  // 600,000 points: the finest grid has 2^20 cells (cv_finest_level), so h = 15 spacings, which wants about 3.7·10⁵
  // nodes at tolerance 1e-3, runs on 2^19 cells; a sample of 2^18 points has no grid for it. The reference is the
  // exact band criterion on the sorted sample (within 2e-6 of a float64 loop: cv_band_window_test.cpp).
  const int64_t n = 600000;
  Sample s(n, 1, 17);
  std::sort(s.x.begin(), s.x.end());  // y as a function of the sorted x: the band criterion reads the sample sorted
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0.0f, 0.2f);
  for (size_t j = 0; j < s.x.size(); ++j) s.y[j] = std::sin(6.0f * s.x[j]) + noise(rng);
  const double range = double(s.x.back()) - double(s.x.front());
  const float h = float(15 * range / double(n)), h0 = 1;
  CHECK(cv_finest_level(n) == 20);
  CHECK(cv_finest_level(int64_t(1) << 18) == 18);
  CHECK(plan_grid_cv_cells(range, KernelKind::Gaussian, h, n, 1e-3) == (int64_t(1) << 19));
  CHECK(plan_grid_cv_cells(range, KernelKind::Gaussian, h, int64_t(1) << 18, 1e-3) == 0);
  Problem p;
  p.keys = p.queries = {s.x.data(), n, 1, 1};
  p.values = {s.y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, &h0};
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    GridCv grid({p, est}, 1e-3);
    double score = 0, exact = 0;
    bool served = false;
    REQUIRE(grid.score(h, &score, &served).status == Status::Ok);
    CHECK(served);
    Problem q = p;
    q.kernel.bandwidth = &h;
    q.masks.leave_one_out = true;
    REQUIRE(bandwidth_detail::band_window_cv(q, est, &exact));
    CAPTURE(int(est));
    CHECK(score == doctest::Approx(exact).epsilon(3e-3));
  }
}

TEST_CASE("GridCv with several value columns and a compact kernel scores as the per-evaluation grid") {
  const int64_t n = 2000;
  const Sample s(n, 1, 13);
  std::vector<float> y2(static_cast<size_t>(2 * n)), w(static_cast<size_t>(n), 1.0f);
  for (size_t i = 0; i < size_t(n); ++i) {
    y2[2 * i] = s.y[i];
    y2[2 * i + 1] = std::cos(5.0f * s.x[i]);
  }
  const float h0 = 1.0f;
  Problem p;
  p.keys = p.queries = {s.x.data(), n, 1, 1};
  p.values = {y2.data(), n, 2, 2};
  p.kernel = {KernelKind::Epanechnikov, 1.0, &h0};
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    GridCv grid({p, est, nullptr}, 1e-3);
    for (const double h : {0.05, 0.0005, 0.2}) {  // 0.0005: some point has no neighbour within h
      double score = 0;
      bool served = false;
      REQUIRE(grid.score(float(h), &score, &served).status == Status::Ok);
      // At 0.0005 the exact score (the keys within h of each point) costs less than the grid: it runs exactly.
      REQUIRE(served == (h != 0.0005));
      if (!served) {
        double exact = 0;
        const double hd = h;
        REQUIRE(cv_score(p, &hd, &exact, Criterion{est, Score::LeaveOneOut, nullptr, 1e-3}).status == Status::Ok);
        CHECK(std::isinf(exact));
        continue;
      }
      const double old = grid_local_fit_cv(p, w, float(h), est, 1e-3);
      CAPTURE(int(est));
      CAPTURE(h);
      CHECK(std::isinf(score) == (h == 0.0005));
      if (std::isfinite(old))
        CHECK(score == doctest::Approx(old).epsilon(1e-6));
      else
        CHECK(std::isinf(score));
    }
  }
}

TEST_CASE("a search on the grid finds the exact CV minimiser") {
  const int64_t n = 10000;
  const Sample s(n, 1, 12);
  std::vector<float> w(static_cast<size_t>(n));
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> u(0.0f, 2.0f);
  for (auto& v : w) v = u(rng);
  const float h0 = 1.0f;
  Problem p;
  p.keys = p.queries = {s.x.data(), n, 1, 1};
  p.values = {s.y.data(), n, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, &h0};
  // Nadaraya–Watson only: the exact search costs 40 s under the sanitizers; local-linear's grid scores are checked
  // against the float64 loop above.
  for (const Estimator est : {Estimator::NadarayaWatson}) {
    double start = 0;
    REQUIRE(rule_of_thumb(p.keys, Rule::Scott, &start) == Status::Ok);
    double h_grid = start, h_exact = start, cv_grid = 0, cv_exact = 0;
    REQUIRE(select_cv(p, false, &h_grid, &cv_grid, nullptr, {est, Score::LeaveOneOut, w.data(), 1e-3}).status ==
            Status::Ok);
    REQUIRE(select_cv(p, false, &h_exact, &cv_exact, nullptr, {est, Score::LeaveOneOut, w.data(), 0}).status ==
            Status::Ok);
    CAPTURE(int(est));
    CHECK(h_grid == doctest::Approx(h_exact).epsilon(2e-2));
    CHECK(cv_grid == doctest::Approx(cv_exact).epsilon(1e-3));
  }
}

namespace {

// Float64 fits from the weighted least-squares definition (reference.h): degree 0 (Nadaraya–Watson) or 1.
std::vector<double> reference_fit(const Problem& p, Estimator est) {
  std::vector<double> fit(static_cast<size_t>(p.queries.rows));
  for (int64_t i = 0; i < p.queries.rows; ++i) {
    const auto lw = reference::local_weights(p, i, est == Estimator::LocalLinear ? 1 : 0, {});
    double f = 0;
    for (int64_t j = 0; j < p.keys.rows; ++j) f += lw.ell[size_t(j)] * double(p.values.row(j)[0]);
    fit[size_t(i)] = f;
  }
  return fit;
}

// What the grid's convolutions cost per channel by direct sums (the nodes·(2L + 1) multiply-adds per row of each
// pass), against the exact fit's 4 taps' worth per pair: above it, the grid pays only by FFT.
bool direct_sums_cost_more(int64_t nodes, int64_t dims, double reach, double h, double step, int64_t n) {
  const double L = std::min(double(nodes), std::ceil(reach * h / step));
  return double(dims) * std::pow(double(nodes), double(dims)) * (2 * L + 1) > double(n) * double(n);
}

}  // namespace

TEST_CASE("a wide kernel on a fine 1-D grid runs on the grid by FFT and matches a float64 fit") {
  // Laplacian (taps to 30 h) at tolerance 1e-5: thousands of taps a side, which sent the sample to the exact engine
  // before the FFT. A gap in the data [0.3, 0.7] holds queries with no weight within 20 bandwidths: there the FFT's
  // rounding is all there is (S₀ ≈ ±1e-15·n, either sign), and those rows must be computed exactly.
  const int64_t n = 2000, I = 300;
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::normal_distribution<float> noise(0.0f, 0.2f);
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n)), q(static_cast<size_t>(I));
  for (size_t j = 0; j < x.size(); ++j) {
    const float t = u(rng);
    x[j] = t < 0.5f ? 0.6f * t : 0.4f + 0.6f * t;
    y[j] = std::sin(6.0f * x[j]) + x[j] + noise(rng);
  }
  for (size_t i = 0; i < q.size(); ++i) q[i] = float(i) / float(I - 1);
  const float lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
  const float h = 0.005f;
  const double tolerance = 1e-5;
  Problem p;
  p.keys = {x.data(), n, 1, 1};
  p.queries = {q.data(), I, 1, 1};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Laplacian, 1.0, &h};
  const int64_t nodes = grid_nodes(p.keys, KernelKind::Laplacian, &h, tolerance);
  REQUIRE(nodes > 0);  // the grid pays: by FFT
  CHECK(direct_sums_cost_more(nodes, 1, 30.0, h, (double(hi) - double(lo)) / double(nodes - 1), n));
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    std::vector<float> exact(static_cast<size_t>(I)), grid(static_cast<size_t>(I));
    REQUIRE(local_fit({p, est}, {Matrix{exact.data(), I, 1, 1}}).status == Status::Ok);
    double estimate = -1;
    REQUIRE(grid_local_fit({p, est}, nodes, {Matrix{grid.data(), I, 1, 1}}, &estimate).status == Status::Ok);
    const std::vector<double> ref = reference_fit(p, est);
    double worst = 0;
    int gap_rows = 0;
    for (size_t i = 0; i < size_t(I); ++i) {
      CAPTURE(int(est));
      CAPTURE(q[i]);
      if (q[i] > 0.4f && q[i] < 0.6f) {  // 20+ bandwidths from any point: fitted exactly, bit for bit
        CHECK(grid[i] == exact[i]);
        ++gap_rows;
      } else if (q[i] >= lo && q[i] <= hi) {
        worst = std::max(worst, std::fabs(double(grid[i]) - ref[i]));
      }
    }
    CAPTURE(int(est));
    CHECK(gap_rows > 40);
    CHECK(worst / 3.0 < 5e-5);  // y spans about 3; measured 1.0e-5 (the tolerance)
    CHECK(estimate >= 0);
    CHECK(estimate < 5e-5);
  }
}

TEST_CASE("a wide kernel on a 2-D grid runs on the grid by FFT and matches a float64 fit") {
  // Laplacian at tolerance 1e-4 with h = 0.15: the taps span the whole grid (L = nodes) along both axes. 20,000
  // points: for 2,000 the exact fit costs less than even the FFT passes (convolutions_pay).
  const int64_t n = 20000, I = 150;
  Surface s(n, I, 22);
  std::vector<float>&x = s.x, &y = s.y, &q = s.q;
  const float h[2] = {0.15f, 0.15f};
  const double tolerance = 1e-4;
  Problem p;
  p.keys = {x.data(), n, 2, 2};
  p.queries = {q.data(), I, 2, 2};
  p.values = {y.data(), n, 1, 1};
  p.kernel = {KernelKind::Laplacian, 1.0, h};
  const int64_t nodes = grid_nodes(p.keys, KernelKind::Laplacian, h, tolerance);
  REQUIRE(nodes > 0);
  double range = 0;
  for (int d = 0; d < 2; ++d) {
    float lo = 1, hi = 0;
    for (int64_t j = 0; j < n; ++j) lo = std::min(lo, x[size_t(2 * j + d)]), hi = std::max(hi, x[size_t(2 * j + d)]);
    range = std::max(range, double(hi) - double(lo));
  }
  // Taps over the whole grid (L = nodes: 194 a side): both passes run by FFT (fft_pays); the direct sums would
  // cost about 6e7 multiply-adds per channel here, the transforms about 1.5e7.
  CHECK(30.0 * h[0] / (range / double(nodes - 1)) > double(nodes));
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    std::vector<float> grid(static_cast<size_t>(I));
    double estimate = -1;
    REQUIRE(grid_local_fit({p, est}, nodes, {Matrix{grid.data(), I, 1, 1}}, &estimate).status == Status::Ok);
    const std::vector<double> ref = reference_fit(p, est);
    double worst = 0;
    for (size_t i = 0; i < size_t(I); ++i) worst = std::max(worst, std::fabs(double(grid[i]) - ref[i]));
    CAPTURE(int(est));
    CAPTURE(nodes);
    CHECK(worst / 4.0 < 3e-4);  // y spans about 4; measured 3.8e-5 and 8.9e-5
    CHECK(estimate >= 0);
    CHECK(estimate < 3e-4);
  }
}

TEST_CASE("GridCv with a wide kernel scores on the grid by FFT, close to the exact CV score") {
  const int64_t n = 2000;
  Sample s(n, 1, 23);
  s.x[0] = 1.5f;  // 25 bandwidths beyond the rest at h = 0.02: its leave-one-out S₀ is FFT noise, fitted exactly
  const float h0 = 1.0f;
  Problem p;
  p.keys = p.queries = {s.x.data(), n, 1, 1};
  p.values = {s.y.data(), n, 1, 1};
  p.kernel = {KernelKind::Laplacian, 1.0, &h0};
  const double tolerance = 1e-5;
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    GridCv grid({p, est, nullptr}, tolerance);
    REQUIRE(grid.suits());
    for (const double h : {0.02, 0.1}) {
      double score = 0, exact = 0;
      bool served = false;
      REQUIRE(grid.score(float(h), &score, &served).status == Status::Ok);
      CAPTURE(int(est));
      CAPTURE(h);
      REQUIRE(served);
      // 8,193 nodes over the range 1.5 at h = 0.02: ~5,000 taps a side, more than the exact fit by direct sums.
      if (h == 0.02) CHECK(direct_sums_cost_more(8193, 1, 30.0, h, 1.5 / 8192, n));
      REQUIRE(cv_score(p, &h, &exact, {est, Score::LeaveOneOut, nullptr, 0}).status == Status::Ok);
      CHECK(score == doctest::Approx(exact).epsilon(3e-4));  // measured 2e-5 to 8e-5
    }
  }
}

TEST_CASE(
    "a 1-D Gaussian 6–50 h beyond dense noisy data: within the grid's tolerance of the float64 fit, no full pass") {
  // 20,000 points with noise sd 0.2: keys a small fraction of h apart, so between the grid's reach (about 5–6 h) and
  // far away many keys behind the end still carry weight; the end keys' weighted mean alone was off by up to 0.07 of
  // range(y) there. Queries 6–50 h beyond both ends.
  const int64_t n = 20000;
  const Sample s(n, 1, 23);
  const auto [lo_it, hi_it] = std::minmax_element(s.x.begin(), s.x.end());
  const auto [ylo, yhi] = std::minmax_element(s.y.begin(), s.y.end());
  const double y_range = double(*yhi) - double(*ylo);
  for (const float h : {0.01f, 0.03f}) {
    std::vector<float> q;
    for (const double d : {6.0, 7.0, 8.0, 10.0, 12.0, 15.0, 20.0, 30.0, 50.0}) {
      q.push_back(float(double(*lo_it) - d * h));
      q.push_back(float(double(*hi_it) + d * h));
    }
    const int64_t I = int64_t(q.size());
    Problem p;
    p.keys = {s.x.data(), n, 1, 1};
    p.queries = {q.data(), I, 1, 1};
    p.values = {s.y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, &h};
    const int64_t nodes = grid_nodes(1.0, h, 1e-3);
    REQUIRE(nodes > 0);
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
      CAPTURE(h);
      CAPTURE(int(est));
      std::vector<float> grid(static_cast<size_t>(I)), exact(static_cast<size_t>(I));
      int64_t exact_rows = -1, range_rows = -1;
      REQUIRE(
          grid_local_fit({p, est}, nodes, {Matrix{grid.data(), I, 1, 1}}, nullptr, &exact_rows, &range_rows).status ==
          Status::Ok);
      CHECK(exact_rows == 0);  // no row ran over the whole sample
      CHECK(range_rows > 0);   // keys behind the end still matter at 6 h: fitted over those keys
      CHECK(range_rows <= I);
      if (est == Estimator::NadarayaWatson) {
        for (int64_t i = 0; i < I; ++i) {
          CAPTURE(q[size_t(i)]);
          CHECK(std::fabs(double(grid[size_t(i)]) - reference_fit(p, i, est)) / y_range <
                1e-3);  // the grid's tolerance
        }
      } else {
        // Local-linear this far out is a near-singular design that the engine's guard (kPivotFloor) pulls toward
        // Nadaraya–Watson, which the float64 textbook solve does not: compared with the exact engine over all keys.
        REQUIRE(local_fit({p, est}, {Matrix{exact.data(), I, 1, 1}}).status == Status::Ok);
        for (int64_t i = 0; i < I; ++i) {
          CAPTURE(q[size_t(i)]);
          CHECK(std::fabs(double(grid[size_t(i)]) - double(exact[size_t(i)])) / y_range < 1e-3);
        }
      }
    }
  }
}
