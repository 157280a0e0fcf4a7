// sin, cos and tan without tables. musl's (the WebAssembly C library) reduce large arguments by Payne–Hanek with a
// table of 2/π's bits: with their kernels, 5.5 kB gzip of the module (issue 21, download size), so the WebAssembly
// modules link these in their place (cpp/bindings/libm.cpp); native builds keep the system's. (A table-free log saved
// 4 kB more but cost 1.14x where a compact kernel's double path takes a log per pair: musl's log stays.)
//
// Accuracy, measured against the C library in tests/cpp/math_test.cpp: sin and cos within 1 ulp for |x| up to
// 2^20·π/2 (1.6e6), tan within 2. Beyond that the reduction by π/2 errs by about one ulp of x, the argument's own
// rounding: the phase of such an argument is not known any better.
#pragma once

namespace ka::math {

double sin(double x);
double cos(double x);
double tan(double x);
void sin_cos(double x, double* s, double* c);

}  // namespace ka::math
