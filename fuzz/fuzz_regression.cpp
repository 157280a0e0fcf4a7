// libFuzzer harness for the regression fits: local_fit (both estimators, observation weights, leave-one-out, every
// empty policy, 1 and 2 threads), grid_local_fit (1-D) and summarize_fit.
// Invariants: the status is what the inputs imply (invalid bandwidths or weights are BadArgument); 1 and 2 threads
// give the same bytes (any NaN matching any NaN); with finite inputs, a non-empty Nadaraya–Watson row lies within
// the range of the values it averages, every non-empty row is finite, Σℓ² and the effective keys are positive; the
// grid is finite wherever the exact fit is, and its error estimate is a finite non-negative number; the fit summary
// has σ² ≥ 0 and ν ≥ 0 for Nadaraya–Watson.
#include <cstring>

#include "decode.h"
#include "methods/grid/grid.h"
#include "engine/local_fit.h"
#include "stats/regression.h"

using namespace ka;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const fuzz::Range range = fuzz::Range(in.byte() % 3);
  const int64_t n = in.in(1, 70), dims = in.in(1, 3), width = in.in(1, 3);
  const bool loo = in.chance(30);
  const int64_t I = loo ? n : in.in(0, 70);
  const fuzz::Owned x(in, n, dims, range), y(in, n, width, range);
  const fuzz::Owned q = loo ? x : fuzz::Owned(in, I, dims, range);
  const bool finite = x.finite() && y.finite() && q.finite();

  Problem p;
  p.queries = loo ? x.view() : q.view();
  p.keys = x.view();
  p.values = y.view();
  p.kernel.kind = KernelKind(1 + in.byte() % 6);
  bool invalid = false;
  std::vector<float> h(static_cast<size_t>(dims));
  for (auto& hd : h) hd = in.bandwidth(range, invalid);
  p.kernel.bandwidth = h.data();
  p.masks.leave_one_out = loo;
  p.empty = EmptyPolicy(in.byte() % 4);
  Fit f{p, Estimator(in.byte() % 2)};
  std::vector<float> omega(static_cast<size_t>(n));
  if (in.chance(40)) {
    for (auto& w : omega) {
      const uint8_t k = in.byte();
      w = k < 40 ? 0.0f : k < 240 ? float(k) / 64.0f : k < 250 ? std::ldexp(1.0f, -int(k)) : in.value(range);
      invalid = invalid || !(w >= 0) || !std::isfinite(w);
    }
    f.observation_weights = omega.data();
  }

  std::vector<float> mean(size_t(I * width) + 1), mean2(size_t(I * width) + 1);
  std::vector<double> sum_sq(size_t(I) + 1), eff(size_t(I) + 1), logden(size_t(I) + 1), self(size_t(I) + 1);
  const FitOut out{Matrix{mean.data(), I, width, width}, sum_sq.data(), loo ? self.data() : nullptr, eff.data(),
                   logden.data()};
  const Result r = local_fit(f, out);
  if (invalid) {
    KA_FUZZ_CHECK(r.status == Status::BadArgument);
    return 0;
  }
  KA_FUZZ_CHECK(r.status == Status::Ok || (r.status == Status::EmptyRow && p.empty == EmptyPolicy::Error));
  if (r.status != Status::Ok) return 0;

  Fit f2 = f;
  f2.problem.threads = 2;
  KA_FUZZ_CHECK(local_fit(f2, FitOut{Matrix{mean2.data(), I, width, width}}).status == Status::Ok);
  KA_FUZZ_CHECK(fuzz::same_bits(mean.data(), mean2.data(), size_t(I * width)));

  if (finite && range == fuzz::Range::Ordinary) {
    float lo = y.at(0, 0), hi = lo;
    for (int64_t j = 0; j < n; ++j)
      for (int64_t c = 0; c < width; ++c) {
        lo = std::min(lo, y.at(j, c));
        hi = std::max(hi, y.at(j, c));
      }
    for (int64_t i = 0; i < I; ++i) {
      if (!(eff[size_t(i)] > 0)) continue;  // an empty row: the policy decided it
      KA_FUZZ_CHECK(sum_sq[size_t(i)] > 0 && std::isfinite(sum_sq[size_t(i)]));
      for (int64_t c = 0; c < width; ++c) {
        const float m = mean[size_t(i * width + c)];
        KA_FUZZ_CHECK(std::isfinite(m));
        // A convex combination, up to float32 rounding of the weighted sums (relative to the values' magnitude).
        const float slack = 1e-5f * std::max({hi - lo, std::fabs(lo), std::fabs(hi)});
        if (f.estimator == Estimator::NadarayaWatson) KA_FUZZ_CHECK(m >= lo - slack && m <= hi + slack);
      }
    }
  }

  if (dims == 1 && p.kernel.kind != KernelKind::Cauchy && n >= 2) {
    const int64_t nodes = in.in(2, 300);
    double error = -1;
    const Result g = grid_local_fit(f, nodes, FitOut{Matrix{mean2.data(), I, width, width}}, I > 0 ? &error : nullptr);
    KA_FUZZ_CHECK(g.status == Status::Ok);
    if (I > 0) KA_FUZZ_CHECK(error >= 0 || std::isnan(error) == !finite);
    if (finite && range == fuzz::Range::Ordinary)
      for (int64_t k = 0; k < I * width; ++k)
        if (std::isfinite(mean[size_t(k)])) KA_FUZZ_CHECK(std::isfinite(mean2[size_t(k)]));
  }

  if (loo && finite) {
    FitSummary s;
    Fit g = f;
    g.problem.queries = g.problem.keys;
    KA_FUZZ_CHECK(summarize_fit(g, &s).status == Status::Ok);
    KA_FUZZ_CHECK(!(s.sigma2 < 0) && !(s.rss < 0));
    if (f.estimator == Estimator::NadarayaWatson) KA_FUZZ_CHECK(!(s.trace < 0));
  }
  return 0;
}
