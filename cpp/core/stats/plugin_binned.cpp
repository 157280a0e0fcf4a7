// Linear binning and binned local polynomial fits of the plug-in rule (plugin_binned.h).
#include "stats/plugin_binned.h"

#include <algorithm>
#include <cmath>

#include "base/scratch.h"

namespace ka {

void bin_regression(const double* x, const double* y, int64_t first, int64_t end, bool truncate, RegressionBins* bins) {
  const int64_t nodes = bins->nodes;
  const double lo = bins->lo, hi = bins->hi, step = bins->step();
  double* count = bins->counts;
  double* sum = bins->sums;
  for (int64_t i = first; i < end; ++i) {
    // R's 1-based position, rounded as R rounds it; the comparisons keep the integer part in range before the cast.
    const double at = (x[i] - lo) / step + 1;
    int64_t node = at < 1 ? 0 : at >= double(nodes) ? nodes : int64_t(at);
    double right = at - double(node);
    if (x[i] == hi) node = nodes - 1, right = 1;
    if (node >= 1 && node < nodes) {
      count[node - 1] += 1 - right;
      count[node] += right;
      sum[node - 1] += (1 - right) * y[i];
      sum[node] += right * y[i];
    } else if (truncate) {
      ++bins->dropped;
      bins->dropped_sum += y[i];
    } else {
      const int64_t end = node < 1 ? 0 : nodes - 1;
      count[end] += 1;
      sum[end] += y[i];
    }
  }
}

namespace {

// R's tau: the weights stop 4 bandwidths from the node.
constexpr double kReach = 4;
// The largest moment matrix: the local cubic's, 4 × 4.
constexpr int kMaxSize = 4;

// The nodes around a node whose weights a fit takes: offsets |d| <= reach, weight[|d|] = exp(−(d·step/h)²/2), and
// the unit u = d/scale of the fits' polynomials (scale = reach, so |u| <= 1 and the moment matrices stay balanced).
struct Window {
  int64_t reach = 0;
  double scale = 1;
  Scratch<double> weight;
  Window(const RegressionBins& bins, double h) {
    const double step = bins.step(), nodes = double(bins.nodes - 1);
    const double reach_nodes = std::floor(kReach * h / step);
    reach = reach_nodes >= nodes ? bins.nodes - 1 : reach_nodes >= 1 ? int64_t(reach_nodes) : 0;
    scale = reach > 0 ? double(reach) : 1.0;
    weight.reset_zeroed(reach + 1);
    if (weight.ok())
      for (int64_t d = 0; d <= reach; ++d) {
        const double r = step * double(d) / h;
        weight.get()[d] = std::exp(-(r * r) / 2);
      }
  }
};

// The window's moments at node g: m[q] = Σ c w u^q (q <= powers), t[q] = Σ s w u^q (q <= y_powers) and, when v is not
// null, v[q] = Σ c w² u^q, over the nodes with counts c ≠ 0 (sums s). Returns how many nodes with data it saw.
int64_t moments(const RegressionBins& bins, const Window& w, int64_t g, int powers, int y_powers, double* m, double* t,
                double* v) {
  std::fill(m, m + powers + 1, 0.0);
  std::fill(t, t + y_powers + 1, 0.0);
  if (v) std::fill(v, v + powers + 1, 0.0);
  const int64_t first = std::max<int64_t>(0, g - w.reach), last = std::min(bins.nodes - 1, g + w.reach);
  int64_t with_data = 0;
  for (int64_t k = first; k <= last; ++k) {
    const double c = bins.counts[k];
    if (c == 0) continue;
    ++with_data;
    const int64_t d = k - g;
    const double weight = w.weight.get()[d < 0 ? -d : d], u = double(d) / w.scale;
    const double cw = c * weight, sw = bins.sums[k] * weight;
    double power = 1;
    for (int q = 0; q <= powers; ++q, power *= u) {
      m[q] += cw * power;
      if (q <= y_powers) t[q] += sw * power;
      if (v) v[q] += cw * weight * power;
    }
  }
  return with_data;
}

// The Cholesky factor of a Hankel moment matrix [m_(i+j)], size × size.
struct Cholesky {
  double l[kMaxSize][kMaxSize] = {};
  int size = 0;

  // False when the matrix is not positive definite in floating point.
  bool factor(const double* m, int n) {
    size = n;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j <= i; ++j) {
        double s = m[i + j];
        for (int k = 0; k < j; ++k) s -= l[i][k] * l[j][k];
        if (i == j) {
          if (!(s > 0)) return false;
          l[i][i] = std::sqrt(s);
        } else {
          l[i][j] = s / l[j][j];
        }
      }
    return true;
  }

  void solve(const double* rhs, double* z) const {
    for (int i = 0; i < size; ++i) {
      double s = rhs[i];
      for (int k = 0; k < i; ++k) s -= l[i][k] * z[k];
      z[i] = s / l[i][i];
    }
    for (int i = size - 1; i >= 0; --i) {
      double s = z[i];
      for (int k = i + 1; k < size; ++k) s -= l[k][i] * z[k];
      z[i] = s / l[i][i];
    }
  }
};

}  // namespace

BinnedFit binned_curvature(const RegressionBins& bins, double h, int64_t first, int64_t last, double* sum) {
  const Window w(bins, h);
  if (!w.weight.ok()) return BinnedFit::OutOfMemory;
  const double unit = w.scale * bins.step();  // x − node = u·unit
  double m[7], t[4], beta[4];
  Cholesky chol;
  *sum = 0;
  for (int64_t g = first; g <= last; ++g) {
    const double c = bins.counts[g];
    if (c == 0) continue;
    if (moments(bins, w, g, 6, 3, m, t, nullptr) < 4 || !chol.factor(m, 4)) return BinnedFit::Singular;
    chol.solve(t, beta);
    const double second = 2 * beta[2] / (unit * unit);
    *sum += second * second * c;
  }
  return BinnedFit::Ok;
}

BinnedFit binned_linear_parts(const RegressionBins& bins, double h, LinearParts* parts) {
  const Window w(bins, h);
  if (!w.weight.ok()) return BinnedFit::OutOfMemory;
  double m[3], t[2], v[3], beta[2], z[2];
  const double unit[2] = {1, 0};
  Cholesky chol;
  *parts = LinearParts{};
  for (int64_t g = 0; g < bins.nodes; ++g) {
    const double c = bins.counts[g];
    if (c == 0) continue;
    if (moments(bins, w, g, 2, 1, m, t, v) < 2 || !chol.factor(m, 2)) return BinnedFit::Singular;
    chol.solve(t, beta);
    chol.solve(unit, z);
    const double fit = beta[0];
    const double sst = z[0] * (v[0] * z[0] + v[1] * z[1]) + z[1] * (v[1] * z[0] + v[2] * z[1]);
    parts->residual += fit * fit * c - 2 * fit * bins.sums[g];
    parts->self += z[0] * c;
    parts->self_squared += sst * c;
  }
  return BinnedFit::Ok;
}

}  // namespace ka
