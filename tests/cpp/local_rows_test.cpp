// The per-query paths (local_rows.h, neighbours.h): k-th neighbour distances against sorting every distance; a fit
// with per-query scales against the fixed-bandwidth fit at each query's bandwidth (2-D; 1-D over sorted keys, point by
// point and from block moments); derivatives of exactly linear data; refusals.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/local_fit.h"
#include "engine/local_rows.h"
#include "engine/neighbours.h"
#include "engine/taylor_rows.h"

using namespace ka;

TEST_CASE("kth_neighbour_distances matches sorting every distance (1-3 D, ties, threads)") {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-3, 3);
  for (int64_t dims = 1; dims <= 3; ++dims) {
    const int64_t J = 257, I = 41;
    std::vector<float> x(static_cast<size_t>(J * dims)), q(static_cast<size_t>(I * dims)),
        scale(static_cast<size_t>(dims));
    for (float& v : x) v = std::round(u(rng) * 8) / 8;  // a coarse lattice: many ties
    for (float& v : q) v = u(rng);
    for (int64_t d = 0; d < dims; ++d) scale[size_t(d)] = 0.5f + float(d);
    std::copy_n(x.begin(), dims, q.begin());  // a query on a sample point
    for (int64_t k : {int64_t(1), int64_t(5), int64_t(64), J}) {
      for (int32_t threads : {1, 3}) {
        std::vector<double> out(static_cast<size_t>(I));
        REQUIRE(kth_neighbour_distances({x.data(), J, dims, dims}, {q.data(), I, dims, dims}, scale.data(), k, threads,
                                        out.data()) == Status::Ok);
        for (int64_t i = 0; i < I; ++i) {
          std::vector<double> all;
          for (int64_t j = 0; j < J; ++j) {
            double s = 0;
            for (int64_t d = 0; d < dims; ++d) {
              const double v = double(x[size_t(j * dims + d)]) / scale[size_t(d)] -
                               double(q[size_t(i * dims + d)]) / scale[size_t(d)];
              s += v * v;
            }
            all.push_back(std::sqrt(s));
          }
          std::nth_element(all.begin(), all.begin() + (k - 1), all.end());
          CHECK(out[size_t(i)] == doctest::Approx(all[size_t(k - 1)]).epsilon(1e-12));
        }
      }
    }
  }
  std::vector<float> x{0, 1, 2}, q{0}, s{1};
  double out = 0;
  CHECK(kth_neighbour_distances({x.data(), 3, 1, 1}, {q.data(), 1, 1, 1}, s.data(), 4, 1, &out) == Status::BadShape);
  s[0] = 0;
  CHECK(kth_neighbour_distances({x.data(), 3, 1, 1}, {q.data(), 1, 1, 1}, s.data(), 2, 1, &out) == Status::BadArgument);
}

TEST_CASE("order_by is the stable sort's permutation (ties, -0, negative and huge keys, both of its sorts)") {
  std::mt19937 rng(11);
  for (const int64_t n : {int64_t(7), int64_t(4095), int64_t(4096), int64_t(50000)}) {
    CAPTURE(n);
    std::vector<double> key(static_cast<size_t>(n));
    std::uniform_int_distribution<int> pick(0, 9);
    for (auto& k : key) {
      const int kind = pick(rng);
      k = kind == 0 ? 0.0 : kind == 1 ? -0.0 : kind == 2 ? -1e300 : kind == 3 ? 2.5 : (pick(rng) - 4.5) * 1e-3 * kind;
    }
    std::vector<int64_t> ours(key.size()), expected(key.size());
    order_by(key.data(), ours.data(), n);
    for (int64_t j = 0; j < n; ++j) expected[size_t(j)] = j;
    std::stable_sort(expected.begin(), expected.end(),
                     [&](int64_t a, int64_t b) { return key[size_t(a)] < key[size_t(b)]; });
    CHECK(ours == expected);
  }
}

