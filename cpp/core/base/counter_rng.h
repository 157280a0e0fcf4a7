// A counter-based random number generator: the n-th number of a stream is a pure function of (seed, stream, n),
// SplitMix64's finaliser over a Weyl sequence (Steele, Lea & Flood 2014), so any draw is reproducible without state.
#pragma once
#include <cmath>
#include <cstdint>

namespace ka {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ull;

inline uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Streams of one seed are independent sequences (features of head h, landmarks, the held-out sample, ...).
// Same (seed, stream, n) gives the same bits everywhere; normal() goes through std::log and std::cos, so its
// last bits may differ between C libraries (native and WebAssembly), never between runs of one build.
struct CounterRng {
  uint64_t key;
  CounterRng(uint64_t seed, uint64_t stream)
      : key(mix64(mix64(seed + kGolden) ^ (stream * 0xd1342543de82ef95ull + 1))) {}

  uint64_t bits(uint64_t n) const { return mix64(key + (n + 1) * kGolden); }
  // Uniform in the open interval (0, 1): 53 random bits, centred in their cell.
  double uniform(uint64_t n) const { return (double(bits(n) >> 11) + 0.5) * 0x1p-53; }
  // Standard normal by Box–Muller from draws 2n and 2n + 1.
  double normal(uint64_t n) const {
    const double r = std::sqrt(-2.0 * std::log(uniform(2 * n)));
    return r * std::cos(6.283185307179586 * uniform(2 * n + 1));
  }
  // Uniform integer in [0, n) for 1 <= n < 2^53, from draw `at`.
  uint64_t below(uint64_t n, uint64_t at) const {
    const uint64_t r = uint64_t(uniform(at) * double(n));
    return r < n ? r : n - 1;
  }
};

}  // namespace ka
