// The transformed coordinates of approx.h, exact recomputation of rows, and the seeded row sample.
#include "methods/approx.h"

#include <algorithm>
#include <cmath>

#include "base/counter_rng.h"
#include "engine/exact.h"

namespace ka {

namespace {

std::vector<double> column_means(ConstMatrix x, int64_t c0, int64_t d) {
  std::vector<double> mean(size_t(d), 0.0);
  for (int64_t i = 0; i < x.rows; ++i) {
    const float* row = x.row(i) + c0;
    for (int64_t c = 0; c < d; ++c) mean[size_t(c)] += double(row[c]);
  }
  if (x.rows > 0)
    for (double& m : mean) m /= double(x.rows);
  return mean;
}

}  // namespace

HeadData head_data(const Problem& p, int32_t head) {
  HeadData h;
  h.I = p.queries.rows;
  h.J = p.keys.rows;
  h.d = p.queries.cols / p.heads;
  const int64_t c0 = head * h.d, D = p.values.cols / p.heads;
  h.values = p.values.columns(head * D, D);
  h.q.resize(size_t(h.I * h.d));
  h.k.resize(size_t(h.J * h.d));
  h.bias.assign(size_t(h.J), 0.0);
  const std::vector<double> ck = column_means(p.keys, c0, h.d);
  if (p.kernel.kind == KernelKind::Softmax) {
    const double s = p.kernel.scale, root = std::sqrt(std::fabs(s)), sign = s < 0 ? -1.0 : 1.0;
    const std::vector<double> cq = column_means(p.queries, c0, h.d);
    for (int64_t i = 0; i < h.I; ++i)
      for (int64_t c = 0; c < h.d; ++c)
        h.q[size_t(i * h.d + c)] = root * (double(p.queries.row(i)[c0 + c]) - cq[size_t(c)]);
    for (int64_t j = 0; j < h.J; ++j) {
      double b = 0;
      for (int64_t c = 0; c < h.d; ++c) {
        const double centred = double(p.keys.row(j)[c0 + c]) - ck[size_t(c)];
        h.k[size_t(j * h.d + c)] = sign * root * centred;
        b += cq[size_t(c)] * centred;
      }
      h.bias[size_t(j)] = s * b;
    }
    return h;
  }
  const float* bw = p.kernel.bandwidth + c0;
  for (int64_t i = 0; i < h.I; ++i)
    for (int64_t c = 0; c < h.d; ++c)
      h.q[size_t(i * h.d + c)] = (double(p.queries.row(i)[c0 + c]) - ck[size_t(c)]) / double(bw[c]);
  for (int64_t j = 0; j < h.J; ++j) {
    double sq = 0;
    for (int64_t c = 0; c < h.d; ++c) {
      const double x = (double(p.keys.row(j)[c0 + c]) - ck[size_t(c)]) / double(bw[c]);
      h.k[size_t(j * h.d + c)] = x;
      sq += x * x;
    }
    if (p.kernel.kind == KernelKind::Gaussian) h.bias[size_t(j)] = -sq / 2;
  }
  return h;
}

Status check_approx(const Problem& p, const ApproxOptions& o) {
  const Status s = check(p, true);
  if (s != Status::Ok) return s;
  const Masks& m = p.masks;
  if (m.leave_one_out || m.key_padding || m.general || m.query_groups) return Status::BadArgument;
  if (!(o.tolerance > 0 && o.tolerance < 1) || o.count < 0) return Status::BadArgument;
  if (int32_t(o.sampling) < 0 || int32_t(o.sampling) > int32_t(LandmarkSampling::Uniform)) return Status::BadArgument;
  if (p.keys.rows < 1) return Status::BadShape;
  return Status::Ok;
}

double value_range(const Problem& p) {
  double lo = INFINITY, hi = -INFINITY;
  for (int64_t j = 0; j < p.values.rows; ++j)
    for (int64_t c = 0; c < p.values.cols; ++c) {
      lo = std::min(lo, double(p.values.row(j)[c]));
      hi = std::max(hi, double(p.values.row(j)[c]));
    }
  return hi > lo ? hi - lo : 1.0;
}

Result exact_attention_rows(const Problem& p, int32_t head, const std::vector<int64_t>& rows, double* out) {
  const int64_t d = p.queries.cols / p.heads, D = p.values.cols / p.heads, J = p.keys.rows;
  std::vector<float> row(static_cast<size_t>(D));
  for (size_t n = 0; n < rows.size(); ++n) {
    const int64_t i = rows[n];
    const int64_t keys = p.masks.causal ? std::min(i + 1, J) : J;
    Problem one;
    one.queries = ConstMatrix{p.queries.row(i) + head * d, 1, d, p.queries.stride};
    one.keys = ConstMatrix{p.keys.data + head * d, keys, d, p.keys.stride};
    one.values = p.values.columns(head * D, D);
    one.values.rows = keys;
    one.kernel = p.kernel;
    if (p.kernel.bandwidth) one.kernel.bandwidth = p.kernel.bandwidth + head * d;
    one.empty = EmptyPolicy::NaN;
    const Result r = attention(one, Matrix{row.data(), 1, D, D}, 1);
    if (r.status != Status::Ok) return r;
    for (int64_t c = 0; c < D; ++c) out[n * size_t(D) + size_t(c)] = double(row[size_t(c)]);
  }
  return {};
}

std::vector<int64_t> sample_rows(int64_t I, int64_t count, uint64_t seed, uint64_t stream) {
  std::vector<int64_t> rows;
  if (count >= I) {
    for (int64_t i = 0; i < I; ++i) rows.push_back(i);
    return rows;
  }
  // Floyd's algorithm: `count` distinct draws, a byte per row marking those drawn (I bytes, against the I·d doubles
  // of the head's coordinates; a linear search of the drawn rows made Nyström's 4,096 landmark candidates O(count²)).
  std::vector<uint8_t> drawn(size_t(I), 0);
  const CounterRng rng(seed, stream);
  for (int64_t n = I - count; n < I; ++n) {
    const int64_t t = int64_t(rng.below(uint64_t(n + 1), uint64_t(n)));
    const int64_t row = drawn[size_t(t)] ? n : t;  // n itself was never drawn: every draw so far is below it
    drawn[size_t(row)] = 1;
    rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace ka