TEST_CASE("sort_values is std::sort's order (ties, -0, infinities, negative and huge values, both of its sorts)") {
  std::mt19937 rng(12);
  for (const int64_t n : {int64_t(0), int64_t(7), int64_t(4095), int64_t(4096), int64_t(50000)}) {
    CAPTURE(n);
    std::vector<double> v(static_cast<size_t>(n));
    std::uniform_int_distribution<int> pick(0, 11);
    for (auto& k : v) {
      const int kind = pick(rng);
      k = kind == 0    ? 0.0
          : kind == 1  ? -0.0
          : kind == 2  ? -1e300
          : kind == 3  ? 2.5
          : kind == 10 ? std::numeric_limits<double>::infinity() * (pick(rng) < 6 ? 1 : -1)
                       : (pick(rng) - 4.5) * 1e-3 * kind;
    }
    std::vector<double> expected = v;
    std::sort(expected.begin(), expected.end());
    sort_values(v.data(), n);
    // Equal under == (−0 may come back as +0, as std::sort may place either among the zeros).
    bool same = true;
    for (int64_t j = 0; j < n; ++j) same = same && v[size_t(j)] == expected[size_t(j)];
    CHECK(same);
  }
}

TEST_CASE("a fit with per-query scales is the fixed-bandwidth fit at each query's bandwidth") {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-2, 2);
  for (KernelKind kind : {KernelKind::Gaussian, KernelKind::Tricube, KernelKind::Cauchy}) {
    for (Estimator est : {Estimator::LocalLinear, Estimator::NadarayaWatson}) {
      const int64_t J = 300, I = 12, dims = 2;
      std::vector<float> x(static_cast<size_t>(J * dims)), y(static_cast<size_t>(J)), q(static_cast<size_t>(I * dims));
      for (float& v : x) v = u(rng);
      for (int64_t j = 0; j < J; ++j) y[size_t(j)] = std::sin(x[size_t(2 * j)]) + 0.3f * x[size_t(2 * j + 1)];
      for (float& v : q) v = u(rng) * 0.8f;
      const float h[2] = {0.5f, 0.75f};
      std::vector<double> scale(static_cast<size_t>(I));
      for (int64_t i = 0; i < I; ++i) scale[size_t(i)] = 0.5 + 0.25 * double(i);  // exact in float32 products too
      Problem p;
      p.queries = {q.data(), I, dims, dims};
      p.keys = {x.data(), J, dims, dims};
      p.values = {y.data(), J, 1, 1};
      p.kernel = {kind, 1.0, h};
      Fit f{p, est};
      f.query_scale = scale.data();
      std::vector<float> mean(static_cast<size_t>(I));
      std::vector<double> ss(static_cast<size_t>(I));
      REQUIRE(local_fit(f, FitOut{Matrix{mean.data(), I, 1, 1}, ss.data()}).status == Status::Ok);
      for (int64_t i = 0; i < I; ++i) {
        const float hi[2] = {float(h[0] * scale[size_t(i)]), float(h[1] * scale[size_t(i)])};
        Problem one = p;
        one.queries = {q.data() + i * dims, 1, dims, dims};
        one.kernel.bandwidth = hi;
        float m = 0;
        double s = 0;
        REQUIRE(local_fit({one, est}, FitOut{Matrix{&m, 1, 1, 1}, &s}).status == Status::Ok);
        CHECK(mean[size_t(i)] == doctest::Approx(m).epsilon(1e-4));
        CHECK(ss[size_t(i)] == doctest::Approx(s).epsilon(1e-4));
      }
    }
  }
}

