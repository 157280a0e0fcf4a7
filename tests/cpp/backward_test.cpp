// The backward pass against a float64 reference backward (naive loops over the full weight matrix) at lane and tile
// boundaries for every kernel, mask and head count, and both against central finite differences of the float64
// reference forward.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "gradients/backward.h"
#include "cases.h"
#include "reference.h"

using namespace ka;
using namespace ka::testing;

namespace {

// The differentiable kernels (uniform is refused: its derivative is zero almost everywhere).
const std::vector<KernelKind> kSmoothKernels = {KernelKind::Softmax, KernelKind::Gaussian,     KernelKind::Laplacian,
                                                KernelKind::Cauchy,  KernelKind::Epanechnikov, KernelKind::Tricube};

struct Grads {
  std::vector<double> dq, dk, dv, dtheta;
};

// ∂ log w / ∂u_d from each kernel's definition (reference.h's log_weight): −u²/2, −|u|, −log(1 + Σu²),
// log(1 − u²), 3 log(1 − |u|³).
double dlogw_du(KernelKind kind, double u, double sum_u2) {
  const double a = std::fabs(u), sign = u > 0 ? 1 : u < 0 ? -1 : 0;
  switch (kind) {
    case KernelKind::Gaussian: return -u;
    case KernelKind::Laplacian: return -sign;
    case KernelKind::Cauchy: return -2 * u / (1 + sum_u2);
    case KernelKind::Epanechnikov: return -2 * u / (1 - u * u);
    case KernelKind::Tricube: return 3 * (-3 * a * a * sign) / (1 - a * a * a);
    default: return 0;
  }
}

// The float64 reference backward of L = Σ dout ∘ attention(p): the full weight matrix of each row from
// reference::row_weights, then dS_ij = w_ij (dO_i·v_j − dO_i·O_i) and the chain rule through each pair's log-weight.
// Empty rows: nothing under NaN/Zero; under Nearest dO_i / n to each of the n nearest admissible keys' values.
Grads reference_backward(const Problem& p, const std::vector<double>& dout) {
  const int64_t I = p.queries.rows, J = p.keys.rows, M = p.queries.cols, D = p.values.cols;
  const int64_t m = M / p.heads, dh = D / p.heads;
  const bool softmax = p.kernel.kind == KernelKind::Softmax;
  Grads g{std::vector<double>(size_t(I * M)), std::vector<double>(size_t(J * M)), std::vector<double>(size_t(J * D)),
          std::vector<double>(softmax ? 1 : size_t(M))};
  for (int64_t h = 0; h < p.heads; ++h)
    for (int64_t i = 0; i < I; ++i) {
      const auto w = reference::row_weights(p, h, i);
      const double* dO = dout.data() + i * D + h * dh;
      if (w.empty()) {
        if (p.empty != EmptyPolicy::Nearest) continue;
        double best = reference::kInf;
        std::vector<int64_t> nearest;
        for (int64_t j = 0; j < J; ++j) {
          if (!p.masks.allows(i, j, J)) continue;
          double dist = 0;
          for (int64_t d = h * m; d < (h + 1) * m; ++d) {
            const double u = (double(p.queries.row(i)[d]) - double(p.keys.row(j)[d])) / double(p.kernel.bandwidth[d]);
            dist += u * u;
          }
          if (dist < best) nearest.clear(), best = dist;
          if (dist == best) nearest.push_back(j);
        }
        for (const int64_t j : nearest)
          for (int64_t d = 0; d < dh; ++d) g.dv[size_t(j * D + h * dh + d)] += dO[d] / double(nearest.size());
        continue;
      }
      double delta = 0;
      for (int64_t d = 0; d < dh; ++d) {
        double o = 0;
        for (int64_t j = 0; j < J; ++j) o += w[size_t(j)] * double(p.values.row(j)[h * dh + d]);
        delta += dO[d] * o;
      }
      for (int64_t j = 0; j < J; ++j) {
        if (!(w[size_t(j)] > 0)) continue;
        double dP = 0;
        for (int64_t d = 0; d < dh; ++d) dP += dO[d] * double(p.values.row(j)[h * dh + d]);
        const double dS = w[size_t(j)] * (dP - delta);
        for (int64_t d = 0; d < dh; ++d) g.dv[size_t(j * D + h * dh + d)] += w[size_t(j)] * dO[d];
        const float* q = p.queries.row(i);
        const float* k = p.keys.row(j);
        if (softmax) {
          double dot = 0;
          for (int64_t d = h * m; d < (h + 1) * m; ++d) {
            dot += double(q[d]) * double(k[d]);
            g.dq[size_t(i * M + d)] += dS * p.kernel.scale * double(k[d]);
            g.dk[size_t(j * M + d)] += dS * p.kernel.scale * double(q[d]);
          }
          g.dtheta[0] += dS * dot;
          continue;
        }
        double sum_u2 = 0;
        for (int64_t d = h * m; d < (h + 1) * m; ++d) {
          const double u = (double(q[d]) - double(k[d])) / double(p.kernel.bandwidth[d]);
          sum_u2 += u * u;
        }
        for (int64_t d = h * m; d < (h + 1) * m; ++d) {
          const double bw = double(p.kernel.bandwidth[d]), u = (double(q[d]) - double(k[d])) / bw;
          const double du = dS * dlogw_du(p.kernel.kind, u, sum_u2);
          g.dq[size_t(i * M + d)] += du / bw;  // ∂u/∂q = 1/h
          g.dk[size_t(j * M + d)] -= du / bw;  // ∂u/∂k = −1/h
          g.dtheta[size_t(d)] -= du * u;       // ∂u/∂log h = −u
        }
      }
    }
  return g;
}

std::vector<double> random_dout(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1, 1);
  std::vector<double> x(static_cast<size_t>(n));
  for (auto& e : x) e = double(float(unit(rng)));  // float32-representable, as the engine reads it
  return x;
}

