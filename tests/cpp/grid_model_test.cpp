// GridModel against grid_local_fit: the same bytes when it bins at the plan's node count, within the grid's tolerance
// of the exact fit when it keeps finer bins, and binning once for bandwidths that its kept bins serve.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "engine/local_fit.h"
#include "methods/grid/grid.h"
#include "methods/grid/model.h"
#include "reference.h"

using namespace ka;

namespace {

struct Data {
  int64_t n, dims;
  std::vector<float> x, y, w, q;
  Data(int64_t n_, int64_t dims_, int64_t I, uint32_t seed) : n(n_), dims(dims_) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    x.resize(size_t(n * dims));
    y.resize(size_t(n));
    w.resize(size_t(n));
    q.resize(size_t(I * dims));
    for (auto& v : x) v = u(rng);
    for (int64_t j = 0; j < n; ++j) {
      y[size_t(j)] = std::sin(6.0f * x[size_t(j * dims)]) + 0.2f * (u(rng) - 0.5f);
      w[size_t(j)] = 0.5f + u(rng);
    }
    for (auto& v : q) v = u(rng);
  }
  Fit fit(const float* h, Estimator est, bool weighted, KernelKind kind = KernelKind::Gaussian) const {
    Problem p;
    const int64_t I = int64_t(q.size()) / dims;
    p.keys = {x.data(), n, dims, dims};
    p.queries = {q.data(), I, dims, dims};
    p.values = {y.data(), n, 1, 1};
    p.kernel = {kind, 1.0, h};
    return {p, est, weighted ? w.data() : nullptr};
  }
};

struct Out {
  std::vector<float> mean;
  std::vector<double> sum_sq, eff;
  explicit Out(int64_t I) : mean(size_t(I)), sum_sq(size_t(I)), eff(size_t(I)) {}
  FitOut view(bool band) {
    FitOut o{Matrix{mean.data(), int64_t(mean.size()), 1, 1}};
    if (band) {
      o.sum_sq_weights = sum_sq.data();
      o.effective_keys = eff.data();
    }
    return o;
  }
};

}  // namespace

TEST_CASE("GridModel gives grid_local_fit's bytes at the plan's nodes, and convolves once per bandwidth") {
  for (const int64_t dims : {1, 2}) {
    const Data d(dims == 1 ? 20000 : 6000, dims, 300, 3);
    const float h1[2] = {0.03f, 0.05f};
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
      for (const bool weighted : {false, true}) {
        GridModel model(d.fit(h1, est, weighted));
        for (const bool band : {false, true}) {
          const Fit f = d.fit(h1, est, weighted);
          const int64_t nodes = grid_nodes(f.problem.keys, KernelKind::Gaussian, h1, 1e-3);
          REQUIRE(nodes > 0);
          Out want(300), got(300), again(300);
          REQUIRE(grid_local_fit(f, nodes, want.view(band)).status == Status::Ok);
          REQUIRE(model.fit(f, nodes, got.view(band)).status == Status::Ok);
          REQUIRE(model.fit(f, nodes, again.view(band)).status == Status::Ok);
          CHECK(got.mean == want.mean);
          CHECK(again.mean == want.mean);
          if (band) {
            CHECK(got.sum_sq == want.sum_sq);
            CHECK(got.eff == want.eff);
          }
        }
        // One binning and one convolution per layer (with and without the band's moments).
        CHECK(model.binnings() == 2);
        CHECK(model.convolutions() == 2);
      }
  }
}

