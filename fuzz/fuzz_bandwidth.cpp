// libFuzzer harness for bandwidth selection (bandwidth.h): rule_of_thumb, cv_score and select_cv on small samples,
// for both estimators, both scores (leave-one-out CV, AICc), with or without observation weights and on a grid or not.
// Invariants: the rules give positive finite bandwidths for finite data; a score is never NaN, CV is never negative,
// a bandwidth float32 cannot hold scores +inf, and invalid observation weights are BadArgument; from a positive
// finite start, the search returns a positive finite bandwidth whose score is the one it reports and no larger than
// any point it recorded on its curve.
#include <cfloat>

#include "stats/bandwidth.h"
#include "decode.h"

using namespace ka;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const uint8_t what = in.byte() % 3;  // 0: rules, 1: cv_score, 2: select_cv (kept small: a search is ~20–400 passes)
  const fuzz::Range range = fuzz::Range(in.byte() % 3);
  const int64_t n = what == 2 ? in.in(0, 24) : in.in(0, 40), dims = in.in(1, what == 2 ? 3 : 4);
  const int64_t width = in.in(1, 3);
  const fuzz::Owned x(in, n, dims, range), y(in, n, width, range);
  const bool finite = x.finite() && y.finite();

  if (what == 0) {
    std::vector<double> h(size_t(dims), -1.0);
    const Status s = rule_of_thumb(x.view(), Rule(in.byte() % 2), h.data());
    KA_FUZZ_CHECK(s == (n >= 2 ? Status::Ok : Status::BadShape));
    if (s == Status::Ok && finite)
      for (double hd : h) KA_FUZZ_CHECK(hd > 0 && std::isfinite(hd));
    return 0;
  }

  Problem p;
  p.queries = p.keys = x.view();
  p.values = y.view();
  p.kernel.kind = KernelKind(1 + in.byte() % 6);  // every distance kernel (softmax takes no bandwidth)
  std::vector<uint8_t> padding(size_t(n) + 1);
  if (in.chance(20)) {
    for (auto& m : padding) m = in.chance(20);
    p.masks.key_padding = padding.data();
  }
  // The criterion: Nadaraya–Watson or local-linear, leave-one-out CV or AICc, observation weights or none.
  Criterion criterion;
  criterion.estimator = Estimator(in.byte() % 2);
  criterion.score = Score(in.byte() % 2);
  std::vector<float> omega(size_t(n) + 1);
  bool omega_ok = true;
  if (in.chance(30)) {
    for (auto& w : omega) {
      const uint8_t k = in.byte();
      w = k < 40 ? 0.0f : k < 250 ? float(k) / 64.0f : k == 250 ? -1.0f : in.value(range);
    }
    for (int64_t i = 0; i < n; ++i) omega_ok = omega_ok && omega[size_t(i)] >= 0 && std::isfinite(omega[size_t(i)]);
    criterion.observation_weights = omega.data();
  }
  // A start: the rule of thumb (when n ≥ 2), scaled, or any double including invalid ones.
  std::vector<double> h(size_t(dims), 1.0);
  if (n >= 2) rule_of_thumb(x.view(), Rule::Scott, h.data());
  bool start_ok = true;
  for (auto& hd : h) {
    const uint8_t k = in.byte();
    if (k >= 224) {
      static const double table[] = {0.0, -1.0, 1e-320, 1e-45, 1e39, 1e300, NAN, INFINITY, -INFINITY};
      hd = table[k % 9];
    } else {
      hd *= std::ldexp(1.0, int(k % 16) - 8);
    }
    start_ok = start_ok && hd > 0 && std::isfinite(hd);
  }
  // Half the time no grid (as before this byte was read); else a grid tolerance, which leave-one-out CV in 1-D (one
  // GridCv per search or call) and 2-D (per evaluation) take up where the grid reaches it.
  const uint8_t grid = in.byte();
  static const double tolerances[] = {1e-3, 1e-2, 0.1, 1e-5};
  criterion.grid_tolerance = grid < 128 ? 0.0 : tolerances[grid % 4];

  if (what == 1) {
    double score = -1;
    const Result r = cv_score(p, h.data(), &score, criterion);
    bool holdable = true;
    for (double hd : h) holdable = holdable && std::fabs(hd) <= FLT_MAX && float(hd) > 0 && std::isfinite(float(hd));
    if (!holdable) {
      KA_FUZZ_CHECK(r.status == Status::Ok && score == INFINITY);
      return 0;
    }
    KA_FUZZ_CHECK(r.status == (omega_ok || n == 0 ? Status::Ok : Status::BadArgument));
    if (r.status != Status::Ok || !finite) return 0;
    KA_FUZZ_CHECK(!std::isnan(score));
    if (criterion.score == Score::LeaveOneOut) KA_FUZZ_CHECK(score >= 0);
    return 0;
  }

  const bool per_dimension = in.chance(50);
  const int32_t capacity = int32_t(in.in(0, 8));
  std::vector<double> curve_h(size_t(capacity * dims) + 1), curve_s(size_t(capacity) + 1);
  CvCurve curve{curve_h.data(), curve_s.data(), capacity, 0};
  double score = -1;
  const Result r = select_cv(p, per_dimension, h.data(), &score, in.chance(80) ? &curve : nullptr, criterion);
  KA_FUZZ_CHECK(curve.count <= capacity);
  if (!finite || !start_ok || !omega_ok || n < 1) return 0;
  KA_FUZZ_CHECK(r.status == Status::Ok);
  for (double hd : h) KA_FUZZ_CHECK(hd > 0 && std::isfinite(hd));
  KA_FUZZ_CHECK(!std::isnan(score));
  if (criterion.score == Score::LeaveOneOut) KA_FUZZ_CHECK(score >= 0);
  for (int32_t e = 0; e < curve.count; ++e) KA_FUZZ_CHECK(score <= curve_s[size_t(e)]);
  double again = -1;  // the reported score is the criterion at the returned bandwidth
  KA_FUZZ_CHECK(cv_score(p, h.data(), &again, criterion).status == Status::Ok);
  KA_FUZZ_CHECK(again == score);
  return 0;
}
