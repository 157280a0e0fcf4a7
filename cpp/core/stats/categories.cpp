// Discrete kernels and the grouping of queries by their levels (categories.h).
#include "stats/categories.h"

#include <algorithm>
#include <cmath>

#include "base/rare.h"

namespace ka {

double lambda_max(DiscreteKernel kernel, int32_t levels) {
  if (levels <= 1) return 0;
  return kernel == DiscreteKernel::AitchisonAitken ? double(levels - 1) / double(levels) : 1.0;
}

double discrete_factor(DiscreteKernel kernel, int32_t levels, double lambda, int32_t a, int32_t b) {
  if (levels <= 1) return 1;
  const int32_t distance = a > b ? a - b : b - a;
  switch (kernel) {
    case DiscreteKernel::AitchisonAitken: return distance == 0 ? 1 - lambda : lambda / double(levels - 1);
    case DiscreteKernel::WangVanRyzin:
      return distance == 0 ? 1 - lambda : 0.5 * (1 - lambda) * std::pow(lambda, double(distance));
    case DiscreteKernel::LiRacine: return distance == 0 ? 1 : std::pow(lambda, double(distance));
  }
  return 0;
}

KA_COLD Status check_categories(const Categories& c, int64_t I, int64_t J, bool with_lambda) {
  if (c.count < 1 || !c.levels || !c.kernels || (I > 0 && !c.queries) || (J > 0 && !c.keys)) return Status::BadArgument;
  if (with_lambda && !c.lambda) return Status::BadArgument;
  for (int32_t d = 0; d < c.count; ++d) {
    const int32_t k = int32_t(c.kernels[d]);
    if (c.levels[d] < 1 || k < 0 || k > int32_t(DiscreteKernel::LiRacine)) return Status::BadArgument;
    if (with_lambda && !(c.lambda[d] >= 0 && c.lambda[d] <= lambda_max(c.kernels[d], c.levels[d])))
      return Status::BadArgument;
  }
  const auto in_range = [&](const int32_t* codes, int64_t rows) {
    for (int64_t i = 0; i < rows; ++i)
      for (int32_t d = 0; d < c.count; ++d)
        if (codes[i * c.count + d] < 0 || codes[i * c.count + d] >= c.levels[d]) return false;
    return true;
  };
  return in_range(c.queries, I) && in_range(c.keys, J) ? Status::Ok : Status::BadArgument;
}

KA_COLD QueryGroups::QueryGroups(const int32_t* codes, int64_t queries, int32_t count)
    : order_(queries), first_(queries + 1) {
  if (!ok()) return;
  int64_t* order = order_.get();
  for (int64_t i = 0; i < queries; ++i) order[i] = i;
  const auto row = [&](int64_t i) { return codes + i * count; };
  // Lexicographic in the levels, then by index: each group's members in increasing order.
  std::sort(order, order + queries, [&](int64_t a, int64_t b) {
    const int32_t *ra = row(a), *rb = row(b);
    for (int32_t d = 0; d < count; ++d)
      if (ra[d] != rb[d]) return ra[d] < rb[d];
    return a < b;
  });
  int64_t* first = first_.get();
  for (int64_t k = 0; k < queries; ++k) {
    if (k > 0 && std::equal(row(order[k]), row(order[k]) + count, row(order[k - 1]))) continue;
    first[groups_++] = k;
  }
  first[groups_] = queries;
  for (int64_t g = 0; g < groups_; ++g) largest_ = std::max(largest_, size(g));
}

void group_weights(const Categories& c, const int32_t* query, const float* base, int64_t J, double* factors,
                   float* omega) {
  // Per column, the factor of each key level for this query's level: Σ levels values instead of J · count kernels.
  double* column = factors;
  for (int32_t d = 0; d < c.count; ++d) {
    for (int32_t b = 0; b < c.levels[d]; ++b)
      column[b] = discrete_factor(c.kernels[d], c.levels[d], c.lambda[d], query[d], b);
    column += c.levels[d];
  }
  for (int64_t j = 0; j < J; ++j) {
    const int32_t* key = c.keys + j * c.count;
    double w = base ? double(base[j]) : 1.0;
    column = factors;
    for (int32_t d = 0; d < c.count; ++d) {
      w *= column[key[d]];
      column += c.levels[d];
    }
    omega[j] = float(w);
  }
}

}  // namespace ka