TEST_CASE("GridModel re-convolves kept bins for a wider bandwidth and re-bins for a narrower one") {
  const Data d(50000, 1, 400, 5);
  const float narrow = 0.01f, wide = 0.015f, wider = 0.05f;
  GridModel model(d.fit(&narrow, Estimator::LocalLinear, false));
  const auto nodes_of = [&](const float* h) {
    return grid_nodes(d.fit(h, Estimator::LocalLinear, false).problem.keys, KernelKind::Gaussian, h, 1e-3);
  };
  Out first(400);
  REQUIRE(model.fit(d.fit(&narrow, Estimator::LocalLinear, false), nodes_of(&narrow), first.view(false)).status ==
          Status::Ok);
  // wide needs fewer nodes, within kKeptBinsFactor: the kept bins serve it, convolved again.
  REQUIRE(nodes_of(&wide) < nodes_of(&narrow));
  REQUIRE(nodes_of(&wide) * kKeptBinsFactor >= nodes_of(&narrow));
  Out kept(400), exact(400);
  const Fit f = d.fit(&wide, Estimator::LocalLinear, false);
  REQUIRE(model.fit(f, nodes_of(&wide), kept.view(false)).status == Status::Ok);
  CHECK(model.binnings() == 1);
  CHECK(model.convolutions() == 2);
  REQUIRE(local_fit(f, exact.view(false)).status == Status::Ok);
  double worst = 0;
  for (size_t i = 0; i < exact.mean.size(); ++i)
    worst = std::max(worst, std::fabs(double(kept.mean[i]) - double(exact.mean[i])));
  CHECK(worst < 1e-3 * 2.2);  // the tolerance, relative to the range of y (about 2.2)
  // Far coarser needs (wider) and finer ones (narrow again after wider) bin again, at the plan's nodes.
  Out coarse(400);
  REQUIRE(model.fit(d.fit(&wider, Estimator::LocalLinear, false), nodes_of(&wider), coarse.view(false)).status ==
          Status::Ok);
  CHECK(model.binnings() == 2);
  Out back(400), fresh(400);
  const Fit g = d.fit(&narrow, Estimator::LocalLinear, false);
  REQUIRE(model.fit(g, nodes_of(&narrow), back.view(false)).status == Status::Ok);
  CHECK(model.binnings() == 3);
  REQUIRE(grid_local_fit(g, nodes_of(&narrow), fresh.view(false)).status == Status::Ok);
  CHECK(back.mean == fresh.mean);
  // Another sample is refused.
  const Data other(100, 1, 400, 6);
  CHECK(model.fit(other.fit(&narrow, Estimator::LocalLinear, false), 64, back.view(false)).status ==
        Status::BadArgument);
}

TEST_CASE("GridModel checks its observation weights once: a bad one refuses every call, a call reads none of them") {
  Data d(5000, 1, 50, 8);
  const float h = 0.05f;
  d.w[17] = -1.0f;
  {
    GridModel model(d.fit(&h, Estimator::LocalLinear, true));
    Out out(50);
    CHECK(model.fit(d.fit(&h, Estimator::LocalLinear, true), 64, out.view(false)).status == Status::BadArgument);
    CHECK(model.fit(d.fit(&h, Estimator::LocalLinear, true), 64, out.view(false)).status == Status::BadArgument);
  }
  d.w[17] = 1.0f;
  GridModel model(d.fit(&h, Estimator::LocalLinear, true));
  Out first(50), second(50);
  REQUIRE(model.fit(d.fit(&h, Estimator::LocalLinear, true), 64, first.view(false)).status == Status::Ok);
  // The model owns its sample (the JS layer hands it a copy); a weight written behind its back after the first call
  // is not read again: the check is not an O(n) pass per call.
  d.w[17] = std::nanf("");
  REQUIRE(model.fit(d.fit(&h, Estimator::LocalLinear, true), 64, second.view(false)).status == Status::Ok);
  CHECK(second.mean == first.mean);
}

