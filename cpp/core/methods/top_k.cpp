#include "methods/top_k.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "engine/head.h"
#include "engine/online_softmax.h"
#include "base/scratch.h"
#include "base/rare.h"
#include "engine/weights.h"

namespace ka {
namespace {

// Query rows per call of weight_rows: the buffer holds this many rows of J weights.
constexpr int64_t kRowsPerCall = 16;

}  // namespace

// Compiled for size: its loops are over one row of weights already computed (weight_rows, which stays -O3): a scan,
// a selection, and sums over the kept keys (base/rare.h).
KA_COLD Result top_k_attention(const Problem& p, int64_t k, const SparseOut& out, SparseReport* report) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  const int64_t I = p.queries.rows, J = p.keys.rows, D = p.values.cols, H = p.heads, dv = D / H;
  if (k < 1 || out.sum_sq_weights || out.effective_keys || out.log_denominator) return {Status::BadArgument};
  if (out.out.rows != I || out.out.cols != D || (I > 0 && D > 0 && !out.out.data)) return {Status::BadShape};
  Scratch<float> w(kRowsPerCall * J);
  Scratch<int64_t> order(J);
  Scratch<double> sum(1 + dv);  // the kept keys' state: Σw, then the value sums
  Scratch<uint8_t> chosen(J);
  if (!w.ok() || !order.ok() || !sum.ok() || !chosen.ok()) return {Status::OutOfMemory};
  SparseReport rep;
  for (int32_t h = 0; h < H; ++h) {
    const Head hd = head_of(p, h);
    for (int64_t first = 0; first < I; first += kRowsPerCall) {
      const int64_t last = std::min(I, first + kRowsPerCall);
      if (const Result r = weight_rows(p, h, first, last, w.get()); r.status != Status::Ok) return r;
      for (int64_t i = first; i < last; ++i) {
        const float* row = w.get() + (i - first) * J;
        float* o = out.out.row(i) + h * dv;
        double* dropped = out.dropped ? out.dropped + i * H + h : nullptr;
        // The nonzero weights, the k largest first (ties: lower index first). An empty row has none: its weights
        // are NaN or zeros by the policy.
        int64_t nonzero = 0;
        for (int64_t j = 0; j < J; ++j)
          if (row[j] > 0) order.get()[nonzero++] = j;
        const int64_t kept = std::min(k, nonzero);
        const auto larger = [&](int64_t a, int64_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); };
        if (kept < nonzero) std::nth_element(order.get(), order.get() + kept, order.get() + nonzero, larger);
        double total = 0, mass = 0;
        for (int64_t n = 0; n < nonzero; ++n) total += row[order.get()[n]];
        // The kept keys' state (shift 0: the weights are normalised already); with no nonzero weight it is empty and
        // the row follows the policy, as in weights().
        SoftmaxState<double> st(sum.get(), dv);
        st.reset();
        st.max = 0;
        for (int64_t n = 0; n < kept; ++n) {
          const int64_t j = order.get()[n];
          mass += row[j];
          const float* v = hd.values.row(j);
          for (int64_t c = 0; c < dv; ++c) st.acc()[c] += double(row[j]) * double(v[c]);
        }
        st.sum() = mass;
        finalize(st, o, hd.empty, NearestKeys{&hd, i, chosen.get()});
        const double share = st.empty() && hd.empty == EmptyPolicy::NaN ? std::numeric_limits<double>::quiet_NaN()
                             : kept < nonzero                           ? std::max(0.0, (total - mass) / mass)
                                                                        : 0.0;
        if (dropped) *dropped = share;
        rep.max_dropped = std::max(rep.max_dropped, share);
        rep.kept_keys += kept;
        rep.skipped_keys += J - kept;
      }
    }
  }
  rep.error_estimate = rep.max_dropped / (1 + rep.max_dropped);
  if (report) *report = rep;
  return {};
}

}  // namespace ka
