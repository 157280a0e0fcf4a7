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
        // Each row reads at most its reach (about 620 keys at this density), far less than a pass per call.
        CHECK(model.keys_read() - before < I * 1000);
        CHECK(model.keys_read() - before > 0);
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

TEST_CASE("GridModel's gradient is the exact derivative, over its sorted sample") {
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
      REQUIRE(model.gradient(f, {got.data(), got_ss.data(), nullptr}).status == Status::Ok);
      REQUIRE(local_gradient(f, {want.data(), want_ss.data(), nullptr}).status == Status::Ok);
      CHECK(model.sorts() == 1);
      for (int64_t i = 0; i < I; ++i) {  // the same sums in another order: double rounding apart
        CHECK(got[size_t(i)] == doctest::Approx(want[size_t(i)]).epsilon(1e-9).scale(1));
        CHECK(got_ss[size_t(i)] == doctest::Approx(want_ss[size_t(i)]).epsilon(1e-9));
      }
    }
}