TEST_CASE("GridModel serves queries anywhere from its sorted sample: no pass over the sample, the keys in reach only") {
  // 1-D, 20,000 points on [0, 1], h = 0.002 (reach 7.8 h ≈ 310 keys): queries inside, just outside (local-linear's
  // ill-conditioned extrapolations run exactly), beyond the grid's reach (the far rules) and very far, on both sides.
  const int64_t n = 20000, I = 64;
  Data d(n, 1, I, 7);
  const float h = 0.002f;
  const double outside[] = {0.3, 2, 6, 20, 100, 1e4};  // in bandwidths beyond the data's edge
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
    for (const bool weighted : {false, true}) {
      CAPTURE(int(est));
      CAPTURE(weighted);
      GridModel model(d.fit(&h, est, weighted));
      const int64_t nodes = grid_nodes(d.fit(&h, est, weighted).problem.keys, KernelKind::Gaussian, &h, 1e-3);
      REQUIRE(nodes > 0);
      Out inside(I);
      REQUIRE(model.fit(d.fit(&h, est, weighted), nodes, inside.view(false)).status == Status::Ok);
      CHECK(model.sorts() == 0);  // inside the data the grid serves every row: no key read
      CHECK(model.keys_read() == 0);
      float lo = d.x[0], hi = d.x[0];
      for (float v : d.x) lo = std::min(lo, v), hi = std::max(hi, v);
      std::vector<float> beyond(static_cast<size_t>(I));
      for (int64_t i = 0; i < I; ++i) {
        const double by = outside[size_t(i) % 6] * double(h) * (1 + 0.01 * double(i));
        beyond[size_t(i)] = float(i % 2 ? double(hi) + by : double(lo) - by);
      }
      for (int call = 0; call < 2; ++call) {
        Fit f = d.fit(&h, est, weighted);
        f.problem.queries = {beyond.data(), I, 1, 1};
        Out got(I), old(I);
        const int64_t before = model.keys_read();
        REQUIRE(model.fit(f, nodes, got.view(true)).status == Status::Ok);
        CHECK(model.sorts() == 1);  // sorted once, by the first call with such rows
        CHECK(model.binnings() == 2);
        // Each row reads at most its reach (about 620 keys at this density), far less than a pass per call; the
        // second call reads none (the grid and the kept far tables serve every row).
        CHECK(model.keys_read() - before < I * 1000);
        CHECK((model.keys_read() - before > 0) == (call == 0));
        REQUIRE(grid_local_fit(f, nodes, old.view(true)).status == Status::Ok);
        for (int64_t i = 0; i < I; ++i) {
          CAPTURE(beyond[size_t(i)]);
          const double by = outside[size_t(i) % 6];
          if (by >= 20) {  // the far rules (the Gaussian's keys near the end, or its far limit): the same bytes
            CHECK(got.mean[size_t(i)] == old.mean[size_t(i)]);
            CHECK(got.sum_sq[size_t(i)] == old.sum_sq[size_t(i)]);
          } else {  // served by the grid, or exactly over the keys in reach: the full exact fit to float32 rounding
            CHECK(std::fabs(double(got.mean[size_t(i)]) - double(old.mean[size_t(i)])) <= 2e-5 * 2.4);
          }
        }
      }
    }
}

TEST_CASE("GridModel's gradient without a grid is the exact derivative, over its sorted sample") {
  const int64_t n = 20000, I = 64;
  const Data d(n, 1, I, 8);
  const float h = 0.004f;
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
    for (const bool weighted : {false, true}) {
      CAPTURE(int(est));
      CAPTURE(weighted);
      const Fit f = d.fit(&h, est, weighted);
      GridModel model(f);
      std::vector<double> got(static_cast<size_t>(I)), want(got), got_ss(got), want_ss(got);
      REQUIRE(model.gradient(f, 0, {got.data(), got_ss.data(), nullptr}).status == Status::Ok);  // no grid
      REQUIRE(local_gradient(f, {want.data(), want_ss.data(), nullptr}).status == Status::Ok);
      CHECK(model.sorts() == 1);
      for (int64_t i = 0; i < I; ++i) {  // the same sums in another order: double rounding apart
        CHECK(got[size_t(i)] == doctest::Approx(want[size_t(i)]).epsilon(1e-9).scale(1));
        CHECK(got_ss[size_t(i)] == doctest::Approx(want_ss[size_t(i)]).epsilon(1e-9));
      }
    }
}

