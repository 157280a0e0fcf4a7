// The WebAssembly modules' log, sin, cos, sincos and tan: the table-free ones of base/math.h in place of musl's
// table-driven ones (10 kB gzip of the download; issue 21). Every call in the core, std::log included, lands here.
#include "base/math.h"

extern "C" {
double log(double x) { return ka::math::log(x); }
double sin(double x) { return ka::math::sin(x); }
double cos(double x) { return ka::math::cos(x); }
double tan(double x) { return ka::math::tan(x); }
void sincos(double x, double* s, double* c) { ka::math::sin_cos(x, s, c); }
}
