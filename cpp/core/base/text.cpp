// format_text (text.h).
#include "base/text.h"

#include <cmath>
#include <cstdarg>
#include <cstdint>

namespace ka {
namespace {

struct Out {
  char* p;
  char* end;  // the last byte, kept for the terminator
  void put(char c) {
    if (p < end) *p++ = c;
  }
  void put(const char* s) {
    while (*s) put(*s++);
  }
  void digits(uint64_t n, int at_least = 1) {  // n in decimal, zero-padded to at_least digits
    char buf[24];
    int k = 0;
    do {
      buf[k++] = char('0' + n % 10);
      n /= 10;
    } while (n || k < at_least);
    while (k) put(buf[--k]);
  }
};

// 10^k for 0 <= k <= 22: exact in a double, so that scaling by it rounds once.
double power10(int k) {
  double p = 1;
  while (k-- > 0) p *= 10;
  return p;
}

// The rounding error of p = a·b (a·b = p + error exactly), by Dekker's product: wasm has no fused multiply-add.
double product_error(double a, double b, double p) {
  const auto split = [](double x, double& hi, double& lo) {
    const double c = 134217729.0 * x;  // 2^27 + 1
    hi = c - (c - x);
    lo = x - hi;
  };
  double ah, al, bh, bl;
  split(a, ah, al);
  split(b, bh, bl);
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

// v · 10^shift rounded to an integer as printf rounds the exact value (ties to even), for 0 <= v and a result below
// 2^52: the scaled double rounds once, and only when it lands on a tie does the sign of its rounding error decide.
uint64_t round_scaled(double v, int shift) {
  const double ten = power10(shift >= 0 ? shift : -shift);
  double p, above;  // above: the sign of the exact value minus p
  if (shift >= 0) {
    p = v * ten;
    above = product_error(v, ten, p);
  } else {
    p = v / ten;
    const double back = p * ten;
    above = (v - back) - product_error(p, ten, back);  // v - back is exact: back is within a factor 2 of v
  }
  const double down = std::floor(p);
  if (p - down == 0.5 && above != 0) return uint64_t(above > 0 ? down + 1 : down);
  return uint64_t(std::nearbyint(p));
}

// |v| rounded to `decimals` places, as integer part and fraction digits: decimals <= 15 and |v| < 2^52 / 10^decimals.
void fixed(Out& o, double v, int decimals) {
  if (!std::isfinite(v)) return o.put(std::isnan(v) ? "nan" : "inf");
  const uint64_t scaled = round_scaled(v, decimals);
  const uint64_t unit = uint64_t(power10(decimals));
  o.digits(scaled / unit);
  if (decimals > 0) {
    o.put('.');
    o.digits(scaled % unit, decimals);
  }
}

// printf's %g (six significant digits, trailing zeros dropped; exponent form below 1e-4 and from 1e6).
void general(Out& o, double v) {
  if (std::isnan(v)) return o.put("nan");
  if (v < 0 || (v == 0 && std::signbit(v))) {
    o.put('-');
    v = -v;
  }
  if (std::isinf(v)) return o.put("inf");
  if (v == 0) return o.put('0');
  constexpr int kDigits = 6;
  int exponent = int(std::floor(std::log10(v)));
  // The six significant digits as an integer; log10 may be one off near a power of ten, and rounding may carry.
  const auto mantissa = [&](int e) { return round_scaled(v, kDigits - 1 - e); };
  uint64_t m = mantissa(exponent);
  if (m >= 1000000) m = mantissa(++exponent);
  if (m < 100000) m = mantissa(--exponent);
  if (m >= 1000000) {  // 999999.5 and the like: the carry makes one more digit
    m /= 10;
    ++exponent;
  }
  char d[kDigits];
  for (int k = kDigits - 1; k >= 0; --k, m /= 10) d[k] = char('0' + m % 10);
  int last = kDigits - 1;  // the last digit kept: trailing zeros go
  while (last > 0 && d[last] == '0') --last;
  if (exponent < -4 || exponent >= kDigits) {
    o.put(d[0]);
    if (last > 0) o.put('.');
    for (int k = 1; k <= last; ++k) o.put(d[k]);
    o.put('e');
    o.put(exponent < 0 ? '-' : '+');
    o.digits(uint64_t(exponent < 0 ? -exponent : exponent), 2);
  } else if (exponent < 0) {
    o.put("0.");
    for (int k = exponent + 1; k < 0; ++k) o.put('0');
    for (int k = 0; k <= last; ++k) o.put(d[k]);
  } else {
    for (int k = 0; k <= exponent; ++k) o.put(d[k]);
    if (last > exponent) o.put('.');
    for (int k = exponent + 1; k <= last; ++k) o.put(d[k]);
  }
}

}  // namespace

void format_text(char* out, size_t size, const char* format, ...) {
  if (size == 0) return;
  Out o{out, out + size - 1};
  va_list args;
  va_start(args, format);
  for (const char* f = format; *f; ++f) {
    if (*f != '%') {
      o.put(*f);
      continue;
    }
    ++f;
    if (*f == '%') {
      o.put('%');
    } else if (*f == 's') {
      o.put(va_arg(args, const char*));
    } else if (f[0] == 'l' && f[1] == 'l' && f[2] == 'd') {
      f += 2;
      const long long n = va_arg(args, long long);
      if (n < 0) o.put('-');
      o.digits(n < 0 ? 0 - uint64_t(n) : uint64_t(n));
    } else if (*f == 'g') {
      general(o, va_arg(args, double));
    } else if (f[0] == '.' && f[1] >= '0' && f[1] <= '9' && f[2] == 'f') {
      const int decimals = f[1] - '0';
      f += 2;
      double v = va_arg(args, double);
      if (v < 0) {
        o.put('-');
        v = -v;
      }
      fixed(o, v, decimals);
    } else {
      break;  // a conversion this subset lacks: a programming error, caught by the tests
    }
  }
  va_end(args);
  *o.p = 0;
}

}  // namespace ka