namespace {

// The float64 loop of a 1-D Gaussian fit at q over every key: weights ω·e^{−u²/2 − max}, u = (x − q)/h, moments in
// double; local-linear with the engine's guard written out (local_fit.h, kPivotFloor: the slope pivot raised to at
// least 1e-2 of its diagonal), for a 2 × 2 design: g = A'⁻¹e₁ with A' = [[S₀, S₁], [S₁, S₁²/S₀ + pivot]].
double float64_fit(const Data& d, double q, double h, Estimator est, bool weighted) {
  double top = -INFINITY;
  for (int64_t j = 0; j < d.n; ++j) {
    const double u = (double(d.x[size_t(j)]) - q) / h;
    top = std::max(top, -u * u / 2);
  }
  double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
  for (int64_t j = 0; j < d.n; ++j) {
    const double u = (double(d.x[size_t(j)]) - q) / h;
    const double w = (weighted ? double(d.w[size_t(j)]) : 1.0) * std::exp(-u * u / 2 - top);
    s0 += w, s1 += w * u, s2 += w * u * u;
    t0 += w * double(d.y[size_t(j)]), t1 += w * u * double(d.y[size_t(j)]);
  }
  if (est == Estimator::NadarayaWatson) return t0 / s0;
  const double pivot = std::max(s2 - s1 * s1 / s0, 1e-2 * s2);
  return ((s1 * s1 / s0 + pivot) * t0 - s1 * t1) / (s0 * pivot);
}

}  // namespace

TEST_CASE("GridModel's rows beyond the grid's reach: its far tables, no key read after the first call, float64's fit") {
  // 20,000 noisy points on [0, 1] (spacing 0.025 h): at 20 h out some 40 keys behind each end still weigh in, at
  // 300 h none but the end's. Queries 20 to 10⁴ bandwidths beyond both ends.
  const int64_t n = 20000;
  const float h = 0.002f;
  const double outside[] = {20, 27, 35, 50, 80, 130, 300, 1e3, 1e4};
  const int64_t I = 2 * 9 * 4;
  Data d(n, 1, I, 9);
  float lo = d.x[0], hi = d.x[0], ylo = d.y[0], yhi = d.y[0];
  for (float v : d.x) lo = std::min(lo, v), hi = std::max(hi, v);
  for (float v : d.y) ylo = std::min(ylo, v), yhi = std::max(yhi, v);
  std::vector<float> beyond(static_cast<size_t>(I));
  for (int64_t i = 0; i < I; ++i) {
    const double by = outside[size_t(i / 2) % 9] * double(h) * (1 + 0.013 * double(i / 18));
    beyond[size_t(i)] = float(i % 2 ? double(hi) + by : double(lo) - by);
  }
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
    for (const bool weighted : {false, true}) {
      CAPTURE(int(est));
      CAPTURE(weighted);
      Fit f = d.fit(&h, est, weighted);
      f.problem.queries = {beyond.data(), I, 1, 1};
      GridModel model(f);
      const int64_t nodes = grid_nodes(f.problem.keys, KernelKind::Gaussian, &h, 1e-3);
      REQUIRE(nodes > 0);
      for (int call = 0; call < 2; ++call) {
        Out got(I);
        const int64_t before = model.keys_read();
        REQUIRE(model.fit(f, nodes, got.view(false)).status == Status::Ok);
        CHECK(model.sorts() == 1);
        // The first call reads the keys within reach of 20 h behind each end (about 2 × 50), the second none.
        if (call == 0) CHECK(model.keys_read() - before < 1000);
        if (call == 1) CHECK(model.keys_read() == before);
        for (int64_t i = 0; i < I; ++i) {
          CAPTURE(beyond[size_t(i)]);
          const double want = float64_fit(d, double(beyond[size_t(i)]), double(h), est, weighted);
          CHECK(std::fabs(double(got.mean[size_t(i)]) - want) < 1e-4 * (double(yhi) - double(ylo)));
        }
      }
    }
}

