// One head of a Problem: column slices of queries, keys and values, and the matching slice of bandwidths.
#pragma once
#include "engine/problem.h"

namespace ka {

struct Head {
  ConstMatrix queries;  // I × M/H
  ConstMatrix keys;     // J × M/H
  ConstMatrix values;   // J × D/H (empty view for weights())
  KernelSpec kernel;
  const Masks* masks;
  EmptyPolicy empty;

  bool allows(int64_t i, int64_t j) const { return masks->allows(i, j, keys.rows); }
};

inline Head head_of(const Problem& p, int32_t h) {
  const int64_t m = p.queries.cols / p.heads;
  const int64_t dv = p.values.cols / p.heads;
  Head hd{
      p.queries.columns(h * m, m), p.keys.columns(h * m, m), p.values.columns(h * dv, dv), p.kernel, &p.masks, p.empty};
  if (p.kernel.bandwidth) hd.kernel.bandwidth = p.kernel.bandwidth + h * m;
  return hd;
}

}  // namespace ka
