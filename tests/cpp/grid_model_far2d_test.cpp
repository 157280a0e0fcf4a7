// A 2-D grid model's rows beyond the grid's reach (Gaussian): the side and corner tables (far2d.h) against a float64
// loop over every key and against the exact engine, and the passes over the sample they make (none after the first
// call, a run near the edges in it).
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

// n points on [0, 1]² (`triangle`: below the diagonal, x₂ ≤ x₁, so that the data's edge along each axis is a
// point at one end), `width` value columns: sin 6x₁ + x₂²/2 and cos 3x₂ + x₁, each with noise.
struct Sample {
  int64_t n, width;
  std::vector<float> x, y, w, q;
  Sample(int64_t n_, uint32_t seed, bool triangle = false, int64_t width_ = 1)
      : n(n_), width(width_), x(size_t(2 * n_)), y(size_t(n_ * width_)), w(size_t(n_)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (auto& v : x) v = u(rng);
    for (int64_t j = 0; j < n; ++j) {
      if (triangle) x[size_t(2 * j + 1)] *= x[size_t(2 * j)];
      const float a = x[size_t(2 * j)], b = x[size_t(2 * j + 1)];
      y[size_t(j * width)] = std::sin(6.0f * a) + 0.5f * b * b + 0.2f * (u(rng) - 0.5f);
      if (width > 1) y[size_t(j * width + 1)] = std::cos(3.0f * b) + a + 0.2f * (u(rng) - 0.5f);
      w[size_t(j)] = 0.5f + u(rng);
    }
  }
  Fit fit(const float* h, Estimator est, bool weighted) const {
    Problem p;
    p.keys = {x.data(), n, 2, 2};
    p.queries = {q.data(), int64_t(q.size()) / 2, 2, 2};
    p.values = {y.data(), n, width, width};
    p.kernel = {KernelKind::Gaussian, 1.0, h};
    return {p, est, weighted ? w.data() : nullptr};
  }
};

// The float64 loop of a 2-D Gaussian fit at q over every key (bandwidths h₁, h₂; ω when weighted): weights
// ω·e^{−(u₁² + u₂²)/2 − max}, u_d = (x_d − q_d)/h_d; local-linear with the engine's guard written out (local_fit.h:
// each slope pivot of the Cholesky factor raised to at least kPivotFloor = 1e-2 of its diagonal entry), g = (L Lᵀ)⁻¹e₁.
double float64_fit(const Sample& d, const float* q, const float* h, Estimator est, bool weighted, int64_t col = 0) {
  const auto z_of = [&](int64_t j, double* z) {
    z[0] = 1;
    z[1] = (double(d.x[size_t(2 * j)]) - double(q[0])) / double(h[0]);
    z[2] = (double(d.x[size_t(2 * j + 1)]) - double(q[1])) / double(h[1]);
  };
  double top = -INFINITY, z[3];
  for (int64_t j = 0; j < d.n; ++j) {
    z_of(j, z);
    top = std::max(top, -(z[1] * z[1] + z[2] * z[2]) / 2);
  }
  double A[3][3] = {}, t[3] = {};
  for (int64_t j = 0; j < d.n; ++j) {
    z_of(j, z);
    const double w = (weighted ? double(d.w[size_t(j)]) : 1.0) * std::exp(-(z[1] * z[1] + z[2] * z[2]) / 2 - top);
    for (int a = 0; a < 3; ++a) {
      t[a] += w * z[a] * double(d.y[size_t(j * d.width + col)]);
      for (int b = 0; b < 3; ++b) A[a][b] += w * z[a] * z[b];
    }
  }
  return est == Estimator::NadarayaWatson ? t[0] / A[0][0] : reference::guarded_planar_intercept(A, t);
}

}  // namespace

