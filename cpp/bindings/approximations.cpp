// Bindings: approximate attention, random features, Nyström, certified sparse and top-k (embind.cpp says how
// bindings are written).
#include <emscripten/bind.h>

#include "common.h"
#include "methods/nystrom.h"
#include "methods/random_features.h"
#include "methods/sparse.h"
#include "methods/top_k.h"

namespace {

using namespace ka;
using namespace ka::bindings;

// Approximate attention (random_features.h, nystrom.h).
struct ApproxCall {
  double tolerance = 1e-2;
  double seed = 0;    // an integer in [0, 2^32)
  int32_t count = 0;  // features or landmarks; 0: from the tolerance
  LandmarkSampling sampling = LandmarkSampling::KMeansPlusPlus;
};

struct ApproxResult {
  Status status = Status::Ok;
  int32_t count = 0;
  double errorEstimate = 0;
  double exactRows = 0;
};

ApproxOptions approx_options(const ApproxCall& a) {
  ApproxOptions opts;
  opts.tolerance = a.tolerance;
  opts.seed = uint64_t(a.seed);
  opts.count = a.count;
  opts.sampling = a.sampling;
  return opts;
}

ApproxResult to_js(Result r, const ApproxReport& report) {
  return {r.status, report.count, report.error_estimate, double(report.exact_rows)};
}

ApproxResult random_features_attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J,
                                          int32_t M, int32_t D, CallOptions o, ApproxCall a) {
  ApproxReport report;
  const Result r = random_features_attention(make_problem(q, k, v, I, J, M, D, o), approx_options(a),
                                             Matrix{ptr<float>(out), I, D, D}, &report);
  return to_js(r, report);
}

ApproxResult nystrom_attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J, int32_t M,
                                  int32_t D, CallOptions o, ApproxCall a) {
  ApproxReport report;
  const Result r = nystrom_attention(make_problem(q, k, v, I, J, M, D, o), approx_options(a),
                                     Matrix{ptr<float>(out), I, D, D}, &report);
  return to_js(r, report);
}

// Certified sparse attention (sparse.h). dropped: I×H doubles; sum_sq, eff, logden: I doubles (heads 1); 0 to skip.
struct SparseResult {
  Status status = Status::Ok;
  double row = -1;
  int32_t head = -1;
  double errorEstimate = 0, maxDropped = 0, keptKeys = 0, skippedKeys = 0;
};

SparseResult sparse_result(const Result& r, const SparseReport& rep) {
  return {r.status,
          double(r.row),
          r.head,
          rep.error_estimate,
          rep.max_dropped,
          double(rep.kept_keys),
          double(rep.skipped_keys)};
}

SparseResult sparse_attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J, int32_t M,
                                 int32_t D, CallOptions o, double tolerance, int32_t threads, uintptr_t dropped,
                                 uintptr_t sum_sq, uintptr_t eff, uintptr_t logden) {
  Problem p = make_problem(q, k, v, I, J, M, D, o);
  p.threads = threads;
  SparseOptions opts;
  opts.tolerance = tolerance;
  const SparseOut so{Matrix{ptr<float>(out), I, D, D}, ptr<double>(dropped), ptr<double>(sum_sq), ptr<double>(eff),
                     ptr<double>(logden)};
  SparseReport rep;
  const Result r = sparse_attention(p, opts, so, &rep);
  return sparse_result(r, rep);
}

SparseResult top_k_attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J, int32_t M,
                                int32_t D, CallOptions o, int32_t top_k, uintptr_t dropped) {
  SparseReport rep;
  const Result r = top_k_attention(make_problem(q, k, v, I, J, M, D, o), top_k,
                                   SparseOut{Matrix{ptr<float>(out), I, D, D}, ptr<double>(dropped)}, &rep);
  return sparse_result(r, rep);
}

}  // namespace

EMSCRIPTEN_BINDINGS(approximations) {
  using namespace emscripten;
  value_object<ApproxCall>("ApproxCall")
      .field("tolerance", &ApproxCall::tolerance)
      .field("seed", &ApproxCall::seed)
      .field("count", &ApproxCall::count)
      .field("sampling", &ApproxCall::sampling);
  value_object<ApproxResult>("ApproxResult")
      .field("status", &ApproxResult::status)
      .field("count", &ApproxResult::count)
      .field("errorEstimate", &ApproxResult::errorEstimate)
      .field("exactRows", &ApproxResult::exactRows);
  function("_randomFeaturesAttention", &random_features_attention_js);
  function("_nystromAttention", &nystrom_attention_js);
  value_object<SparseResult>("SparseResult")
      .field("status", &SparseResult::status)
      .field("row", &SparseResult::row)
      .field("head", &SparseResult::head)
      .field("errorEstimate", &SparseResult::errorEstimate)
      .field("maxDropped", &SparseResult::maxDropped)
      .field("keptKeys", &SparseResult::keptKeys)
      .field("skippedKeys", &SparseResult::skippedKeys);
  function("_sparseAttention", &sparse_attention_js);
  function("_topKAttention", &top_k_attention_js);
}
