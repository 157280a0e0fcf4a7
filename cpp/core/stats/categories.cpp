// Discrete kernels and the grouping of queries by their levels (categories.h).
#include "stats/categories.h"

#include <algorithm>
#include <cmath>

#include "base/rare.h"
#include "engine/neighbours.h"

namespace ka {

double lambda_max(DiscreteKernel kernel, int32_t levels) {
  if (levels <= 1) return 0;
  return kernel == DiscreteKernel::AitchisonAitken ? double(levels - 1) / double(levels) : 1.0;
}

namespace {

// x^n for n >= 0 by squaring (a few ulps from pow, and no libm pow in the WebAssembly module: 1.5 kB).
double power(double x, int32_t n) {
  double r = 1;
  for (; n > 0; n >>= 1, x *= x)
    if (n & 1) r *= x;
  return r;
}

}  // namespace

double discrete_factor(DiscreteKernel kernel, int32_t levels, double lambda, int32_t a, int32_t b) {
  if (levels <= 1) return 1;
  const int32_t distance = a > b ? a - b : b - a;
  switch (kernel) {
    case DiscreteKernel::AitchisonAitken: return distance == 0 ? 1 - lambda : lambda / double(levels - 1);
    case DiscreteKernel::WangVanRyzin: return distance == 0 ? 1 - lambda : 0.5 * (1 - lambda) * power(lambda, distance);
    case DiscreteKernel::LiRacine: return distance == 0 ? 1 : power(lambda, distance);
  }
  return 0;
}

KA_COLD Status check_categories(const Categories& c, int64_t I, int64_t J, bool with_lambda) {
  if (c.count < 1 || !c.levels || !c.kernels || (I > 0 && !c.queries) || (J > 0 && !c.keys)) return Status::BadArgument;
  if (with_lambda && !c.lambda) return Status::BadArgument;
  double combinations = 1;
  for (int32_t d = 0; d < c.count; ++d) {
    combinations *= double(std::max(c.levels[d], 1));
    const int32_t k = int32_t(c.kernels[d]);
    if (c.levels[d] < 1 || k < 0 || k > int32_t(DiscreteKernel::LiRacine)) return Status::BadArgument;
    if (with_lambda && !(c.lambda[d] >= 0 && c.lambda[d] <= lambda_max(c.kernels[d], c.levels[d])))
      return Status::BadArgument;
  }
  if (combinations > 9007199254740992.0) return Status::BadArgument;  // 2^53: QueryGroups' keys must stay exact
  const auto in_range = [&](const int32_t* codes, int64_t rows) {
    for (int64_t i = 0; i < rows; ++i)
      for (int32_t d = 0; d < c.count; ++d)
        if (codes[i * c.count + d] < 0 || codes[i * c.count + d] >= c.levels[d]) return false;
    return true;
  };
  return in_range(c.queries, I) && in_range(c.keys, J) ? Status::Ok : Status::BadArgument;
}

KA_COLD QueryGroups::QueryGroups(const int32_t* codes, int64_t queries, int32_t count, const int32_t* levels)
    : order_(queries), first_(queries + 1) {
  Scratch<double> key(queries);
  if (!order_.ok() || !first_.ok() || !key.ok()) return;  // ok() stays false
  const auto row = [&](int64_t i) { return codes + i * count; };
  // Each combination of levels as one number (mixed radix, exact in double up to 2^53 combinations), ordered as the
  // levels are lexicographically; order_by's stable sort keeps each group's members in increasing order.
  for (int64_t i = 0; i < queries; ++i) {
    double k = 0;
    for (int32_t d = 0; d < count; ++d) k = k * double(levels[d]) + double(row(i)[d]);
    key.get()[i] = k;
  }
  int64_t* order = order_.get();
  order_by(key.get(), order, queries);
  int64_t* first = first_.get();
  for (int64_t k = 0; k < queries; ++k) {
    if (k > 0 && key.get()[order[k]] == key.get()[order[k - 1]]) continue;
    first[groups_++] = k;
  }
  first[groups_] = queries;
  for (int64_t g = 0; g < groups_; ++g) largest_ = std::max(largest_, size(g));
  made_ = true;
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