namespace {

// The float64 derivative of a Gaussian fit at q (dims 1 or 2, bandwidth h on every axis) over every key, from the
// definitions (local_rows.h): local-linear's slope β_d/h of the weighted least squares on [1, (x − q)/h] (solved by
// Cramer's rule, 2 × 2 or 3 × 3), Nadaraya–Watson's Σw·g_d·(y − f)/Σw with g_d = (x_d − q_d)/h².
std::vector<double> float64_derivative(const Data& d, const float* q, double h, Estimator est, bool weighted) {
  const int64_t dims = d.dims;
  double A[3][3] = {}, t[3] = {};
  for (int64_t j = 0; j < d.n; ++j) {
    double z[3] = {1, 0, 0}, r2 = 0;
    for (int64_t k = 0; k < dims; ++k) {
      z[1 + k] = (double(d.x[size_t(j * dims + k)]) - double(q[k])) / h;
      r2 += z[1 + k] * z[1 + k];
    }
    const double w = (weighted ? double(d.w[size_t(j)]) : 1.0) * std::exp(-r2 / 2);
    for (int a = 0; a <= dims; ++a) {
      t[a] += w * z[a] * double(d.y[size_t(j)]);
      for (int b = 0; b <= dims; ++b) A[a][b] += w * z[a] * z[b];
    }
  }
  std::vector<double> out(static_cast<size_t>(dims));
  if (est == Estimator::NadarayaWatson) {
    const double f = t[0] / A[0][0];
    for (int64_t k = 0; k < dims; ++k) out[size_t(k)] = (t[1 + k] - f * A[0][1 + k]) / (h * A[0][0]);
    return out;
  }
  const int p = int(dims) + 1;
  const auto det = [&](double M[3][3]) {
    if (p == 2) return M[0][0] * M[1][1] - M[0][1] * M[1][0];
    return M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) - M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
           M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
  };
  const double whole = det(A);
  for (int64_t k = 0; k < dims; ++k) {
    double M[3][3];
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) M[a][b] = b == 1 + k ? t[a] : A[a][b];
    out[size_t(k)] = det(M) / whole / h;
  }
  return out;
}

}  // namespace

TEST_CASE("GridModel's gradient from the grid's moments: float64's derivative within the grid's tolerance") {
  // y = sin 6x₁ + noise on [0, 1]ᵈ: the derivative's scale is 6·range(y)/2; the grid errs O((spacing/h)²) in its
  // moments, which a slope carries over relative to range(y)/h. Queries inside the box: served by the grid; a few
  // beyond it: exactly, over the sorted sample's keys in reach.
  for (const int64_t dims : {int64_t(1), int64_t(2)}) {
    const int64_t n = dims == 1 ? 20000 : 8000, I = 40;
    Data d(n, dims, I, 10 + uint32_t(dims));
    const float h[2] = {dims == 1 ? 0.01f : 0.06f, dims == 1 ? 0.01f : 0.06f};
    for (int64_t i = 0; i < I; ++i)  // 36 queries inside, spread over [0.02, 0.98]; 4 beyond the box
      for (int64_t k = 0; k < dims; ++k)
        d.q[size_t(i * dims + k)] = i < 36 ? 0.02f + 0.96f * d.q[size_t(i * dims + k)] : (i % 2 ? 1.05f : -0.05f);
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
      for (const bool weighted : {false, true}) {
        CAPTURE(dims);
        CAPTURE(int(est));
        CAPTURE(weighted);
        const Fit f = d.fit(h, est, weighted);
        GridModel model(f);
        const int64_t nodes = grid_nodes(f.problem.keys, KernelKind::Gaussian, h, 1e-3);
        REQUIRE(nodes > 0);
        std::vector<double> got(size_t(I * dims)), ss(got);
        REQUIRE(model.gradient(f, nodes, {got.data(), ss.data(), nullptr}).status == Status::Ok);
        CHECK(model.convolutions() == 1);
        CHECK(model.sorts() == 1);  // the 4 rows beyond the box: exactly, over the sorted sample
        std::vector<double> exact(got.size()), exact_ss(got.size());
        REQUIRE(local_gradient(f, {exact.data(), exact_ss.data(), nullptr}).status == Status::Ok);
        double worst = 0;
        for (int64_t i = 0; i < I; ++i) {
          const std::vector<double> want = float64_derivative(d, d.q.data() + i * dims, double(h[0]), est, weighted);
          for (int64_t k = 0; k < dims; ++k) {
            const size_t at = size_t(i * dims + k);
            CHECK(ss[at] > 0);
            if (i < 36) {
              worst = std::max(worst, std::fabs(got[at] - want[size_t(k)]));
              // Σℓ'² against the exact rows' (the same definition over every key): within the tolerance too.
              CHECK(ss[at] == doctest::Approx(exact_ss[at]).epsilon(1e-2));
            } else {  // local-linear's guard acts 5 h out, where the textbook loop has none: the exact engine's rows
              CHECK(got[at] == doctest::Approx(exact[at]).epsilon(1e-9).scale(1));
              CHECK(ss[at] == doctest::Approx(exact_ss[at]).epsilon(1e-9));
            }
          }
        }
        // Relative to range(y)/h (about 1.2/h): measured 2e-5 (1-D) to 1.4e-3 (2-D local-linear 0.5 h inside the edge).
        CHECK(worst * double(h[0]) / 1.2 < 3e-3);
      }
  }
}

