// A 2-D grid model's exact rows over the keys of the bands of x₂ in their reach (sorted_keys.h, key_bands.h).
#include <algorithm>
#include <cmath>

#include "methods/grid/exact_rows.h"
#include "methods/grid/sorted_keys.h"

namespace ka {
namespace {

// Rows fitted together: the engine's tiles score several queries per key they read, where a row alone pays about a
// tile's work per key (measured natively: 16 ns a key). A group takes the next row, in the order of q₂'s band then
// q₁, while the keys of the group's hull (per band, the first to the last key any of its rows reads) stay within
// kGroupSpread times its largest row's: neighbouring rows of a chart read nearly the same keys.
constexpr int64_t kGroupRows = 16;
constexpr double kGroupSpread = 1.5;

}  // namespace

bool SortedKeys::banded(const Fit& f) const {
  const Problem& p = f.problem;
  return dims_ == 2 && bands_.ready() && KeyBands::serves(p.kernel.kind) && p.empty != EmptyPolicy::Nearest &&
         p.empty != EmptyPolicy::Error;
}

Result SortedKeys::banded_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out) {
  const Problem& p = f.problem;
  const bool weighted = f.observation_weights;
  const int64_t bands = bands_.bands();
  const int32_t* order = bands_.order();
  Scratch<int64_t> ord(count), from(bands), to(bands), touched(bands), group(kGroupRows);
  Scratch<KeyBands::Run> runs(bands);
  Scratch<float> gq(kGroupRows * 2);
  PackedRows packed(kGroupRows, width_);
  if (!ord.ok() || !from.ok() || !to.ok() || !touched.ok() || !group.ok() || !runs.ok() || !gq.ok() || !packed.ok())
    return {Status::OutOfMemory};
  std::fill(from.get(), from.get() + bands, int64_t(-1));
  std::copy(rows, rows + count, ord.get());
  const auto q_of = [&](int64_t i) { return p.queries.row(i); };
  const auto finite = [&](int64_t i) { return std::isfinite(q_of(i)[0]) && std::isfinite(q_of(i)[1]); };
  std::sort(ord.get(), ord.get() + count, [&](int64_t a, int64_t b) {  // finite rows by band of q₂, then q₁, then i
    if (finite(a) != finite(b)) return finite(a);
    if (!finite(a)) return a < b;
    const int64_t ba = bands_.band_of(q_of(a)[1]), bb = bands_.band_of(q_of(b)[1]);
    if (ba != bb) return ba < bb;
    return q_of(a)[0] != q_of(b)[0] ? q_of(a)[0] < q_of(b)[0] : a < b;
  });
  int64_t members = 0, hull = 0, largest = 0, touched_count = 0;
  // Fits the group over its hull's keys, written back in each row's place.
  const auto flush = [&]() -> Result {
    if (members == 0) return {};
    if (hull > held_) {
      held_ = std::max(hull, std::min(n_, 2 * held_));
      if (!gx_.reset_zeroed(held_ * 2) || !gy_.reset_zeroed(held_ * width_) ||
          !gw_.reset_zeroed(weighted ? held_ : 0)) {
        held_ = 0;
        return {Status::OutOfMemory};
      }
    }
    int64_t k = 0;
    for (int64_t t = 0; t < touched_count; ++t) {
      const int64_t b = touched.get()[t];
      for (int64_t at = from.get()[b]; at < to.get()[b]; ++at, ++k) {
        const int64_t j = order[at];
        std::copy(x_.get() + 2 * j, x_.get() + 2 * j + 2, gx_.get() + 2 * k);
        std::copy(y_.get() + j * width_, y_.get() + (j + 1) * width_, gy_.get() + k * width_);
        if (weighted) gw_.get()[k] = w_.get()[j];
      }
      from.get()[b] = -1;
    }
    keys_read += k;
    for (int64_t g = 0; g < members; ++g) std::copy(q_of(group.get()[g]), q_of(group.get()[g]) + 2, gq.get() + 2 * g);
    Fit sub = sorted(f);
    sub.problem.queries = {gq.get(), members, 2, 2};
    sub.problem.keys = {gx_.get(), k, 2, 2};
    sub.problem.values = {gy_.get(), k, width_, width_};
    sub.observation_weights = weighted ? gw_.get() : nullptr;
    if (const Result res = local_fit(sub, packed.view(members, &out)); res.status != Status::Ok) return {res.status};
    packed.scatter(group.get(), members, out);
    members = hull = largest = touched_count = 0;
    return {};
  };
  for (int64_t r = 0; r < count; ++r) {
    const int64_t i = ord.get()[r];
    const int64_t m =
        finite(i) ? bands_.runs(p.kernel, q_of(i), weighted ? w_.get() : nullptr, omega_max_, skip(), runs.get()) : -1;
    if (m < 0) {  // a NaN or infinite query, or no admissible key near it: its window (every key)
      if (const Result res = window_row(f, i, out); res.status != Status::Ok) return res;
      continue;
    }
    const KeyBands::Run* run = runs.get();
    int64_t own = 0, grows = 0;  // the row's keys; what it adds to the hull
    for (int64_t c = 0; c < m; ++c) {
      const int64_t b = run[c].band, lo = from.get()[b], hi = to.get()[b];
      own += run[c].to - run[c].from;
      grows += lo < 0 ? run[c].to - run[c].from : std::max(hi, run[c].to) - std::min(lo, run[c].from) - (hi - lo);
    }
    if (members > 0 &&
        (members == kGroupRows || double(hull + grows) > kGroupSpread * double(std::max(largest, own)))) {
      if (const Result res = flush(); res.status != Status::Ok) return res;
      grows = own;
    }
    for (int64_t c = 0; c < m; ++c) {
      const int64_t b = run[c].band;
      if (from.get()[b] < 0) {
        touched.get()[touched_count++] = b;
        from.get()[b] = run[c].from;
        to.get()[b] = run[c].to;
      } else {
        from.get()[b] = std::min(from.get()[b], run[c].from);
        to.get()[b] = std::max(to.get()[b], run[c].to);
      }
    }
    hull += grows;
    largest = std::max(largest, own);
    group.get()[members++] = i;
  }
  return flush();
}

}  // namespace ka
