// Discrete predictors of a mixed regression: unordered (categorical) and ordered columns, their kernels, and the
// queries grouped by their combination of levels. Kernels as statsmodels' KernelReg and R's np define them:
// Aitchison & Aitken (1976) for unordered levels, Wang & van Ryzin (1981) for ordered ones, and the ordered kernel of
// Li & Racine (2007), np's 'liracine'. Li & Racine (2004): a discrete kernel is a factor of the product kernel, so
// for every query of one combination of levels the discrete factors are one weight per key (stats/mixed.h uses that).
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "base/status.h"

namespace ka {

// With a, b the levels (codes 0 … c − 1) of a query and a key, and λ the column's smoothing parameter:
//   AitchisonAitken: 1 − λ when a = b, λ / (c − 1) otherwise; 0 <= λ <= (c − 1)/c (there every level weighs 1/c)
//   WangVanRyzin:    1 − λ when a = b, (1 − λ)/2 · λ^|a − b| otherwise; 0 <= λ <= 1
//   LiRacine:        1 when a = b, λ^|a − b| otherwise; 0 <= λ <= 1 (λ = 1: every level weighs the same)
// λ = 0 leaves only the query's own level (the cell-by-cell fit). A column of one level (c = 1) has the factor 1.
enum class DiscreteKernel : int32_t { AitchisonAitken, WangVanRyzin, LiRacine };

// The largest λ of the kernel for c levels: (c − 1)/c (Aitchison–Aitken; 0 when c = 1), else 1 (0 when c = 1).
double lambda_max(DiscreteKernel kernel, int32_t levels);

// L(a, b; λ) as above (in double; λ^|a − b| with 0^0 = 1).
double discrete_factor(DiscreteKernel kernel, int32_t levels, double lambda, int32_t a, int32_t b);

// The discrete columns of a regression: `count` columns of codes 0 … levels[d] − 1, row-major.
struct Categories {
  const int32_t* keys = nullptr;     // J × count: the sample's levels
  const int32_t* queries = nullptr;  // I × count: the queries' levels (the sample's for its own fit and for CV)
  int32_t count = 0;
  const int32_t* levels = nullptr;          // count entries, each >= 1
  const DiscreteKernel* kernels = nullptr;  // count entries
  const double* lambda = nullptr;           // count entries within [0, lambda_max]; a search ignores them
};

// BadArgument unless count >= 1, the levels are >= 1 (at most 2^53 combinations of them), the kernels known, every
// code of the I queries and J keys within its column's levels, and (when `with_lambda`) every λ within [0,
// lambda_max].
Status check_categories(const Categories& c, int64_t I, int64_t J, bool with_lambda);

// The queries grouped by their combination of levels: group g holds the queries members(g)[0 … size(g)), in
// increasing order; groups come in the lexicographic order of their levels.
class QueryGroups {
 public:
  // `levels`: each column's level count (the codes are within them).
  QueryGroups(const int32_t* codes, int64_t queries, int32_t count, const int32_t* levels);
  bool ok() const { return made_; }
  int64_t count() const { return groups_; }
  const int64_t* members(int64_t g) const { return order_.get() + first_.get()[g]; }
  int64_t size(int64_t g) const { return first_.get()[g + 1] - first_.get()[g]; }
  int64_t largest() const { return largest_; }

 private:
  Scratch<int64_t> order_, first_;
  int64_t groups_ = 0, largest_ = 0;
  bool made_ = false;
};

// The weight of every key for a query of levels `query` (count codes): ω_j = base_j · Π_d L_d(query_d, key_jd; λ_d),
// base null for ones, written into omega (J floats). `factors` is scratch for Σ_d levels[d] doubles.
void group_weights(const Categories& c, const int32_t* query, const float* base, int64_t J, double* factors,
                   float* omega);

}  // namespace ka