TEST_CASE("1-D span rows over sorted keys (point by point and from block moments) are the fixed-bandwidth fit") {
  // Windows of 500-750 keys sum point by point (tricube: accumulate_window); of 1,000-2,700, without Σw² asked, from
  // block moments (window_blocks.h); with Σw² asked, point by point again. All against local_fit at each query's own
  // bandwidth.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0, 10);
  const int64_t J = 3000, I = 9;
  std::vector<float> x(static_cast<size_t>(J)), y(static_cast<size_t>(J)), omega(static_cast<size_t>(J));
  for (float& v : x) v = u(rng);
  std::sort(x.begin(), x.end());
  for (int64_t j = 0; j < J; ++j) {
    y[size_t(j)] = std::sin(x[size_t(j)]) + 0.1f * float(j % 5);
    omega[size_t(j)] = j % 11 == 0 ? 0.0f : 0.5f + float(j % 3);
  }
  const std::vector<float> q{-0.5f, 0.0f, 0.4f, 2.5f, 5.0f, 7.25f, 9.9f, 10.0f, 10.5f};  // keys within h of each
  for (KernelKind kind : {KernelKind::Tricube, KernelKind::Epanechnikov, KernelKind::Uniform}) {
    for (Estimator est : {Estimator::LocalLinear, Estimator::NadarayaWatson}) {
      for (double reach : {1.0, 4.0}) {
        for (bool weighted : {false, true}) {
          std::vector<double> scale(static_cast<size_t>(I));
          for (int64_t i = 0; i < I; ++i) scale[size_t(i)] = reach * (1 + 0.125 * double(i % 3));
          const float h[1] = {1.0f};
          Problem p;
          p.queries = {q.data(), I, 1, 1};
          p.keys = {x.data(), J, 1, 1};
          p.values = {y.data(), J, 1, 1};
          p.kernel = {kind, 1.0, h};
          Fit f{p, est};
          f.query_scale = scale.data();
          if (weighted) f.observation_weights = omega.data();
          std::vector<float> mean(static_cast<size_t>(I)), mean_b(static_cast<size_t>(I));
          std::vector<double> ss(static_cast<size_t>(I));
          REQUIRE(local_fit(f, FitOut{Matrix{mean.data(), I, 1, 1}}).status == Status::Ok);
          REQUIRE(local_fit(f, FitOut{Matrix{mean_b.data(), I, 1, 1}, ss.data()}).status == Status::Ok);
          for (int64_t i = 0; i < I; ++i) {
            const float hi[1] = {float(scale[size_t(i)])};
            Problem one = p;
            one.queries = {q.data() + i, 1, 1, 1};
            one.kernel.bandwidth = hi;
            Fit g{one, est};
            g.observation_weights = f.observation_weights;
            float m = 0;
            double s = 0;
            REQUIRE(local_fit(g, FitOut{Matrix{&m, 1, 1, 1}, &s}).status == Status::Ok);
            CHECK(mean[size_t(i)] == doctest::Approx(m).epsilon(1e-5));
            CHECK(mean_b[size_t(i)] == doctest::Approx(m).epsilon(1e-5));
            CHECK(ss[size_t(i)] == doctest::Approx(s).epsilon(1e-4));  // the tiles sum in float32
          }
        }
      }
    }
  }
}

TEST_CASE("local_gradient: exact slopes of linear data, Nadaraya-Watson's derivative, the uniform kernel refused") {
  const int64_t J = 200, dims = 2, I = 5;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> x(static_cast<size_t>(J * dims)), y(static_cast<size_t>(J)), q(static_cast<size_t>(I * dims));
  for (float& v : x) v = u(rng);
  for (int64_t j = 0; j < J; ++j) y[size_t(j)] = 1.5f - 2.0f * x[size_t(2 * j)] + 0.5f * x[size_t(2 * j + 1)];
  for (float& v : q) v = u(rng) * 0.5f;
  const float h[2] = {0.4f, 0.6f};
  Problem p;
  p.queries = {q.data(), I, dims, dims};
  p.keys = {x.data(), J, dims, dims};
  p.values = {y.data(), J, 1, 1};
  p.kernel = {KernelKind::Gaussian, 1.0, h};
  std::vector<double> g(static_cast<size_t>((I + 1) * dims)), ss(static_cast<size_t>(I * dims)),
      mean(static_cast<size_t>(I));  // g: a spare row for single queries
  REQUIRE(local_gradient({p, Estimator::LocalLinear}, {g.data(), ss.data(), mean.data()}).status == Status::Ok);
  for (int64_t i = 0; i < I; ++i) {
    CHECK(g[size_t(2 * i)] == doctest::Approx(-2.0).epsilon(1e-5));
    CHECK(g[size_t(2 * i + 1)] == doctest::Approx(0.5).epsilon(1e-5));
    CHECK(ss[size_t(2 * i)] > 0);
  }
  // Nadaraya–Watson at fixed h: the derivative of the ratio, against a central difference of the double fit.
  for (KernelKind kind : {KernelKind::Gaussian, KernelKind::Laplacian, KernelKind::Cauchy, KernelKind::Epanechnikov,
                          KernelKind::Tricube}) {
    p.kernel.kind = kind;
    REQUIRE(local_gradient({p, Estimator::NadarayaWatson}, {g.data(), nullptr, nullptr}).status == Status::Ok);
    for (int64_t i = 0; i < I; ++i) {
      for (int64_t d = 0; d < dims; ++d) {
        const double step = 1e-5;  // short: no kink (the Laplacian's peak, a compact edge) within it here
        float qp[2] = {q[size_t(2 * i)], q[size_t(2 * i + 1)]}, qm[2] = {qp[0], qp[1]};
        qp[d] += float(step);
        qm[d] -= float(step);
        const double actual = double(qp[d]) - double(qm[d]);
        double fp = 0, fm = 0;
        Problem one = p;
        one.queries = {qp, 1, dims, dims};
        REQUIRE(local_gradient({one, Estimator::NadarayaWatson}, {g.data() + I * dims, nullptr, &fp}).status ==
                Status::Ok);
        one.queries = {qm, 1, dims, dims};
        REQUIRE(local_gradient({one, Estimator::NadarayaWatson}, {g.data() + I * dims, nullptr, &fm}).status ==
                Status::Ok);
        CHECK(g[size_t(i * dims + d)] == doctest::Approx((fp - fm) / actual).epsilon(2e-3).scale(1));
      }
    }
  }
  p.kernel.kind = KernelKind::Uniform;
  CHECK(local_gradient({p, Estimator::NadarayaWatson}, {g.data(), nullptr, nullptr}).status == Status::BadArgument);
}