TEST_CASE("GridModel in 2-D serves rows beyond every side and corner from its far tables: float64's fit, no pass") {
  // 20,000 points on [0, 1]², h = (0.03, 0.045): rows 0.3 to 10⁴ bandwidths beyond each of the four sides (the other
  // coordinate spread through the data) and beyond each corner (one distance tiny, both moderate, both huge).
  const int64_t n = 20000;
  Sample d(n, 21);
  const float h[2] = {0.03f, 0.045f};
  float lo[2] = {1, 1}, hi[2] = {0, 0}, ylo = d.y[0], yhi = d.y[0];
  for (int64_t j = 0; j < n; ++j)
    for (int c = 0; c < 2; ++c)
      lo[c] = std::min(lo[c], d.x[size_t(2 * j + c)]), hi[c] = std::max(hi[c], d.x[size_t(2 * j + c)]);
  for (float v : d.y) ylo = std::min(ylo, v), yhi = std::max(yhi, v);
  const double range_y = double(yhi) - double(ylo);
  const double out[] = {0.3, 1, 3, 8, 20, 60, 300, 1e4};  // bandwidths beyond the edge
  const auto beyond = [&](int c, bool high, double s) {
    return float(high ? double(hi[c]) + s * double(h[c]) : double(lo[c]) - s * double(h[c]));
  };
  for (int d_far = 0; d_far < 2; ++d_far)
    for (const bool high : {false, true})
      for (int k = 0; k < 8; ++k) {
        float q[2];
        q[d_far] = beyond(d_far, high, out[k] * (1 + 0.013 * k));
        q[1 - d_far] = 0.05f + 0.9f * float((k * 5 + d_far * 3 + high) % 8) / 7.0f;
        d.q.insert(d.q.end(), q, q + 2);
      }
  const double corner[][2] = {{0.01, 5}, {3, 0.2}, {2, 2}, {9, 25}, {40, 7}, {500, 3e3}};
  for (const bool high1 : {false, true})
    for (const bool high2 : {false, true})
      for (const auto& s : corner) {
        const float q[2] = {beyond(0, high1, s[0]), beyond(1, high2, s[1])};
        d.q.insert(d.q.end(), q, q + 2);
      }
  const int64_t I = int64_t(d.q.size()) / 2;
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
    for (const bool weighted : {false, true}) {
      CAPTURE(int(est));
      CAPTURE(weighted);
      const Fit f = d.fit(h, est, weighted);
      GridModel model(f);
      const int64_t nodes = grid_nodes(f.problem.keys, KernelKind::Gaussian, h, 1e-3);
      REQUIRE(nodes > 0);
      std::vector<float> engine(static_cast<size_t>(I));
      REQUIRE(local_fit(f, FitOut{Matrix{engine.data(), I, 1, 1}}).status == Status::Ok);
      for (int call = 0; call < 2; ++call) {
        std::vector<float> got(static_cast<size_t>(I));
        const int64_t before = model.keys_read();
        REQUIRE(model.fit(f, nodes, FitOut{Matrix{got.data(), I, 1, 1}}).status == Status::Ok);
        CHECK(model.sorts() == 1);  // sorted once, by the first call with rows the grid does not serve
        CHECK(model.binnings() == 1);
        // The first call gathers, once per table, the keys near the edge its rows face (a run of the sorted sample or
        // of the bands of x₂; measured: 18,100 reads for Nadaraya–Watson, 42,000 for local-linear, whose rows 0.3 h
        // out reach furthest, over the eight tables of this small sample at wide bandwidths); the second reads none:
        // every row beyond the grid is served from the tables, none exactly, no pass over the sample.
        if (call == 0) CHECK(model.keys_read() - before < 3 * n);
        if (call == 1) CHECK(model.keys_read() == before);
        for (int64_t i = 0; i < I; ++i) {
          CAPTURE(i);
          CAPTURE(d.q[size_t(2 * i)]);
          CAPTURE(d.q[size_t(2 * i + 1)]);
          const double want = float64_fit(d, d.q.data() + 2 * i, h, est, weighted);
          CHECK(std::fabs(double(got[size_t(i)]) - want) < 1e-3 * range_y);
          CHECK(std::fabs(double(got[size_t(i)]) - double(engine[size_t(i)])) < 1e-3 * range_y);
        }
      }
    }
}

