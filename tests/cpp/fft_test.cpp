// The FFT convolution (cpp/core/methods/grid/fft.h) against a naive double loop: full linear convolutions of odd and
// even lengths, one tap, more taps than entries, two different rows in one transform, strided input and output.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "methods/grid/convolution.h"
#include "methods/grid/fft.h"

using namespace ka;

namespace {

// c[k] = Σ_j f[j]·a[k − j], k < length + taps − 1.
std::vector<double> naive_convolution(const std::vector<double>& a, const std::vector<double>& f) {
  std::vector<double> c(a.size() + f.size() - 1, 0.0);
  for (size_t k = 0; k < c.size(); ++k)
    for (size_t j = 0; j < f.size(); ++j)
      if (k >= j && k - j < a.size()) c[k] += f[j] * a[k - j];
  return c;
}

std::vector<double> random_row(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 3.0);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// k with its log₂n bits reversed: where the forward transform leaves X_k.
size_t bit_reversed(int64_t k, int64_t n) {
  size_t r = 0;
  for (int64_t bit = 1; bit < n; bit *= 2) r = (r << 1) | size_t((k & bit) != 0);
  return r;
}

// max |got − want| / max |want|.
double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double err = 0, scale = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    err = std::max(err, std::fabs(got[k] - want[k]));
    scale = std::max(scale, std::fabs(want[k]));
  }
  return err / scale;
}

}  // namespace

TEST_CASE("FFT convolution of two rows at once matches the naive loop") {
  std::mt19937 rng(7);
  Fft fft;
  RowConvolution conv;
  // (length, taps): odd and even lengths, one tap, taps longer than the row, sizes at and past a power of two.
  const int lengths[][2] = {{1, 1},   {2, 1},   {7, 3},   {8, 5},      {9, 1},    {16, 17},    {33, 64},  {5, 40},
                            {100, 7}, {255, 2}, {256, 1}, {1000, 301}, {3, 1024}, {9000, 700}, {40000, 3}};
  for (const auto& lt : lengths) {
    const size_t length = size_t(lt[0]), taps = size_t(lt[1]);
    const auto a = random_row(length, rng), b = random_row(length, rng), f = random_row(taps, rng);
    REQUIRE(fft.plan(convolution_size(int64_t(length), int64_t(taps))) == Status::Ok);
    REQUIRE(conv.prepare(fft, f.data(), int64_t(taps), int64_t(length)) == Status::Ok);
    const size_t out = length + taps - 1;
    std::vector<double> got_a(out, -99.0), got_b(out, -99.0), alone(out, -99.0);
    conv.apply(a.data(), b.data(), 1, got_a.data(), got_b.data(), 1);
    conv.apply(b.data(), nullptr, 1, alone.data(), nullptr, 1);
    CAPTURE(length);
    CAPTURE(taps);
    CHECK(relative_error(got_a, naive_convolution(a, f)) < 1e-13);
    CHECK(relative_error(got_b, naive_convolution(b, f)) < 1e-13);
    CHECK(relative_error(alone, naive_convolution(b, f)) < 1e-13);
  }
}