TEST_CASE("the Taylor expansion of a wide 2-D Gaussian fit gives each held-out row's textbook fit") {
  // Points clustered along a line (every row's design near-singular at wide bandwidths) and lognormal axes (tails
  // far from the rest), with and without observation weights, Nadaraya-Watson and local-linear: TaylorRows::row
  // against exact_local_row, the float64 loop over every key, to rounding (orders 7 to 29 here). Where the bandwidth is
  // narrow against the sample the expansion is refused (ok() false).
  const int64_t n = 1500;
  std::mt19937 rng(17);
  std::normal_distribution<double> z(0.0, 1.0);
  std::uniform_int_distribution<int> cluster(0, 7);
  std::uniform_real_distribution<float> decades(-1.0f, 1.0f);
  for (const int shape : {0, 1}) {
    std::vector<float> x(static_cast<size_t>(2 * n)), y(static_cast<size_t>(n)), omega(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int c = cluster(rng);
      const double a = shape == 0 ? 0.1 * c + 0.01 * z(rng) : std::exp(z(rng));
      const double b = shape == 0 ? 0.05 * c + 0.01 * z(rng) : std::exp(z(rng));
      x[size_t(2 * i)] = float(a);
      x[size_t(2 * i + 1)] = float(b);
      y[size_t(i)] = float(std::sin(6 * a) + std::cos(4 * b) + 0.3 * z(rng));
      omega[size_t(i)] = std::pow(10.0f, decades(rng));
    }
    const std::vector<double> wide = shape == 0 ? std::vector<double>{0.5, 1.0, 3.0} : std::vector<double>{15, 40, 200};
    for (const double scale : wide) {
      const float h[2] = {float(scale), float(shape == 0 ? scale / 2 : scale)};
      Problem p;
      p.queries = p.keys = {x.data(), n, 2, 2};
      p.values = {y.data(), n, 1, 1};
      p.kernel = {KernelKind::Gaussian, 1.0, h};
      for (const bool weighted : {false, true}) {
        for (const int degree : {0, 1}) {
          // Each row's own key out (leave-one-out CV) and in (a fit's summary, with the self weight ℓ_i(x_i)).
          p.masks.leave_one_out = weighted == (degree == 1);
          const float* w = weighted ? omega.data() : nullptr;
          const TaylorRows taylor(p, w, degree, n);
          CAPTURE(shape);
          CAPTURE(scale);
          CAPTURE(weighted);
          CAPTURE(degree);
          REQUIRE(taylor.ok());
          ExactRowWork a(3, 1), b(3, 1);
          int64_t compared = 0;
          double worst = 0;
          for (int64_t i = 0; i < n; i += 7) {
            double self_a = -1, self_b = -1;
            const int got = taylor.row(i, a.rows, a.mean, &self_a);
            const bool want = exact_local_row(p, degree, w, i, b.rows, b.mean, &self_b);
            if (got < 0) continue;
            CHECK(got == int(want));
            if (got == 1 && want) {
              worst = std::max(worst, std::fabs(a.mean[0] - b.mean[0]) / (1 + std::fabs(b.mean[0])));
              worst = std::max(worst, std::fabs(self_a - self_b));
              ++compared;
            }
          }
          CHECK(compared > n / 7 - 5);
          CHECK(worst < 1e-11);  // measured up to 2.5e-13
        }
      }
    }
    // Narrow: no expansion reaches double precision.
    const float narrow[2] = {0.01f, 0.01f};
    Problem p;
    p.queries = p.keys = {x.data(), n, 2, 2};
    p.values = {y.data(), n, 1, 1};
    p.kernel = {KernelKind::Gaussian, 1.0, narrow};
    p.masks.leave_one_out = true;
    CHECK(!TaylorRows(p, nullptr, 1, n).ok());
  }
}
