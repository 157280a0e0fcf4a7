// Internals of the mixed regression files (mixed.h): the groups of a call (per combination of levels, the continuous
// fit of that group's queries over every key, with the group's key weights), and the criterion a search evaluates.
#pragma once
#include <cstdint>
#include <memory>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "stats/bandwidth.h"
#include "stats/categories.h"

namespace ka::mixed_detail {

class GroupedFit {
 public:
  // `f`: the continuous fit over every query, with no mask, leave-one-out (I == J) or a band; `c`: its discrete
  // columns, with λ. status() is BadArgument for other masks, span bandwidths or query_keys, OutOfMemory when the
  // scratch cannot be had.
  GroupedFit(const Fit& f, const Categories& c);
  Status status() const { return status_; }
  int64_t count() const { return groups_.count(); }
  int64_t largest() const { return groups_.largest(); }
  const int64_t* members(int64_t g) const { return groups_.members(g); }
  int64_t size(int64_t g) const { return groups_.size(g); }
  // The fit of group g: its size(g) queries are f's queries members(g)[r], every key, observation weights ω · the
  // discrete factors of the group's levels; leave-one-out and bands as bands over the keys; query_keys the members
  // when I == J (query r of the group is key members(g)[r]). Valid until the next call.
  const Fit& prepare(int64_t g);

 private:
  Fit base_;
  Categories c_;
  QueryGroups groups_;
  Scratch<float> queries_, omega_;
  Scratch<double> factors_;
  Scratch<int64_t> band_first_, band_last_;
  Fit fit_;
  Status status_ = Status::Ok;
};

// The criterion (CV or AICc) of a mixed regression over one sample, for many (h, λ): the sample sorted by its first
// continuous coordinate once (with its levels and weights), as a search needs it.
class MixedCriterion {
 public:
  MixedCriterion(const Problem& p, const Categories& c, const Criterion& criterion);
  ~MixedCriterion();
  Status status() const { return status_; }
  // The criterion at bw (dims h, then count λ): +inf where a bandwidth is not positive and finite in float32 or a
  // λ outside its range.
  Result score(const double* bw, double* out);

 private:
  struct Sorted;
  std::unique_ptr<Sorted> sorted_;
  Status status_ = Status::Ok;
};

// What select_mixed keeps from one call to the next of a search resumed in steps (CvSearchState): its criterion, with
// the sorted sample and grids made by its first evaluation, and the range of its scale's scan.
struct MixedSearchKeep {
  MixedCriterion cv;
  double lo = 0, hi = 0;
  Status status;
  MixedSearchKeep(const Problem& p, const Categories& c, const Criterion& criterion, const double* start);
};

}  // namespace ka::mixed_detail