TEST_CASE("FFT convolution reads and writes with strides, and one plan serves smaller transforms") {
  std::mt19937 rng(8);
  const size_t length = 37, taps = 12, out = length + taps - 1;
  const int64_t in_stride = 3, out_stride = 5;
  const auto a = random_row(length, rng), b = random_row(length, rng), f = random_row(taps, rng);
  // The two rows interleaved in one strided array (a at 0, b at 1, stride 3), outputs interleaved likewise.
  std::vector<double> in(length * in_stride, 1e300), got(out * out_stride, -99.0);
  for (size_t j = 0; j < length; ++j) {
    in[j * in_stride] = a[j];
    in[j * in_stride + 1] = b[j];
  }
  Fft fft;
  REQUIRE(fft.plan(4096) == Status::Ok);  // larger than this convolution needs
  REQUIRE(fft.size() == 4096);
  RowConvolution conv;
  REQUIRE(conv.prepare(fft, f.data(), int64_t(taps), int64_t(length)) == Status::Ok);
  conv.apply(in.data(), in.data() + 1, in_stride, got.data(), got.data() + 2, out_stride);
  std::vector<double> got_a(out), got_b(out);
  for (size_t k = 0; k < out; ++k) {
    got_a[k] = got[k * out_stride];
    got_b[k] = got[k * out_stride + 2];
    CHECK(got[k * out_stride + 1] == -99.0);  // untouched between the outputs
  }
  CHECK(relative_error(got_a, naive_convolution(a, f)) < 1e-13);
  CHECK(relative_error(got_b, naive_convolution(b, f)) < 1e-13);
  // A plan too small for the convolution is refused, not overrun.
  Fft small;
  REQUIRE(small.plan(32) == Status::Ok);
  CHECK(conv.prepare(small, f.data(), int64_t(taps), int64_t(length)) == Status::BadArgument);
}

TEST_CASE("FFT convolution of a window of outputs: a shorter transform whose wrap-around falls outside it") {
  // A 2-D CV score's passes read the outputs L − 1 … L + length + 1 of length + 2L (the box's nodes): the transform
  // need only cover length + L + 2 points. Outputs outside the window are not written.
  std::mt19937 rng(10);
  Fft fft;
  RowConvolution conv;
  const int lengths[][2] = {{404, 72}, {440, 72}, {365, 71}, {64, 64}, {100, 7}, {9, 30}};
  for (const auto& lL : lengths) {
    const int64_t length = lL[0], L = lL[1], taps = 2 * L + 1, first = L - 1, end = L + length + 2;
    const auto a = random_row(size_t(length), rng), b = random_row(size_t(length), rng),
               f = random_row(size_t(taps), rng);
    const int64_t whole = convolution_size(length, taps), window = convolution_size(length, taps, first, end);
    CAPTURE(length);
    CAPTURE(L);
    CHECK(window <= whole);
    CHECK(window >= end);
    CHECK(window >= length + L + 1);
    REQUIRE(fft.plan(window) == Status::Ok);
    const double* filters[1] = {f.data()};
    REQUIRE(conv.prepare(fft, filters, 1, taps, length, first, end) == Status::Ok);
    const size_t out = size_t(length + taps - 1);
    std::vector<double> got_a(out, -99.0), got_b(out, -99.0);
    conv.apply(a.data(), b.data(), 1, got_a.data(), got_b.data(), 1);
    const auto want_a = naive_convolution(a, f), want_b = naive_convolution(b, f);
    double scale = 0, err = 0;
    for (size_t k = 0; k < out; ++k) {
      const bool read = int64_t(k) >= first && int64_t(k) < end;
      if (!read) {
        CHECK(got_a[k] == -99.0);
        CHECK(got_b[k] == -99.0);
        continue;
      }
      scale = std::max(scale, std::fabs(want_a[k]));
      err = std::max({err, std::fabs(got_a[k] - want_a[k]), std::fabs(got_b[k] - want_b[k])});
    }
    CHECK(err < 1e-13 * scale);
  }
  // {404, 72}: the whole pass's transform has 1,024 points, the window's 512.
  CHECK(convolution_size(404, 145) == 1024);
  CHECK(convolution_size(404, 145, 71, 478) == 512);
}