struct CoreGrads {
  Result result;
  std::vector<float> dq, dk, dv, dtheta;
};

CoreGrads run_backward(const Problem& p, const std::vector<double>& dout) {
  const int64_t I = p.queries.rows, J = p.keys.rows, M = p.queries.cols, D = p.values.cols;
  const std::vector<float> dO(dout.begin(), dout.end());
  CoreGrads c{{},
              std::vector<float>(size_t(I * M), -7.0f),
              std::vector<float>(size_t(J * M), -7.0f),
              std::vector<float>(size_t(J * D), -7.0f),
              std::vector<float>(p.kernel.kind == KernelKind::Softmax ? 1 : size_t(M), -7.0f)};
  const Gradients g{{c.dq.data(), I, M, M}, {c.dk.data(), J, M, M}, {c.dv.data(), J, D, D}, c.dtheta.data()};
  c.result = attention_gradients(p, ConstMatrix{dO.data(), I, D, D}, g, Matrix{});
  return c;
}

// max |got − want| / max |want|, the error relative to the gradient's scale (floored at 1e-3: inputs are O(1), so a
// gradient below that is zero up to cancellation, and its error is measured absolutely against 1e-3).
template <class T>
double relative_error(const std::vector<T>& got, const std::vector<double>& want) {
  double scale = 1e-3, worst = 0;
  for (const double w : want) scale = std::max(scale, std::fabs(w));
  for (size_t n = 0; n < want.size(); ++n) {
    const double e = std::fabs(double(got[n]) - want[n]);
    worst = std::max(worst, std::isnan(e) ? INFINITY : e);
  }
  return worst / scale;
}

// The worst relative error of the four gradients.
template <class G>
double worst_error(const G& got, const Grads& want) {
  return std::max({relative_error(got.dq, want.dq), relative_error(got.dk, want.dk), relative_error(got.dv, want.dv),
                   relative_error(got.dtheta, want.dtheta)});
}

// 1e-5 relative to the gradient's scale, as the issue asks: the engine's float32 forward (output and log-sum-exp,
// ~1e-6 relative for scores of O(1–10)) enters through D_i and the weights; everything after it is double.
constexpr double kTolerance = 1e-5;

double compare(const Case& c, uint32_t seed) {
  const auto dout = random_dout(c.I * c.D, seed);
  const CoreGrads got = run_backward(c.problem, dout);
  REQUIRE(got.result.status == Status::Ok);
  return worst_error(got, reference_backward(c.problem, dout));
}

uint32_t seed_of(int64_t a, int64_t b, int64_t c, int64_t d) { return uint32_t(((a * 131 + b) * 131 + c) * 131 + d); }

