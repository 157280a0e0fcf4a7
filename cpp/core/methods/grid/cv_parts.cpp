// What the 1-D leave-one-out scores on the grid share (cv_parts.h): the axis of a grid over the sample's range and the
// moments a score reads cell by cell.
#include "methods/grid/cv_parts.h"

#include <cmath>

#include "methods/grid/convolution.h"

namespace ka {

Axis cv_axis(double lo, double range, int64_t cells, KernelKind kind, float h) {
  Axis x;
  x.lo = lo;
  x.hi = lo + range;
  x.step = range / double(cells);
  x.h = double(h);
  x.nodes = cells + 1;
  const double span = std::ceil(reach_of(kind) * x.h / x.step);  // in double: h/step may exceed any integer
  x.L = span < double(x.nodes) ? int64_t(span) : x.nodes;
  x.E = x.nodes + 2 * x.L;
  x.fft = fft_pays(2, double(x.nodes), double(x.L));  // S_a and T_a of column 0 share a transform
  return x;
}

Status cv_moments(KernelKind kind, float h, const Axis& x, const double* bins, int64_t bin_stride, int64_t width,
                  bool linear, Scratch<double>* moments, Scratch<double>* slopes) {
  const int64_t s_count = linear ? 3 : 1, t_count = linear ? 2 : 1, stride = s_count + width * t_count;
  const int64_t cells = x.nodes - 1, tap_len = 2 * x.L + 1;
  Scratch<double> taps(s_count * tap_len), across(x.E), out_moments(x.E * stride), out_slopes(cells * stride);
  if (!taps.ok() || !across.ok() || !out_moments.ok() || !out_slopes.ok()) return Status::OutOfMemory;
  moments->swap(out_moments);
  slopes->swap(out_slopes);
  // Taps K(u)·uᵃ at u = m·step/h, m = −L … L, and the moments S_a (channel Σω) and T_a (channels Σω·y).
  for (int64_t m = -x.L; m <= x.L; ++m) {
    const double u = double(m) * x.step / x.h, k = kernel_weight(kind, h, double(m) * x.step);
    double ua = 1;  // uᵃ by products, not std::pow (convolution.cpp)
    for (int64_t a = 0; a < s_count; ++a, ua *= u) taps.get()[a * tap_len + m + x.L] = k * ua;
  }
  const double one = 1.0;
  FftWork work;
  double* out = moments->get();
  const auto t_bins = [&](int64_t c) { return bins + (1 + c) * bin_stride; };
  const auto t_moment = [&](int64_t c, int64_t a) { return out + s_count + c * t_count + a; };
  for (int64_t a = 0; a < s_count; ++a) {  // S_a with T_a of column 0 (the same taps), then the other columns in pairs
    const bool pair = a < t_count;
    if (const Status st = convolve(bins, x, Axis{}, taps.get() + a * tap_len, &one, across.get(), out + a, stride,
                                   &work, pair ? t_bins(0) : nullptr, pair ? t_moment(0, a) : nullptr);
        st != Status::Ok)
      return st;
  }
  for (int64_t c = 1; c < width; c += 2)
    for (int64_t a = 0; a < t_count; ++a) {
      const bool pair = c + 1 < width;
      if (const Status st =
              convolve(t_bins(c), x, Axis{}, taps.get() + a * tap_len, &one, across.get(), t_moment(c, a), stride,
                       &work, pair ? t_bins(c + 1) : nullptr, pair ? t_moment(c + 1, a) : nullptr);
          st != Status::Ok)
        return st;
    }
  const double* at_node = out + x.L * stride;
  for (int64_t k = 0; k < cells * stride; ++k) slopes->get()[k] = at_node[k + stride] - at_node[k];
  return Status::Ok;
}

}  // namespace ka
