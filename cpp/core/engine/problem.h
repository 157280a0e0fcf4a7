// The description of one call: inputs as views, kernel, masks, heads, the empty-row policy and the thread count.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernel/kernels.h"
#include "base/status.h"
#include "base/views.h"

namespace ka {

// What a query with no admissible key returns. Decided in online_softmax.h, nowhere else.
enum class EmptyPolicy : int32_t { NaN, Zero, Nearest, Error };

// Key j is admissible for query i when every active mask allows it. Null pointers are inactive masks.
struct Masks {
  bool causal = false;                    // j <= i
  bool leave_one_out = false;             // j != i (needs I = J)
  const uint8_t* key_padding = nullptr;   // J entries; nonzero = ignore key j for every query
  const uint8_t* general = nullptr;       // I*J entries, row-major; nonzero = query i ignores key j
  const int32_t* query_groups = nullptr;  // I entries; with key_groups: only keys of the query's own group
  const int32_t* key_groups = nullptr;    // J entries
  // I entries each: query i ignores keys band_first[i] … band_last[i] (inclusive; none when last < first). Blocked
  // CV's neighbourhood of a held-out point, contiguous in a sample sorted by its first coordinate (bandwidth.h).
  const int64_t* band_first = nullptr;
  const int64_t* band_last = nullptr;

  bool any() const { return causal || leave_one_out || key_padding || general || query_groups || band_first; }

  bool allows(int64_t i, int64_t j, int64_t num_keys) const {
    if (causal && j > i) return false;
    if (leave_one_out && j == i) return false;
    if (key_padding && key_padding[j]) return false;
    if (general && general[i * num_keys + j]) return false;
    if (query_groups && query_groups[i] != key_groups[j]) return false;
    if (band_first && j >= band_first[i] && j <= band_last[i]) return false;
    return true;
  }
};

// queries I×M, keys J×M, values J×D; with H heads, head h reads columns [h*M/H, (h+1)*M/H) of queries and keys
// and [h*D/H, (h+1)*D/H) of values. `kernel.bandwidth` has M entries (one per column of queries).
struct Problem {
  ConstMatrix queries;
  ConstMatrix keys;
  ConstMatrix values;
  KernelSpec kernel;
  int32_t heads = 1;
  Masks masks;
  EmptyPolicy empty = EmptyPolicy::NaN;
  // Threads the engine may use (builds without threads use one). Outputs are bit-identical for every count.
  int32_t threads = 1;
};

// Whether the queries are the keys themselves (the same rows of the same array): the sample fitted at itself, as a
// CV score, a fit's summary or a leave-one-out pass asks.
inline bool queries_are_keys(const Problem& p) {
  return p.queries.data == p.keys.data && p.queries.rows == p.keys.rows && p.queries.cols == p.keys.cols &&
         p.queries.stride == p.keys.stride;
}

// Shape and option checks shared by every entry point (the JS layer checks first and names the argument;
// this is the core's own guard). `needs_values` is false for weights().
inline Status check(const Problem& p, bool needs_values) {
  const int64_t I = p.queries.rows, J = p.keys.rows, M = p.queries.cols;
  if (I < 0 || J < 0 || M < 1 || p.keys.cols != M) return Status::BadShape;
  if (p.heads < 1 || M % p.heads != 0) return Status::BadArgument;
  if (needs_values) {
    if (p.values.rows != J || p.values.cols < 1 || p.values.cols % p.heads != 0) return Status::BadShape;
    if (J > 0 && !p.values.data) return Status::BadShape;
  }
  if ((I > 0 && !p.queries.data) || (J > 0 && !p.keys.data)) return Status::BadShape;
  if (int32_t(p.kernel.kind) < 0 || int32_t(p.kernel.kind) > int32_t(KernelKind::Uniform)) return Status::BadArgument;
  if (int32_t(p.empty) < 0 || int32_t(p.empty) > int32_t(EmptyPolicy::Error)) return Status::BadArgument;
  if (p.kernel.kind == KernelKind::Softmax) {
    // Within float32 range (as the JS layer requires): then every double score scale·q·k of float32 inputs is
    // finite (|q·k| <= M·FLT_MAX²), which the double rescue path relies on.
    if (!(std::fabs(p.kernel.scale) <= std::numeric_limits<float>::max())) return Status::BadArgument;
  } else {
    if (!p.kernel.bandwidth) return Status::BadArgument;
    for (int64_t d = 0; d < M; ++d) {
      const float h = p.kernel.bandwidth[d];
      if (!(h > 0) || !std::isfinite(h)) return Status::BadArgument;
    }
  }
  if (p.threads < 1) return Status::BadArgument;
  if (p.masks.leave_one_out && I != J) return Status::BadShape;
  if ((p.masks.query_groups == nullptr) != (p.masks.key_groups == nullptr)) return Status::BadArgument;
  if ((p.masks.band_first == nullptr) != (p.masks.band_last == nullptr)) return Status::BadArgument;
  return Status::Ok;
}

}  // namespace ka
