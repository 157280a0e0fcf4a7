// The WebAssembly modules' sin, cos, sincos and tan: the table-free ones of base/math.h in place of musl's, whose
// large-argument reduction carries a table (5.5 kB gzip of the download; issue 21). Every call in the core lands here.
#include "base/math.h"

extern "C" {
double sin(double x) { return ka::math::sin(x); }
double cos(double x) { return ka::math::cos(x); }
double tan(double x) { return ka::math::tan(x); }
void sincos(double x, double* s, double* c) { ka::math::sin_cos(x, s, c); }
}