TEST_CASE("FFT transform: forward then inverse returns n times the input; an impulse's transform, bit-reversed") {
  std::mt19937 rng(9);
  Fft fft;
  REQUIRE(fft.plan(1 << 15) == Status::Ok);
  // Sizes past 2^11 values run their first stages on the whole array and the rest block by block.
  for (const int64_t n : {1, 2, 4, 8, 64, 1024, 4096, 1 << 15}) {
    std::vector<double> z(size_t(2 * n)), keep;
    for (auto& v : z) v = std::uniform_real_distribution<double>(-1, 1)(rng);
    keep = z;
    fft.forward(z.data(), n);
    fft.inverse(z.data(), n);
    double err = 0;
    for (size_t k = 0; k < z.size(); ++k) err = std::max(err, std::fabs(z[k] / double(n) - keep[k]));
    CAPTURE(n);
    CHECK(err < 1e-14);
    // X_k of x = δ₁ is e^{−2πik/n}: checks each twiddle's angle and sign, not only that the inverse undoes them.
    std::fill(z.begin(), z.end(), 0.0);
    if (n > 1) {
      z[2] = 1;
      fft.forward(z.data(), n);
      double worst = 0;
      for (int64_t k = 0; k < n; ++k) {
        const double angle = -2 * std::acos(-1.0) * double(k) / double(n);
        const size_t at = bit_reversed(k, n);
        worst = std::max({worst, std::fabs(z[2 * at] - std::cos(angle)), std::fabs(z[2 * at + 1] - std::sin(angle))});
      }
      CHECK(worst < 1e-14);
    }
  }
}

TEST_CASE("a 2-D convolution's direct passes match the double loop") {
  // Both passes direct (the column pass weighs whole rows, SIMD along them): each output the sum over m = −L … L of
  // tap[m]·in, m ascending from +0, as written here (natively the compiler may fuse a product into its sum, so to
  // rounding: 1e-15 of the terms' magnitudes); odd widths leave a scalar tail, L > nodes − 1 cuts the taps.
  std::mt19937 rng(5);
  for (const int64_t g1 : {3, 19, 40})
    for (const int64_t g2 : {1, 7, 33})
      for (const int64_t L : {0, 2, 9}) {
        Axis x1, x2;
        x1.nodes = g1;
        x1.L = L;
        x1.E = g1 + 2 * L;
        x2.nodes = g2;
        x2.L = L + 1;
        x2.E = g2 + 2 * x2.L;
        const std::vector<double> in = random_row(size_t(g1 * g2), rng), t1 = random_row(size_t(2 * x1.L + 1), rng),
                                  t2 = random_row(size_t(2 * x2.L + 1), rng);
        std::vector<double> across(size_t(x1.E * g2)), out(size_t(x1.E * x2.E * 3), -7.0);
        FftWork work;
        REQUIRE(convolve(in.data(), x1, x2, t1.data(), t2.data(), across.data(), out.data(), 3, &work) == Status::Ok);
        std::vector<double> rows(size_t(x1.E * g2)), row_size(rows.size());
        for (int64_t b = 0; b < g2; ++b)
          for (int64_t e = 0; e < x1.E; ++e) {
            double acc = 0, size = 0;
            for (int64_t m = -x1.L; m <= x1.L; ++m) {
              const int64_t g = e - x1.L + m;
              if (g < 0 || g >= g1) continue;
              acc += t1[size_t(m + x1.L)] * in[size_t(g + g1 * b)];
              size += std::fabs(t1[size_t(m + x1.L)] * in[size_t(g + g1 * b)]);
            }
            rows[size_t(e + x1.E * b)] = acc;
            row_size[size_t(e + x1.E * b)] = size;
          }
        bool same = true;
        for (int64_t e2 = 0; e2 < x2.E; ++e2)
          for (int64_t e1 = 0; e1 < x1.E; ++e1) {
            double acc = 0, size = 0;
            for (int64_t m = -x2.L; m <= x2.L; ++m) {
              const int64_t g = e2 - x2.L + m;
              if (g < 0 || g >= g2) continue;
              acc += t2[size_t(m + x2.L)] * rows[size_t(e1 + x1.E * g)];
              size += std::fabs(t2[size_t(m + x2.L)]) * row_size[size_t(e1 + x1.E * g)];
            }
            same = same && std::fabs(out[size_t(held_node(x1, x2, e1, e2) * 3)] - acc) <= 1e-15 * size;
          }
        CAPTURE(g1);
        CAPTURE(g2);
        CAPTURE(L);
        CHECK(same);
      }
}