TEST_CASE("GridModel's 2-D far tables where the data's edge is a point: rows whose nearest keys lie deep behind it") {
  // 20,000 points below the diagonal of [0, 1]², two value columns, h = (0.04, 0.03): beyond the low end of x₁ (one
  // corner of the triangle) and the high end of x₂ (the other), rows across the whole range of the other coordinate,
  // 0.5 to 10⁴ bandwidths out, and beyond the two upper corners: the weight a row keeps varies along a side, so the
  // tables' cut differs from node to node, and the rows whose keys of weight lie beyond the first gather ask for more
  // (far2d.cpp); local-linear's design there is a wedge, where the guard acts (x₁'s column first, as the engine's).
  const int64_t n = 20000, width = 2;
  Sample d(n, 22, true, width);
  const float h[2] = {0.04f, 0.03f};
  float lo[2] = {1, 1}, hi[2] = {0, 0};
  double range_y[2] = {0, 0};
  for (int64_t j = 0; j < n; ++j)
    for (int c = 0; c < 2; ++c)
      lo[c] = std::min(lo[c], d.x[size_t(2 * j + c)]), hi[c] = std::max(hi[c], d.x[size_t(2 * j + c)]);
  for (int64_t c = 0; c < width; ++c) {
    float a = d.y[size_t(c)], b = a;
    for (int64_t j = 0; j < n; ++j)
      a = std::min(a, d.y[size_t(j * width + c)]), b = std::max(b, d.y[size_t(j * width + c)]);
    range_y[c] = double(b) - double(a);
  }
  const double out[] = {0.5, 4, 30, 1e4};
  for (int k = 0; k < 4; ++k)
    for (int m = 0; m < 5; ++m) {
      const float v = 0.02f + 0.96f * float(m) / 4;
      const float left[2] = {float(double(lo[0]) - out[k] * double(h[0])), v};
      const float top[2] = {v, float(double(hi[1]) + out[k] * double(h[1]))};
      d.q.insert(d.q.end(), left, left + 2);
      d.q.insert(d.q.end(), top, top + 2);
    }
  // And beyond the empty corner (above the data's left end) and the one at its right end.
  const double corner[][2] = {{0.5, 0.5}, {3, 20}, {40, 2}, {1e3, 1e3}};
  for (const auto& s : corner)
    for (const bool right : {false, true}) {
      const float q[2] = {float(right ? double(hi[0]) + s[0] * double(h[0]) : double(lo[0]) - s[0] * double(h[0])),
                          float(double(hi[1]) + s[1] * double(h[1]))};
      d.q.insert(d.q.end(), q, q + 2);
    }
  const int64_t I = int64_t(d.q.size()) / 2;
  for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear}) {
    CAPTURE(int(est));
    const Fit f = d.fit(h, est, true);
    GridModel model(f);
    const int64_t nodes = grid_nodes(f.problem.keys, KernelKind::Gaussian, h, 1e-3);
    REQUIRE(nodes > 0);
    for (int call = 0; call < 2; ++call) {
      std::vector<float> got(static_cast<size_t>(I * width));
      const int64_t before = model.keys_read();
      REQUIRE(model.fit(f, nodes, FitOut{Matrix{got.data(), I, width, width}}).status == Status::Ok);
      if (call == 1) CHECK(model.keys_read() == before);  // the tables hold every key these rows read
      for (int64_t i = 0; i < I; ++i)
        for (int64_t c = 0; c < width; ++c) {
          CAPTURE(i);
          CAPTURE(c);
          CAPTURE(d.q[size_t(2 * i)]);
          CAPTURE(d.q[size_t(2 * i + 1)]);
          const double want = float64_fit(d, d.q.data() + 2 * i, h, est, true, c);
          CHECK(std::fabs(double(got[size_t(i * width + c)]) - want) < 1e-3 * range_y[c]);
        }
    }
  }
}
