// The 2-D descent of a search on the grid (cv_search_parts.h, planar_descend).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "stats/cv_planar.h"
#include "stats/cv_search_parts.h"

namespace ka {
namespace cv_search {

using bandwidth_detail::float_bandwidth;

int planar_descend(Search& se, Scan& sc, int low, int high, const SingularProbe* probe) {
  CvSearchKeep& keep = se.keep;
  const double first = sc.first, step = sc.step;
  const int count = sc.count;
  Result& failure = se.failure;
  const auto at = [&](int k) -> double& { return sc.score_at(k); };
  const auto bandwidth = [&](int k, double* b) {
    for (int64_t d = 0; d < 2; ++d) b[d] = se.start[d] * std::exp(first + k * step);
  };
  const auto floats = [&](const double* b, float* hf) {
    return float_bandwidth(b[0], hf) && float_bandwidth(b[1], hf + 1);
  };
  const auto exact = [&](int k) {
    double b[2];
    bandwidth(k, b);
    return !(se.scan_tolerance(b) > 0);
  };
  int chosen = -1, lowest = -1;  // the best point, and the lowest evaluated with a finite score (the reference)
  const auto take = [&](int k) {
    if (std::isfinite(at(k))) lowest = std::min(lowest < 0 ? k : lowest, k);
    if (sc.better(k, chosen)) chosen = k;
  };
  // The probe first, as the upward scan runs it: from the bottom until a point is not shown singular.
  int singular_below = low;  // the points below it are shown singular
  for (int k = low; probe && k <= high; ++k, ++singular_below) {
    double b[2];
    float hf[2];
    bandwidth(k, b);
    if (!floats(b, hf) || !probe->singular(hf)) break;
  }
  for (int k = high; k >= low; --k) {
    at(k) = kInf;
    if (k < singular_below || exact(k)) continue;
    at(k) = se.scale_to(first + k * step, true);
    take(k);
  }
  std::unique_ptr<BandScreen>& band = keep.band;
  for (int k = high; k >= singular_below && failure.status == Status::Ok; --k) {
    if (!exact(k)) continue;
    double b[2];
    float hf[2];
    bandwidth(k, b);
    if (!band && lowest >= 0 && chosen >= 0 && std::isfinite(at(chosen))) {
      const Problem* q = keep.sorted.sorted_problem(se.p, se.criterion);
      const PlanarSample* cells = keep.sorted.planar(se.p, se.criterion);
      if (!q || !cells) {
        failure = {Status::OutOfMemory};
        continue;
      }
      band.reset(new (std::nothrow) BandScreen(*q, se.criterion, cells));
      if (!band || !keep.screened.reset_filled(count, std::numeric_limits<double>::quiet_NaN())) {
        failure = {Status::OutOfMemory};
        continue;
      }
      double r[2];
      float rf[2];
      bandwidth(lowest, r);
      if (band->active() && floats(r, rf) && band->set_reference(rf)) keep.band_reference = lowest;
    }
    if (band && band->has_reference() && floats(b, hf)) {
      // A lower bound on CV(h) (the reference's score and the rows' difference), NaN until asked.
      double& shown = keep.screened.get()[k];
      if (std::isnan(shown)) {
        double r[2];
        bandwidth(keep.band_reference, r);
        const double lower = band->lower_difference(hf), reference = at(keep.band_reference);
        shown = reference - se.grid_margin(r, reference, se.scan_tolerance(r)) + lower -
                band->rounding(std::max(reference, reference + lower));
      }
      double w[2];
      bandwidth(chosen, w);
      const double won = at(chosen);
      if (shown > (won + se.coarse_margin(w, won, se.scan_tolerance(w))) * (1 + kBoundMargin)) continue;
    }
    at(k) = se.scale_to(first + k * step, true);
    take(k);
  }
  return std::max(chosen, low);
}

}  // namespace cv_search
}  // namespace ka
