// Random test problems that own their data, at the boundary sizes the engine's SIMD lanes and tiles create.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "engine/problem.h"

namespace ka::testing {

// Sizes around lane counts (4, 8), the query block (16) and the key tile (64).
inline const std::vector<int64_t> kSizes = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 257};
inline const std::vector<int64_t> kDims = {1, 2, 3, 5, 16, 64};
inline const std::vector<KernelKind> kKernels = {KernelKind::Softmax, KernelKind::Gaussian,     KernelKind::Laplacian,
                                                 KernelKind::Cauchy,  KernelKind::Epanechnikov, KernelKind::Tricube,
                                                 KernelKind::Uniform};

enum class MaskKind { None, Causal, KeyPadding, LeaveOneOut, General, Groups };
inline const std::vector<MaskKind> kMasks = {MaskKind::None,        MaskKind::Causal,  MaskKind::KeyPadding,
                                             MaskKind::LeaveOneOut, MaskKind::General, MaskKind::Groups};

struct Case {
  int64_t I, J, M, D;
  std::vector<float> q, k, v, bandwidth;
  std::vector<uint8_t> key_padding, general;
  std::vector<int32_t> query_groups, key_groups;
  Problem problem;

  Case(int64_t I_, int64_t J_, int64_t M_, int64_t D_, KernelKind kind, MaskKind mask, int32_t heads, uint32_t seed)
      : I(I_), J(J_), M(M_), D(D_) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
    auto fill = [&](std::vector<float>& x, int64_t n) {
      x.resize(size_t(n));
      for (auto& e : x) e = unit(rng);
    };
    fill(q, I * M);
    fill(k, J * M);
    fill(v, J * D);
    // Bandwidths that give scores of O(1–10), where float32 can resolve weights to 1e-6: |u|² is about M·(2/3)/h²
    // for uniform data in [-1, 1]. Compact kernels in many dimensions need h beyond the data range, or every key
    // would fall outside the support; in few dimensions h < 1 leaves some queries with no key (empty rows).
    const int64_t m = M / heads;
    const float base = is_compact(kind) ? (m <= 3 ? 0.6f : m <= 5 ? 0.9f : 3.0f) : 0.5f * std::sqrt(float(m));
    std::uniform_real_distribution<float> jitter(0.8f, 1.2f);
    bandwidth.resize(size_t(M));
    for (auto& h : bandwidth) h = base * jitter(rng);

    problem.queries = {q.data(), I, M, M};
    problem.keys = {k.data(), J, M, M};
    problem.values = {v.data(), J, D, D};
    problem.kernel = {kind, 1.0 / std::sqrt(double(m)), kind == KernelKind::Softmax ? nullptr : bandwidth.data()};
    problem.heads = heads;
    std::bernoulli_distribution drop(0.3);
    switch (mask) {
      case MaskKind::None: break;
      case MaskKind::Causal: problem.masks.causal = true; break;
      case MaskKind::LeaveOneOut: problem.masks.leave_one_out = true; break;
      case MaskKind::KeyPadding:
        key_padding.resize(size_t(J));
        for (auto& x : key_padding) x = drop(rng);
        problem.masks.key_padding = key_padding.data();
        break;
      case MaskKind::General:
        general.resize(size_t(I * J));
        for (auto& x : general) x = drop(rng);
        problem.masks.general = general.data();
        break;
      case MaskKind::Groups: {
        std::uniform_int_distribution<int32_t> group(0, 2);
        query_groups.resize(size_t(I));
        key_groups.resize(size_t(J));
        for (auto& g : query_groups) g = group(rng);
        for (auto& g : key_groups) g = group(rng);
        problem.masks.query_groups = query_groups.data();
        problem.masks.key_groups = key_groups.data();
        break;
      }
    }
  }
  Case(const Case&) = delete;
};

// Largest |got - want| over entries, where NaN matches only NaN (a mismatch counts as infinite error).
inline double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0;
  for (size_t n = 0; n < want.size(); ++n) {
    const bool gn = std::isnan(got[n]), wn = std::isnan(want[n]);
    if (gn || wn) {
      if (gn != wn) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(double(got[n]) - want[n]));
  }
  return worst;
}

}  // namespace ka::testing