// Central differences of L = Σ dout ∘ reference::attention, in double, perturbing the float32 inputs by about
// the step (the actual float32 perturbation is used). Returns the same layout as the backward.
Grads finite_differences(Case& c, const std::vector<double>& dout) {
  Problem& p = c.problem;
  const auto loss = [&] {
    const auto out = reference::attention(p);
    double l = 0;
    for (size_t n = 0; n < out.size(); ++n)
      if (!std::isnan(out[n])) l += dout[n] * out[n];
    return l;
  };
  // Richardson extrapolation of the central difference over steps 2e-4 and 1e-4 cancels the step² term of its
  // error, which near a compact kernel's edge (steep log-weights) would otherwise reach 2e-5.
  const auto richardson = [](const std::function<double(double)>& central) {
    return (4 * central(1e-4) - central(2e-4)) / 3;
  };
  const auto diff = [&](float& x) {
    return richardson([&](double step) {
      const float x0 = x;
      x = float(double(x0) + step);
      const double up = double(x) - double(x0), l_up = loss();
      x = float(double(x0) - step);
      const double down = double(x0) - double(x), l_down = loss();
      x = x0;
      return (l_up - l_down) / (up + down);
    });
  };
  Grads g;
  for (auto& x : c.q) g.dq.push_back(diff(x));
  for (auto& x : c.k) g.dk.push_back(diff(x));
  for (auto& x : c.v) g.dv.push_back(diff(x));
  if (p.kernel.kind == KernelKind::Softmax) {
    g.dtheta.push_back(richardson([&](double step) {
      const double s0 = p.kernel.scale;
      p.kernel.scale = s0 + step;
      const double l_up = loss();
      p.kernel.scale = s0 - step;
      const double l_down = loss();
      p.kernel.scale = s0;
      return (l_up - l_down) / (2 * step);
    }));
  } else {
    // d/d log h: perturb h multiplicatively, h·e^(±step), and divide by the actual change of log h.
    for (auto& h : c.bandwidth)
      g.dtheta.push_back(richardson([&](double step) {
        const float h0 = h;
        h = float(double(h0) * std::exp(step));
        const double up = std::log(double(h) / double(h0)), l_up = loss();
        h = float(double(h0) * std::exp(-step));
        const double down = std::log(double(h0) / double(h)), l_down = loss();
        h = h0;
        return (l_up - l_down) / (up + down);
      }));
  }
  return g;
}

// True when no admissible pair is within `margin` (in u) of a point where the kernel is not smooth: u_d = 0 for the
// Laplacian, |u_d| = 1 for compact kernels. Finite differences across such a point measure a different slope.
bool smooth_at(const Problem& p, double margin) {
  if (p.kernel.kind == KernelKind::Softmax || p.kernel.kind == KernelKind::Gaussian ||
      p.kernel.kind == KernelKind::Cauchy)
    return true;
  const double edge = p.kernel.kind == KernelKind::Laplacian ? 0 : 1;
  for (int64_t i = 0; i < p.queries.rows; ++i)
    for (int64_t j = 0; j < p.keys.rows; ++j) {
      if (!p.masks.allows(i, j, p.keys.rows)) continue;
      for (int64_t d = 0; d < p.queries.cols; ++d) {
        const double u = (double(p.queries.row(i)[d]) - double(p.keys.row(j)[d])) / double(p.kernel.bandwidth[d]);
        if (std::fabs(std::fabs(u) - edge) < margin) return false;
      }
    }
  return true;
}

}  // namespace

// The float64 reference backward is O(I·J·M·D) per case: instrumented (ASan/UBSan) and WebAssembly runs, several
// times slower, stop at the tile boundaries (I·J·M up to 65·65·16), which keeps the CI run within its budget; the
// native run takes every size up to 257.
#if defined(__SANITIZE_ADDRESS__) || defined(__EMSCRIPTEN__)
constexpr int64_t kMaxWork = 65 * 65 * 16;
#else
constexpr int64_t kMaxWork = 257 * 257 * 5;
#endif

TEST_CASE("the backward pass matches the float64 reference backward at all boundary sizes I x J and dimensions M") {
  double worst = 0;
  for (const KernelKind kind : kSmoothKernels)
    for (const int64_t M : kDims)
      for (const int64_t I : kSizes)
        for (const int64_t J : kSizes) {
          if (I * J * M > kMaxWork) continue;  // the largest (seconds each natively)
          const int64_t D = 1 + (I + J + M) % 5;
          const Case c(I, J, M, D, kind, MaskKind::None, 1, seed_of(int64_t(kind), M, I, J));
          CAPTURE(int(kind));
          CAPTURE(M);
          CAPTURE(I);
          CAPTURE(J);
          CAPTURE(D);
          const double e = compare(c, seed_of(I, J, M, 1));
          worst = std::max(worst, e);
          CHECK(e <= kTolerance);
        }
  MESSAGE("worst relative error vs the float64 reference backward (no masks): " << worst);
}

