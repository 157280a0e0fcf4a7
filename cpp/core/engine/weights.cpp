// The explicit weight matrix: each row's scores are written in place, then shifted, exponentiated and normalised.
#include "engine/weights.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "engine/key_tile.h"
#include "engine/online_softmax.h"
#include "engine/scalar_row.h"
#include "base/scratch.h"

namespace ka {
namespace {

// Normalises one row of scores (log2 units for float, natural logs for double) into weights: the online-softmax
// state's batch form, then each weight over the sum; false when empty.
template <class T>
bool normalise(T* row, int64_t n) {
  T sum = 0;
  SoftmaxState<T, std::is_same_v<T, float>> st(&sum, 0);
  exponentiate_row(row, n, st);
  if (!(st.max > -std::numeric_limits<T>::infinity())) return false;
  for (int64_t j = 0; j < n; ++j) row[j] /= sum;
  return true;
}

// Row i recomputed in double, for rows whose float32 scores overflowed or underflowed.
bool double_row(const Head& hd, int64_t i, double* scores, float* out) {
  const int64_t J = hd.keys.rows;
  for (int64_t j = 0; j < J; ++j)
    scores[j] = hd.allows(i, j) ? log_score<double>(hd.kernel, hd.queries.row(i), hd.keys.row(j), hd.queries.cols)
                                : -std::numeric_limits<double>::infinity();
  if (!normalise(scores, J)) return false;
  for (int64_t j = 0; j < J; ++j) out[j] = float(scores[j]);
  return true;
}

// One query's scores against a packed tile: score_tile<K> of the head's kernel.
using ScoreTile = void (*)(const Head&, int64_t, const float*, const KeyTile&, float*);

// Rows [first, last) of head `head`'s weights into out (row i at out + (i − first)·J). Only the tile's scores
// depend on the kernel at compile time: the rest runs once per row, so one copy serves every kernel, and the
// scores are reached through a pointer once per query and tile of kKeyTile keys.
Result run_rows(const Head& hd, int32_t head, int64_t first, int64_t last, float* out) {
  const int64_t J = hd.keys.rows, dims = hd.queries.cols;
  const KernelKind kind = hd.kernel.kind;
  Scratch<float> keys_t(dims * kKeyTile), factors(dims);
  Scratch<double> row(J);
  Scratch<uint8_t> chosen(J);
  if (!keys_t.ok() || !factors.ok() || !row.ok() || !chosen.ok()) return {Status::OutOfMemory};
  const ScoreTile score_tile_of = with_kernel(kind, [&](auto k) -> ScoreTile {
    constexpr KernelKind K = k();
    for (int64_t d = 0; d < dims; ++d)
      factors.get()[d] = K == KernelKind::Softmax ? 1.0f : BatchScore<K>::dimension_factor(hd.kernel.bandwidth[d]);
    return &score_tile<K>;
  });
  KeyTile tile{keys_t.get(), nullptr};
  const auto row_of = [&](int64_t i) { return out + (i - first) * J; };

  for (int64_t i0 = first; i0 < last; i0 += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, last - i0);
    const int64_t end = key_end(hd, i0, rows);
    for (int64_t r = 0; r < rows; ++r)
      std::fill(row_of(i0 + r) + end, row_of(i0 + r) + J, -std::numeric_limits<float>::infinity());
    for (int64_t j0 = 0; j0 < end; j0 += kKeyTile) {
      pack_tile(hd, j0, std::min(kKeyTile, end - j0), tile);
      alignas(64) float scores[kKeyTile];
      for (int64_t r = 0; r < rows; ++r) {
        score_tile_of(hd, i0 + r, factors.get(), tile, scores);
        std::copy(scores, scores + tile.count, row_of(i0 + r) + j0);
      }
    }
    for (int64_t i = i0; i < i0 + rows; ++i) {
      float* w = row_of(i);
      const float top = J ? *std::max_element(w, w + J) : -INFINITY;
      const bool bad = std::any_of(w, w + J, [](float s) { return std::isnan(s) || s == INFINITY; }) ||
                       (std::isfinite(top) && std::fabs(top) > kFloatScoreLimit);
      if (!bad && normalise(w, J)) continue;
      if ((bad || !is_compact(kind)) && double_row(hd, i, row.get(), w)) continue;
      // The policy's row of J weights; under Nearest the weights of the nearest-key mean, 1/n on each of the n
      // nearest keys (zeros when the masks allow no key).
      if (finalize_empty_row(J, w, hd.empty, NearestKeys{&hd, i, chosen.get(), nullptr, true}) == RowOutcome::Error)
        return {Status::EmptyRow, i, head};
    }
  }
  return {};
}

}  // namespace

Result weights(const Problem& p, float* out) {
  if (const Status s = check(p, false); s != Status::Ok) return {s};
  const int64_t I = p.queries.rows, J = p.keys.rows;
  if (I > 0 && J > 0 && !out) return {Status::BadShape};
  Problem q = p;
  q.values = {nullptr, J, 0, 0};
  for (int32_t h = 0; h < p.heads; ++h) {
    const Head hd = head_of(q, h);
    const Result r = run_rows(hd, h, 0, I, out + h * I * J);
    if (r.status != Status::Ok) return r;
  }
  return {};
}

Result weight_rows(const Problem& p, int32_t head, int64_t first, int64_t last, float* out) {
  if (const Status s = check(p, false); s != Status::Ok) return {s};
  if (head < 0 || head >= p.heads || first < 0 || last < first || last > p.queries.rows) return {Status::BadArgument};
  if (last > first && p.keys.rows > 0 && !out) return {Status::BadShape};
  Problem q = p;
  q.values = {nullptr, p.keys.rows, 0, 0};
  const Head hd = head_of(q, head);
  return run_rows(hd, head, first, last, out);
}

}  // namespace ka
