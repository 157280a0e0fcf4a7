// The loops over keys of the sparse engine (sparse_runs.h), compiled for speed: the key runs, one instance per
// distance kernel, dimension count (1, 2, 3 with one value column; any with several) and value width, and the
// nearest-key scan of the ring search, one per norm.
#include "methods/sparse_runs.h"

#include "kernel/kernels_simd.h"

namespace ka {
namespace sparse {
namespace {

constexpr int64_t kFlushKeys = 64;  // float32 lane sums go to double every 64 keys

// Keys [b, e) of the sorted order, scored, exponentiated (fixed shift 0: distance-kernel scores are <= 0) and summed.
template <KernelKind K, int DIMS, int W>
void add_run(const Query& qr, int64_t b, int64_t e, RowSums& rs) {
  const CellGrid& g = *qr.g;
  const int64_t dims = DIMS > 0 ? DIMS : g.dims;
  const float* keys = g.keys_t.data();
  const float* vals = g.values_t.data();
  const int64_t stride = g.stride, width = qr.width;
  const bool masked = qr.masked;
  const simd::ExpConstants& ek = simd::exp_constants();
  constexpr int kRegs = W > 0 ? W : 1;
  const float minus_inf = -std::numeric_limits<float>::infinity();
  alignas(64) float bias[kLanes];
  Batch top(minus_inf), qb[kSparseMaxDims], fb[kSparseMaxDims];
  // Constant indices only (the bound is kSparseMaxDims), so that qb and fb live in registers for any DIMS.
  for (int d = 0; d < kSparseMaxDims; ++d)
    if (d < dims) {
      qb[d] = Batch(qr.q[d]);
      fb[d] = Batch(qr.factors[d]);
    }
  rs.kept += e - b;
  // One batch of keys [c, c + kLanes) into one set of lane sums; lanes at or past c1, or masked, weigh 0.
  const auto step = [&](int64_t c, int64_t c1, Batch& sum, Batch& sq, Batch* acc) {
    Batch s = BatchScore<K>::init();
    if constexpr (DIMS > 0) {
      for (int64_t d = 0; d < DIMS; ++d) s = BatchScore<K>::step(s, qb[d], simd::load(keys + d * stride + c), fb[d]);
    } else {  // 1 to kSparseMaxDims dimensions, unrolled: a loop would keep qb and fb in memory
      s = BatchScore<K>::step(s, qb[0], simd::load(keys + c), fb[0]);
      if (dims > 1) s = BatchScore<K>::step(s, qb[1], simd::load(keys + stride + c), fb[1]);
      if (dims > 2) s = BatchScore<K>::step(s, qb[2], simd::load(keys + 2 * stride + c), fb[2]);
    }
    s = BatchScore<K>::finish(s, Batch(1.0f));
    if (masked || c + kLanes > c1) {
      for (int64_t l = 0; l < kLanes; ++l) {
        const int64_t j = c + l;
        bias[l] = j < c1 && (!masked || qr.hd->allows(qr.i, g.order[size_t(j)])) ? 0.0f : minus_inf;
      }
      s += Batch::load_aligned(bias);
    }
    if constexpr (is_compact(K)) top = xsimd::max(top, s);
    const Batch w = simd::exp2_nonpositive(s, ek);
    sum += w;
    sq = xsimd::fma(w, w, sq);
    if constexpr (W > 0) {
      for (int d = 0; d < W; ++d) acc[d] = xsimd::fma(w, simd::load(vals + d * stride + c), acc[d]);
    } else {
      for (int64_t d = 0; d < width; ++d) {
        float* a = qr.spill + d * kLanes;
        simd::store(a, xsimd::fma(w, simd::load(vals + d * stride + c), simd::load(a)));
      }
    }
  };
  for (int64_t c0 = b; c0 < e; c0 += kFlushKeys) {
    const int64_t c1 = std::min(e, c0 + kFlushKeys);
    Batch sum(0.0f), sq(0.0f), acc[kRegs], sum2(0.0f), sq2(0.0f), acc2[kRegs];
    for (int r = 0; r < kRegs; ++r) acc[r] = acc2[r] = Batch(0.0f);
    if constexpr (W == 0) std::fill(qr.spill, qr.spill + width * kLanes, 0.0f);
    int64_t c = c0;
    // Two batches per step into separate sums: their exp chains (long, about 50 cycles) then overlap.
    if constexpr (W > 0)
      for (; c + 2 * kLanes <= c1; c += 2 * kLanes) {
        step(c, c1, sum, sq, acc);
        step(c + kLanes, c1, sum2, sq2, acc2);
      }
    for (; c < c1; c += kLanes) step(c, c1, sum, sq, acc);
    rs.state.add_block<W>(simd::sum(sum + sum2), [&](int64_t d) {
      if constexpr (W > 0)
        return simd::sum(acc[d] + acc2[d]);
      else
        return simd::sum(simd::load(qr.spill + d * kLanes));
    });
    rs.state.sum_sq() += simd::sum(sq + sq2);
  }
  if constexpr (is_compact(K)) rs.top = std::max(rs.top, simd::max(top));
}

template <KernelKind K>
constexpr Runs runs_of() {
  return {{{add_run<K, 0, 0>, add_run<K, 1, 1>},
           {add_run<K, 0, 0>, add_run<K, 2, 1>},
           {add_run<K, 0, 0>, add_run<K, 3, 1>}}};
}

// nearest_in_run for one norm: +inf lanes pad the tail.
template <bool kSquared>
float nearest_of(const CellGrid& g, const double* u, int64_t b, int64_t e) {
  Batch best(INFINITY);
  const float pad[16] = {0,        0,        0,        0,        0,        0,        0,        0,
                         INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
  for (int64_t c = b; c < e; c += kLanes) {
    Batch nu(0.0f);
    for (int64_t d = 0; d < g.dims; ++d) {
      const int a = int(A - g.dims + d);
      const Batch t = (Batch(float(u[a])) - simd::load(g.keys_t.data() + d * g.stride + c) * Batch(float(g.inv_h[a])));
      nu = kSquared ? xsimd::fma(t, t, nu) : nu + xsimd::abs(t);
    }
    if (c + kLanes > e) nu += simd::load(pad + 8 - (e - c));  // lanes past e: +inf (kLanes <= 8)
    best = xsimd::min(best, nu);
  }
  alignas(64) float lanes[kLanes];
  best.store_aligned(lanes);
  return *std::min_element(lanes, lanes + kLanes);
}

}  // namespace

const Runs& key_runs(KernelKind kind) {
  static constexpr Runs kGaussian = runs_of<KernelKind::Gaussian>(), kLaplacian = runs_of<KernelKind::Laplacian>(),
                        kCauchy = runs_of<KernelKind::Cauchy>(), kEpanechnikov = runs_of<KernelKind::Epanechnikov>(),
                        kTricube = runs_of<KernelKind::Tricube>(), kUniform = runs_of<KernelKind::Uniform>();
  switch (kind) {
    case KernelKind::Laplacian: return kLaplacian;
    case KernelKind::Cauchy: return kCauchy;
    case KernelKind::Epanechnikov: return kEpanechnikov;
    case KernelKind::Tricube: return kTricube;
    case KernelKind::Uniform: return kUniform;
    default: return kGaussian;
  }
}

float nearest_in_run(bool squared, const CellGrid& g, const double* u, int64_t b, int64_t e) {
  return squared ? nearest_of<true>(g, u, b, e) : nearest_of<false>(g, u, b, e);
}

}  // namespace sparse
}  // namespace ka
