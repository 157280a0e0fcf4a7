#include "methods/grid/fft.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ka {

Status Fft::plan(int64_t size) {
  int64_t n = 1;
  while (n < size) n *= 2;
  if (n <= size_) return Status::Ok;
  const int64_t half = n / 2, eighth = n / 8, quarter = n / 4;
  if (!twiddles_.reset_zeroed(2 * std::max<int64_t>(half, 1))) {
    size_ = 0;
    return Status::OutOfMemory;
  }
  // cos and sin for angles up to π/4, the rest by the symmetries of the circle, exactly: sin/cos swap at π/2 − θ,
  // and e^{i(π/2 + φ)} = (−sin φ, cos φ). A quarter of the library calls, and the symmetric entries agree bit for bit.
  double* w = twiddles_.get();
  const double turn = 2 * std::acos(-1.0) / double(n);
  for (int64_t k = 0; k < half; ++k) {
    if (k <= eighth) {
      w[2 * k] = std::cos(turn * double(k));
      w[2 * k + 1] = std::sin(turn * double(k));
    } else if (k <= quarter) {
      w[2 * k] = w[2 * (quarter - k) + 1];
      w[2 * k + 1] = w[2 * (quarter - k)];
    } else {
      w[2 * k] = -w[2 * (k - quarter) + 1];
      w[2 * k + 1] = w[2 * (k - quarter)];
    }
  }
  size_ = n;
  return Status::Ok;
}

void Fft::transform(double* z, int64_t n, bool inverse) const {
  // Decimation in time: the bit-reversal permutation, then log₂n stages of butterflies on runs of 2·half.
  for (int64_t i = 1, j = 0; i < n; ++i) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      std::swap(z[2 * i], z[2 * j]);
      std::swap(z[2 * i + 1], z[2 * j + 1]);
    }
  }
  const double* tw = twiddles_.get();
  const double sign = inverse ? 1.0 : -1.0;
  // The first stage's twiddle is 1: additions only.
  for (int64_t s = 0; s + 1 < n; s += 2) {
    double* a = z + 2 * s;
    const double br = a[2], bi = a[3];
    a[2] = a[0] - br;
    a[3] = a[1] - bi;
    a[0] += br;
    a[1] += bi;
  }
  for (int64_t half = 2; half < n; half *= 2) {
    const int64_t step = 2 * (size_ / (2 * half));  // twiddle k of this stage, e^{∓πik/half}, is entry k·size/(2·half)
    for (int64_t s = 0; s < n; s += 2 * half) {
      double* a = z + 2 * s;
      double* b = a + 2 * half;
      for (int64_t k = 0; k < half; ++k) {
        const double wr = tw[k * step], wi = sign * tw[k * step + 1];
        const double br = b[2 * k] * wr - b[2 * k + 1] * wi, bi = b[2 * k] * wi + b[2 * k + 1] * wr;
        b[2 * k] = a[2 * k] - br;
        b[2 * k + 1] = a[2 * k + 1] - bi;
        a[2 * k] += br;
        a[2 * k + 1] += bi;
      }
    }
  }
}

int64_t convolution_size(int64_t length, int64_t taps) {
  int64_t n = 1;
  while (n < length + taps - 1) n *= 2;
  return n;
}

Status RowConvolution::prepare(const Fft& fft, const double* filter, int64_t taps, int64_t length) {
  const int64_t n = convolution_size(length, taps);
  if (n > fft.size()) return Status::BadArgument;
  if (n > capacity_) {
    if (!spectrum_.reset_zeroed(2 * n) || !work_.reset_zeroed(2 * n)) {
      capacity_ = 0;
      return Status::OutOfMemory;
    }
    capacity_ = n;
  }
  fft_ = &fft;
  n_ = n;
  length_ = length;
  out_length_ = length + taps - 1;
  double* f = spectrum_.get();
  std::fill(f, f + 2 * n, 0.0);
  const double scale = 1.0 / double(n);  // exact: n is a power of two
  for (int64_t j = 0; j < taps; ++j) f[2 * j] = filter[j] * scale;
  fft.transform(f, n, false);
  return Status::Ok;
}

void RowConvolution::apply(const double* a, const double* b, int64_t in_stride, double* out_a, double* out_b,
                           int64_t out_stride) {
  double* z = work_.get();
  const int64_t n = n_;
  for (int64_t j = 0; j < length_; ++j) {
    z[2 * j] = a[j * in_stride];
    z[2 * j + 1] = b ? b[j * in_stride] : 0.0;
  }
  std::fill(z + 2 * length_, z + 2 * n, 0.0);
  fft_->transform(z, n, false);
  const double* f = spectrum_.get();
  for (int64_t k = 0; k < n; ++k) {
    const double zr = z[2 * k], zi = z[2 * k + 1], fr = f[2 * k], fi = f[2 * k + 1];
    z[2 * k] = zr * fr - zi * fi;
    z[2 * k + 1] = zr * fi + zi * fr;
  }
  fft_->transform(z, n, true);
  for (int64_t k = 0; k < out_length_; ++k) out_a[k * out_stride] = z[2 * k];
  if (out_b)
    for (int64_t k = 0; k < out_length_; ++k) out_b[k * out_stride] = z[2 * k + 1];
}

}  // namespace ka