namespace {

// The float64 loop of a 2-D Gaussian fit at q over every key (bandwidth h on both axes), with the engine's guard
// written out for the 3 × 3 local-linear design (local_fit.h: each slope pivot of the Cholesky factor raised to at
// least kPivotFloor = 1e-2 of its diagonal entry), g = (L Lᵀ)⁻¹e₁ and the fit gᵀt.
double float64_fit_2d(const Data& d, const float* q, double h, Estimator est) {
  double top = -INFINITY;
  for (int64_t j = 0; j < d.n; ++j) {
    const double u = (double(d.x[size_t(2 * j)]) - q[0]) / h, v = (double(d.x[size_t(2 * j + 1)]) - q[1]) / h;
    top = std::max(top, -(u * u + v * v) / 2);
  }
  double A[3][3] = {}, t[3] = {};
  for (int64_t j = 0; j < d.n; ++j) {
    const double z[3] = {1, (double(d.x[size_t(2 * j)]) - q[0]) / h, (double(d.x[size_t(2 * j + 1)]) - q[1]) / h};
    const double w = std::exp(-(z[1] * z[1] + z[2] * z[2]) / 2 - top);
    for (int a = 0; a < 3; ++a) {
      t[a] += w * z[a] * double(d.y[size_t(j)]);
      for (int b = 0; b < 3; ++b) A[a][b] += w * z[a] * z[b];
    }
  }
  return est == Estimator::NadarayaWatson ? t[0] / A[0][0] : reference::guarded_planar_intercept(A, t);
}

}  // namespace

TEST_CASE("GridModel in 2-D beyond the data left and right: float64's fit, each row over the keys in its reach") {
  // 8,000 points on [0, 1]², h = 0.03: queries 8, 20 and 50 h beyond either end of x₁, x₂ inside. The rows the grid
  // does not serve run exactly over the sorted sample's keys whose x₁ lies within their reach (a slab of it, not a
  // pass: fewer keys a row than the sample holds).
  const int64_t n = 8000, I = 24;
  Data d(n, 2, I, 12);
  const float h[2] = {0.03f, 0.03f};
  float lo = d.x[0], hi = d.x[0], ylo = d.y[0], yhi = d.y[0];
  for (int64_t j = 0; j < n; ++j) lo = std::min(lo, d.x[size_t(2 * j)]), hi = std::max(hi, d.x[size_t(2 * j)]);
  for (float v : d.y) ylo = std::min(ylo, v), yhi = std::max(yhi, v);
  const double outside[] = {8, 20, 50};
  for (int64_t i = 0; i < I; ++i) {
    const double by = outside[size_t(i / 2) % 3] * double(h[0]);
    d.q[size_t(2 * i)] = float(i % 2 ? double(hi) + by : double(lo) - by);
    d.q[size_t(2 * i + 1)] = 0.1f + 0.8f * d.q[size_t(2 * i + 1)];
  }
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    CAPTURE(int(est));
    const Fit f = d.fit(h, est, false);
    GridModel model(f);
    const int64_t nodes = grid_nodes(f.problem.keys, KernelKind::Gaussian, h, 1e-3);
    REQUIRE(nodes > 0);
    Out got(I);
    REQUIRE(model.fit(f, nodes, got.view(false)).status == Status::Ok);
    CHECK(model.sorts() == 1);
    CHECK(model.keys_read() < I * n / 8);  // measured: about 680 keys a row, a twelfth of the sample
    for (int64_t i = 0; i < I; ++i) {
      CAPTURE(d.q[size_t(2 * i)]);
      const double want = float64_fit_2d(d, d.q.data() + 2 * i, double(h[0]), est);
      CHECK(std::fabs(double(got.mean[size_t(i)]) - want) < 1e-3 * (double(yhi) - double(ylo)));
    }
  }
}

