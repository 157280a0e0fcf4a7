// Standard errors of loess's interpolated surface (standard_error.h).
#include "stats/loess/standard_error.h"

#include <algorithm>

namespace ka::loess {

InterpolatedVariance::InterpolatedVariance(const Sample& sample, const KdTree& tree,
                                           const std::vector<VertexOperator>& ops, int32_t degree)
    : sample_(sample), tree_(tree), ops_(ops), degree_(degree) {}

void InterpolatedVariance::neighbour_run(int32_t v, int64_t* begin, int64_t* end) const {
  // (x − z)² < rho holds on a run of the sorted points around z: find its ends by bisection on each side.
  const double* x = sample_.x.data();
  const double z = tree_.vertex(v)[0], rho = ops_[size_t(v)].rho;
  const auto inside = [&](int64_t j) { return (x[j] - z) * (x[j] - z) < rho; };
  const int64_t n = sample_.n;
  const int64_t mid = std::lower_bound(x, x + n, z) - x;
  int64_t lo = 0, hi = mid;  // first inside point among [0, mid): inside is false … false, true … true there
  while (lo < hi) {
    const int64_t m = lo + (hi - lo) / 2;
    if (inside(m))
      hi = m;
    else
      lo = m + 1;
  }
  *begin = lo;
  lo = mid, hi = n;  // first outside point among [mid, n)
  while (lo < hi) {
    const int64_t m = lo + (hi - lo) / 2;
    if (inside(m))
      lo = m + 1;
    else
      hi = m;
  }
  *end = lo;
}

const double* InterpolatedVariance::pair(int32_t a, int32_t b) {
  const uint64_t key = uint64_t(a) * uint64_t(tree_.vertex_count()) + uint64_t(b);
  const int32_t c = sample_.dims + 1;
  const int32_t fresh = int32_t(pairs_.size() / size_t(c * c));
  const int32_t id = pair_ids_.find_or_insert(key, fresh, [](int32_t) { return true; });
  if (id != fresh) return pairs_.data() + size_t(id) * size_t(c * c);
  pairs_.resize(pairs_.size() + size_t(c * c), 0.0);
  double* g = pairs_.data() + size_t(id) * size_t(c * c);
  int64_t begin = 0, end = sample_.n;
  if (sample_.dims == 1) {
    int64_t b0, e0, b1, e1;
    neighbour_run(a, &b0, &e0);
    neighbour_run(b, &b1, &e1);
    begin = std::max(b0, b1);
    end = std::min(e0, e1);
  }
  const double* prior = sample_.prior.data();
  double la[kMaxDims + 1], lb[kMaxDims + 1];
  for (int64_t j = begin; j < end; ++j) {
    if (!(prior[j] > 0)) continue;  // operator entries 0 (R divides 0 by 0 there: NaN)
    if (!vertex_operator_entries(sample_, tree_, ops_[size_t(a)], a, j, degree_, prior, la)) continue;
    if (!vertex_operator_entries(sample_, tree_, ops_[size_t(b)], b, j, degree_, prior, lb)) continue;
    for (int32_t r = 0; r < c; ++r)
      for (int32_t e = 0; e < c; ++e) g[r * c + e] += la[r] * lb[e] / prior[j];
  }
  return g;
}

double InterpolatedVariance::at(const BlendTerm* terms, int count) {
  const int32_t c = sample_.dims + 1;
  double s = 0;
  for (int t = 0; t < count; ++t) {
    for (int u = 0; u < count; ++u) {
      const BlendTerm &p = terms[t], &q = terms[u];
      const bool ordered = p.vertex <= q.vertex;
      const double* g = ordered ? pair(p.vertex, q.vertex) : pair(q.vertex, p.vertex);
      const double entry = ordered ? g[p.component * c + q.component] : g[q.component * c + p.component];
      s += p.weight * q.weight * entry;
    }
  }
  return s;
}

}  // namespace ka::loess