TEST_CASE("the backward pass matches the reference under every mask for every kernel") {
  double worst = 0;
  for (const MaskKind mask : kMasks)
    for (const KernelKind kind : kSmoothKernels)
      for (const int64_t M : kDims)
        for (const int64_t n : kSizes) {
          const int64_t J = n, I = mask == MaskKind::LeaveOneOut ? n : (n * 7) % 20 + 1;
          if (I * J * M > kMaxWork) continue;
          const Case c(I, J, M, 3, kind, mask, 1, seed_of(int64_t(mask), int64_t(kind), M, n));
          CAPTURE(int(mask));
          CAPTURE(int(kind));
          CAPTURE(M);
          CAPTURE(I);
          CAPTURE(J);
          const double e = compare(c, seed_of(I, J, M, 2));
          worst = std::max(worst, e);
          CHECK(e <= kTolerance);
        }
  MESSAGE("worst relative error vs the float64 reference backward (masks): " << worst);
}

TEST_CASE("the backward pass matches the reference with several heads") {
  double worst = 0;
  for (const int32_t heads : {1, 2, 4})
    for (const KernelKind kind : kSmoothKernels)
      for (const MaskKind mask : {MaskKind::None, MaskKind::Causal, MaskKind::KeyPadding, MaskKind::LeaveOneOut})
        for (const int64_t M : {4, 16, 64})
          for (const int64_t n : kSizes) {
            if (n * n * M > kMaxWork) continue;
            const Case c(n, n, M, 2 * heads, kind, mask, heads, seed_of(heads, int64_t(kind), M, n));
            CAPTURE(heads);
            CAPTURE(int(kind));
            CAPTURE(int(mask));
            CAPTURE(M);
            CAPTURE(n);
            const double e = compare(c, seed_of(heads, n, M, 3));
            worst = std::max(worst, e);
            CHECK(e <= kTolerance);
          }
  MESSAGE("worst relative error vs the float64 reference backward (heads): " << worst);
}

TEST_CASE("the reference backward and the engine's gradients match central finite differences") {
  // The reference backward is checked against finite differences in double (Richardson-extrapolated central
  // differences: truncation error ~step⁴); the engine's float32 run against the same differences to 1e-3, as the issue
  // asks.
  double worst_reference = 0, worst_engine = 0;
  int checked = 0;
  for (const KernelKind kind : kSmoothKernels)
    for (const MaskKind mask : kMasks)
      for (const int32_t heads : {1, 2})
        for (const int64_t n : {1, 2, 3, 5}) {
          const int64_t I = mask == MaskKind::LeaveOneOut ? n : n + 1, J = n, M = 2 * heads, D = heads;
          // Seeds whose pairs stay clear of the kernel's kinks (the Laplacian at u = 0, compact kernels at the edge
          // of their support), where a difference quotient over ±step measures a different slope.
          for (uint32_t attempt = 0; attempt < 200; ++attempt) {
            Case c(I, J, M, D, kind, mask, heads, seed_of(int64_t(kind), int64_t(mask), heads * 10 + n, attempt));
            if (!smooth_at(c.problem, 0.02)) continue;
            CAPTURE(int(kind));
            CAPTURE(int(mask));
            CAPTURE(heads);
            CAPTURE(n);
            CAPTURE(attempt);
            const auto dout = random_dout(I * D, attempt + 17);
            const Grads fd = finite_differences(c, dout);
            const Grads ref = reference_backward(c.problem, dout);
            const CoreGrads got = run_backward(c.problem, dout);
            REQUIRE(got.result.status == Status::Ok);
            const double er = worst_error(ref, fd), ee = worst_error(got, fd);
            worst_reference = std::max(worst_reference, er);
            worst_engine = std::max(worst_engine, ee);
            CHECK(er <= 1e-5);
            CHECK(ee <= 1e-3);
            ++checked;
            break;
          }
        }
  CHECK(checked == int(kSmoothKernels.size() * kMasks.size() * 2 * 4));
  MESSAGE("finite differences: reference backward " << worst_reference << ", engine " << worst_engine);
}