TEST_CASE(
    "GridModel in 2-D beyond the data along x₂ and at the corners: float64's fit from the bands of keys in reach") {
  // 20,000 points on [0, 1]², h = 0.03: queries 8, 20 and 50 h above and below the data, and beyond two corners. Each
  // row reads only the keys of the bands of x₂ within its reach (key_bands.h), each band's run of x₁ within it: a
  // crescent of the sample near the edge it faces, not a strip of x₁ across every x₂.
  const int64_t n = 20000, I = 24;
  Data d(n, 2, I, 13);
  const float h[2] = {0.03f, 0.03f};
  float ylo = d.y[0], yhi = d.y[0];
  for (float v : d.y) ylo = std::min(ylo, v), yhi = std::max(yhi, v);
  const double outside[] = {8, 20, 50};
  for (int64_t i = 0; i < I; ++i) {
    const double by = outside[size_t(i / 2) % 3] * double(h[0]);
    const bool corner = i >= 18;
    d.q[size_t(2 * i + 1)] = float(i % 2 ? 1.0 + by : -by);
    d.q[size_t(2 * i)] = corner ? float(i % 2 ? 1.0 + by : -by) : 0.1f + 0.8f * d.q[size_t(2 * i)];
  }
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    CAPTURE(int(est));
    const Fit f = d.fit(h, est, false);
    GridModel model(f);
    const int64_t nodes = grid_nodes(f.problem.keys, KernelKind::Gaussian, h, 1e-3);
    REQUIRE(nodes > 0);
    Out got(I);
    REQUIRE(model.fit(f, nodes, got.view(false)).status == Status::Ok);
    CHECK(model.sorts() == 1);
    // Measured: 427 keys a row, a fiftieth of the sample.
    CHECK(model.keys_read() < I * n / 20);
    for (int64_t i = 0; i < I; ++i) {
      CAPTURE(i);
      const double want = float64_fit_2d(d, d.q.data() + 2 * i, double(h[0]), est);
      CHECK(std::fabs(double(got.mean[size_t(i)]) - want) < 1e-3 * (double(yhi) - double(ylo)));
    }
  }
  // Observation weights and the Laplacian and Epanechnikov kernels: the gathered rows (SortedKeys::exact_rows, what a
  // model runs for the rows its grid does not serve) give the exact fit over every key to float32 rounding.
  for (const KernelKind kind : {KernelKind::Laplacian, KernelKind::Epanechnikov}) {
    CAPTURE(int(kind));
    const float hk[2] = {0.05f, 0.08f};
    Data e(n, 2, I, 14);
    for (int64_t i = 0; i < I; ++i) {  // beyond the top edge (Laplacian), or inside near it (Epanechnikov)
      e.q[size_t(2 * i + 1)] = kind == KernelKind::Laplacian ? 1.0f + 0.05f * float(i % 6) : 0.97f;
    }
    const Fit f = e.fit(hk, Estimator::LocalLinear, true, kind);
    SortedKeys sorted;
    std::vector<int64_t> rows(static_cast<size_t>(I));
    for (int64_t i = 0; i < I; ++i) rows[size_t(i)] = i;
    Out got(I), want(I);
    REQUIRE(sorted.exact_rows(f, rows.data(), I, got.view(false)).status == Status::Ok);
    // The Epanechnikov's rows read the keys within h along both axes; the Laplacian's reach, where e^−|u| falls by
    // the skip (27 h at this n), spans the sample.
    if (kind == KernelKind::Epanechnikov) CHECK(sorted.keys_read < I * n / 4);
    REQUIRE(local_fit(f, want.view(false)).status == Status::Ok);
    for (int64_t i = 0; i < I; ++i)
      CHECK(double(got.mean[size_t(i)]) == doctest::Approx(double(want.mean[size_t(i)])).epsilon(1e-5));
  }
}
