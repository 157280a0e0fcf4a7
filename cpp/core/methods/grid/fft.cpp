#include "methods/grid/fft.h"

#include <algorithm>
#include <cmath>

namespace ka {

namespace {

// Values (complex) a block holds when it runs its remaining stages at once: 2^11 of them are 32 KB, within L1.
constexpr int64_t kBlock = int64_t(1) << 11;

// One decimation-in-frequency stage on the n values at z: butterflies of values `span` apart, (a, b) → (a + b,
// (a − b)·w_k), w_k = e^{−iπk/span} from `w`.
void dif_stage(double* z, int64_t n, int64_t span, const double* w) {
  for (int64_t base = 0; base < n; base += 2 * span) {
    double* a = z + 2 * base;
    double* b = a + 2 * span;
    for (int64_t k = 0; k < span; ++k) {
      const double wr = w[2 * k], wi = w[2 * k + 1];
      const double dr = a[2 * k] - b[2 * k], di = a[2 * k + 1] - b[2 * k + 1];
      a[2 * k] += b[2 * k];
      a[2 * k + 1] += b[2 * k + 1];
      b[2 * k] = dr * wr - di * wi;
      b[2 * k + 1] = dr * wi + di * wr;
    }
  }
}

// One decimation-in-time stage of the inverse: (a, b) → (a + b·w̄_k, a − b·w̄_k), w̄_k = e^{+iπk/span}.
void dit_stage(double* z, int64_t n, int64_t span, const double* w) {
  for (int64_t base = 0; base < n; base += 2 * span) {
    double* a = z + 2 * base;
    double* b = a + 2 * span;
    for (int64_t k = 0; k < span; ++k) {
      const double wr = w[2 * k], wi = w[2 * k + 1];
      const double br = b[2 * k] * wr + b[2 * k + 1] * wi, bi = b[2 * k + 1] * wr - b[2 * k] * wi;
      b[2 * k] = a[2 * k] - br;
      b[2 * k + 1] = a[2 * k + 1] - bi;
      a[2 * k] += br;
      a[2 * k + 1] += bi;
    }
  }
}

// The stage of span 1, whose twiddle is 1: additions only.
void unit_stage(double* z, int64_t n) {
  for (int64_t s = 0; s + 1 < n; s += 2) {
    double* a = z + 2 * s;
    const double br = a[2], bi = a[3];
    a[2] = a[0] - br;
    a[3] = a[1] - bi;
    a[0] += br;
    a[1] += bi;
  }
}

// Depth first: a block larger than kBlock runs its first stage, then each half whole, so that every stage below
// kBlock reads values already in cache; the inverse mirrors it.
void forward_block(double* z, int64_t n, const double* tw) {
  if (n > kBlock) {
    dif_stage(z, n, n / 2, tw + n);
    forward_block(z, n / 2, tw);
    forward_block(z + n, n / 2, tw);
    return;
  }
  for (int64_t span = n / 2; span >= 2; span /= 2) dif_stage(z, n, span, tw + 2 * span);
  unit_stage(z, n);
}

void inverse_block(double* z, int64_t n, const double* tw) {
  if (n > kBlock) {
    inverse_block(z, n / 2, tw);
    inverse_block(z + n, n / 2, tw);
    dit_stage(z, n, n / 2, tw + n);
    return;
  }
  unit_stage(z, n);
  for (int64_t span = 2; span < n; span *= 2) dit_stage(z, n, span, tw + 2 * span);
}

}  // namespace

Status Fft::plan(int64_t size) {
  int64_t n = 1;
  while (n < size) n *= 2;
  if (n <= size_) return Status::Ok;
  const int64_t half = n / 2, eighth = n / 8, quarter = n / 4;
  if (!twiddles_.reset_zeroed(2 * std::max<int64_t>(n, 2))) {
    size_ = 0;
    return Status::OutOfMemory;
  }
  // The largest span's table, e^{−2πik/n} for k < n/2: cos and sin of the angles up to π/4, the rest by the
  // symmetries of the circle, exactly (sin and cos swap at π/2 − θ, and e^{i(π/2 + φ)} = (−sin φ, cos φ)), then
  // conjugated: a quarter of the library calls, and the symmetric entries agree bit for bit.
  double* w = twiddles_.get() + 2 * half;
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
  for (int64_t k = 0; k < half; ++k) w[2 * k + 1] = -w[2 * k + 1];  // e^{−iθ}
  // Each smaller span's twiddle k is the next larger one's 2k: copies, exact.
  for (int64_t span = half / 2; span >= 1; span /= 2) {
    double* to = twiddles_.get() + 2 * span;
    const double* from = twiddles_.get() + 4 * span;
    for (int64_t k = 0; k < span; ++k) {
      to[2 * k] = from[4 * k];
      to[2 * k + 1] = from[4 * k + 1];
    }
  }
  size_ = n;
  return Status::Ok;
}

void Fft::forward(double* z, int64_t n) const {
  if (n > 1) forward_block(z, n, twiddles_.get());
}

void Fft::inverse(double* z, int64_t n) const {
  if (n > 1) inverse_block(z, n, twiddles_.get());
}

int64_t convolution_size(int64_t length, int64_t taps, int64_t first, int64_t end) {
  const int64_t full = length + taps - 1;
  if (end < 0) end = full;
  int64_t n = 1;
  while (n < end || n < full - first) n *= 2;
  return n;
}

Status RowConvolution::prepare(const Fft& fft, const double* const* filters, int count, int64_t taps, int64_t length,
                               int64_t first, int64_t end) {
  const int64_t n = convolution_size(length, taps, first, end);
  if (n > fft.size() || count < 1 || count > kMaxFilters) return Status::BadArgument;
  if (n > capacity_) {
    if (!spectra_.reset_zeroed(2 * n * kMaxFilters) || !loaded_.reset_zeroed(2 * n) || !work_.reset_zeroed(2 * n)) {
      capacity_ = 0;
      return Status::OutOfMemory;
    }
    capacity_ = n;
  }
  fft_ = &fft;
  n_ = n;
  length_ = length;
  out_first_ = first;
  out_end_ = end < 0 ? length + taps - 1 : end;
  const double scale = 1.0 / double(n);  // exact: n is a power of two
  for (int k = 0; k < count; ++k) {
    double* f = spectra_.get() + 2 * n * k;
    std::fill(f, f + 2 * n, 0.0);
    for (int64_t j = 0; j < taps; ++j) f[2 * j] = filters[k][j] * scale;
    fft.forward(f, n);
  }
  return Status::Ok;
}

void RowConvolution::load(const double* a, const double* b, int64_t in_stride) {
  double* z = loaded_.get();
  for (int64_t j = 0; j < length_; ++j) {
    z[2 * j] = a[j * in_stride];
    z[2 * j + 1] = b ? b[j * in_stride] : 0.0;
  }
  std::fill(z + 2 * length_, z + 2 * n_, 0.0);
  fft_->forward(z, n_);
}

void RowConvolution::emit(int filter, double* out_a, double* out_b, int64_t out_stride, int64_t first, int64_t count) {
  const double* z = loaded_.get();
  const double* f = spectra_.get() + 2 * n_ * filter;
  double* p = work_.get();
  for (int64_t k = 0; k < n_; ++k) {
    const double zr = z[2 * k], zi = z[2 * k + 1], fr = f[2 * k], fi = f[2 * k + 1];
    p[2 * k] = zr * fr - zi * fi;
    p[2 * k + 1] = zr * fi + zi * fr;
  }
  fft_->inverse(p, n_);
  const int64_t from = std::max(first, out_first_), end = count < 0 ? out_end_ : std::min(out_end_, first + count);
  for (int64_t k = from; k < end; ++k) out_a[k * out_stride] = p[2 * k];
  if (out_b)
    for (int64_t k = from; k < end; ++k) out_b[k * out_stride] = p[2 * k + 1];
}

}  // namespace ka