TEST_CASE("the forward pass saves the output of attention() and the log-sum-exp of each row") {
  for (const KernelKind kind : kKernels)
    for (const int32_t heads : {1, 2}) {
      const Case c(17, 65, 4, 2 * heads, kind, MaskKind::KeyPadding, heads, seed_of(int64_t(kind), heads, 0, 4));
      std::vector<float> out(size_t(17 * c.D));
      std::vector<double> lse(size_t(17 * heads));
      REQUIRE(attention_forward(c.problem, Matrix{out.data(), 17, c.D, c.D}, lse.data()).status == Status::Ok);
      CHECK(max_error(out, reference::attention(c.problem)) <= 1e-5);
      for (int32_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < 17; ++i) {
          double max = -reference::kInf, sum = 0;
          for (int64_t j = 0; j < 65; ++j)
            if (c.problem.masks.allows(i, j, 65)) max = std::max(max, reference::log_weight(c.problem, h, i, j));
          for (int64_t j = 0; j < 65; ++j)
            if (c.problem.masks.allows(i, j, 65) && max > -reference::kInf)
              sum += std::exp(reference::log_weight(c.problem, h, i, j) - max);
          CAPTURE(int(kind));
          CAPTURE(h);
          CAPTURE(i);
          if (max == -reference::kInf)
            CHECK(lse[size_t(i * heads + h)] == -INFINITY);
          else
            CHECK(lse[size_t(i * heads + h)] == doctest::Approx(max + std::log(sum)).epsilon(1e-6));
        }
    }
}

TEST_CASE("rows with huge scores get their log-sum-exp in double") {
  // Softmax with scale 300: scores of several hundred, where the forward's float32 scores (~1e-7 relative) move the
  // saved log-sum-exp by ~3e-5, beyond the tolerance; the backward's first pass corrects it in double.
  Case c(9, 33, 8, 4, KernelKind::Softmax, MaskKind::Causal, 2, 77);
  c.problem.kernel.scale = 300;
  CHECK(compare(c, 5) <= kTolerance);
}

TEST_CASE("empty rows follow the empty policy in the backward pass") {
  // Epanechnikov in one dimension with a narrow bandwidth: some queries have no key within the support.
  for (const EmptyPolicy policy : {EmptyPolicy::NaN, EmptyPolicy::Zero, EmptyPolicy::Nearest}) {
    Case c(40, 7, 1, 2, KernelKind::Epanechnikov, MaskKind::None, 1, 3);
    c.bandwidth[0] = 0.08f;
    c.problem.empty = policy;
    int empty = 0;
    for (int64_t i = 0; i < c.I; ++i) empty += reference::row_weights(c.problem, 0, i).empty();
    REQUIRE(empty > 0);
    CAPTURE(int(policy));
    CHECK(compare(c, 9) <= kTolerance);
  }
  Case c(40, 7, 1, 2, KernelKind::Epanechnikov, MaskKind::None, 1, 3);
  c.bandwidth[0] = 0.08f;
  c.problem.empty = EmptyPolicy::Error;
  const auto dout = random_dout(c.I * c.D, 1);
  CHECK(run_backward(c.problem, dout).result.status == Status::EmptyRow);
}

TEST_CASE("the uniform kernel and bad shapes are refused") {
  Case c(5, 6, 2, 1, KernelKind::Uniform, MaskKind::None, 1, 3);
  const auto dout = random_dout(5, 1);
  CHECK(run_backward(c.problem, dout).result.status == Status::BadArgument);
  Case g(5, 6, 2, 1, KernelKind::Gaussian, MaskKind::None, 1, 3);
  std::vector<float> dO(5), dq(10), dk(12), dv(6), db(2), out(5);
  std::vector<double> lse(5);
  const Gradients grads{{dq.data(), 5, 2, 2}, {dk.data(), 6, 2, 2}, {dv.data(), 6, 1, 1}, db.data()};
  CHECK(attention_gradients(g.problem, ConstMatrix{dO.data(), 4, 1, 1}, grads, Matrix{}).status == Status::BadShape);
  Gradients wrong = grads;
  wrong.keys.rows = 5;
  CHECK(attention_gradients(g.problem, ConstMatrix{dO.data(), 5, 1, 1}, wrong, Matrix{}).status == Status::BadShape);
  REQUIRE(attention_forward(g.problem, Matrix{out.data(), 5, 1, 1}, lse.data()).status == Status::Ok);
  CHECK(attention_backward(g.problem, nullptr, ConstMatrix{dO.data(), 5, 1, 1}, grads).status == Status::BadShape);
  // Gradients that are not wanted may be left out.
  const Gradients only_values{{}, {}, {dv.data(), 6, 1, 1}, nullptr};
  CHECK(attention_gradients(g.problem, ConstMatrix{dO.data(), 5, 1, 1}, only_values, Matrix{}).status == Status::Ok);
}

// The float32 softmax path (backward_wide.cpp) at its own edges: 64-query blocks and 64-key tiles (63, 64, 65,
// 129), head dimensions 8 and 64 (one or two heads), widths that are not whole batches, causal and padding masks.
TEST_CASE("the float32 softmax backward matches the reference at its block and tile edges") {
  double worst = 0;
  for (const MaskKind mask : {MaskKind::None, MaskKind::Causal, MaskKind::KeyPadding})
    for (const int32_t heads : {1, 2})
      for (const int64_t m : {8, 64})
        for (const int64_t I : {1, 63, 65, 129, 257})      // 257: past the float32 flush of dK, dV (4 blocks)
          for (const int64_t J : {2, 64, 65, 129, 257}) {  // and of dQ (4 tiles)
            const int64_t M = m * heads, D = heads * (m == 8 ? 3 : 64);
            if (I * J * M > 2 * kMaxWork) continue;
            const Case c(I, J, M, D, KernelKind::Softmax, mask, heads, seed_of(int64_t(mask), heads * 100 + m, I, J));
            CAPTURE(int(mask));
            CAPTURE(heads);
            CAPTURE(m);
            CAPTURE(I);
            CAPTURE(J);
            const double e = compare(c, seed_of(I, J, m, 5));
            worst = std::max(worst, e);
            CHECK(e <= kTolerance);
          }
  MESSAGE("worst relative error vs the float64 reference backward (float32 softmax path): " << worst);
}

TEST_CASE("softmax rows with huge logits or overflowing dots take the double path beside float32 rows") {
  // Some queries scaled up 40×: their logits (~±100) exceed the float32 path's limit (32 in log2 units), so those
  // rows go to the double path while the others stay in float32; both feed the same dK and dV.
  Case c(70, 67, 16, 8, KernelKind::Softmax, MaskKind::None, 2, 31);
  for (int64_t i = 0; i < c.I; i += 7)
    for (int64_t d = 0; d < c.M; ++d) c.q[size_t(i * c.M + d)] *= 40.0f;
  CHECK(compare(c, 6) <= kTolerance);
  // One query whose float32 dots overflow (|q·k| > 3.4e38): the forward redoes its row in double, and the backward
  // its head (a float32 NaN score is only seen inside the pass).
  Case o(20, 9, 8, 8, KernelKind::Softmax, MaskKind::Causal, 1, 32);
  for (int64_t d = 0; d < o.M; ++d) o.q[size_t(3 * o.M + d)] *= 1e38f;
  o.problem.kernel.scale = 1e-38;
  CHECK(compare(o, 7) <= kTolerance);
}

TEST_CASE("the float32 path stays accurate with large shared dots and nearly uniform dP") {
  // Queries and keys share a large common coordinate (dots of up to 64 around a spread of ~1) and the values a common
  // offset, so dP_ij = dO_i·v_j varies little across keys: dS_ij = P_ij (dP_ij − D_i) is small while D_i = dO_i·O_i
  // from the float32 output errs by ~1e-7·|D_i|. Summed naively, dθ = Σ dS_ij dot_ij picks up −Σ_i δ_i Σ_j P_ij dot_ij
  // and dQ_i picks up −scale·δ_i Σ_j P_ij k_j (amplified by the keys' offset); backward_wide.cpp cancels δ_i in dθ
  // exactly and sends rows where it could matter for dQ to the double path.
  double worst = 0;
  for (const float value_offset : {0.0f, 1.0f, 2.0f})
    for (const float offset : {2.0f, 6.0f, 8.0f}) {
      Case c(96, 80, 16, 16, KernelKind::Softmax, MaskKind::None, 1, 33);
      for (int64_t n = 0; n < c.I * c.M; ++n) c.q[size_t(n)] = n % c.M == 0 ? offset : 0.3f * c.q[size_t(n)];
      for (int64_t n = 0; n < c.J * c.M; ++n) c.k[size_t(n)] = n % c.M == 0 ? offset : c.k[size_t(n)];
      for (auto& v : c.v) v += value_offset;
      c.problem.kernel.scale = 14.0 / double(offset * offset);  // mean logit 14 (20 in log2 units)
      CAPTURE(value_offset);
      CAPTURE(offset);
      const double e = compare(c, 8);
      worst = std::max(worst, e);
      CHECK(e <= kTolerance);
    }
  MESSAGE("worst relative error with shared offsets: " << worst);
}
